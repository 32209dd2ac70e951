"""``cardhall phh``: PHH hand histories.

``cardhall phh replay PATH... [--json] [--reference] [--expected FILE | --no-expected]``
replays every hand of the ``.phh``/``.phhs`` files named, and of those under
the folders named, through our engines (``cardhall.engine.replay``) and prints
one line per hand: its status (``match``, ``mismatch``, ``unchecked``,
``illegal``, ``error``) and the detail. ``--json`` prints one JSON object per
hand instead: ``file``, ``hand`` (the ``.phhs`` section, else the file's
``hand`` field, else null), ``status``, ``detail``, ``stacks``, ``expected``,
``notes``. ``--reference`` also plays each hand through pokerkit (the PHH
reference implementation; the ``bench`` extra) and says whether our finishing
stacks equal pokerkit's.

Expected differences (:mod:`cardhall.clients.commands.phh_expected`): with an
expectations file, named by ``--expected`` or found for the hands' folder (a
``phh-expected.toml`` there, or the one cardhall ships for a folder with a
README.md such as ``../shared/phh``), each ``mismatch`` is reported as
``expected`` (with the reason) when it is the difference the file describes,
else ``unexpected``; stderr names each file used (``expectations: FILE``), the summary
counts ``match``, expected differences, ``unexpected``, ``unchecked``,
``illegal``, ``error``; in ``--json`` a hand an expectation names has
``expectation`` (``kind``, ``reason``, ``holds``) and a mismatch has
``difference`` (``expected`` or ``unexpected``). ``--no-expected``: none used.

Exit status: 0 when every hand is legal and none mismatches unexpectedly (all
``match``, ``unchecked`` or expected differences), 1 otherwise, 2 for a path
that does not exist or an expectations file that cannot be read.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from cardhall.clients.commands import phh_expected
from cardhall.engine import phh
from cardhall.engine.replay import STATUSES, ReplayResult, replay_hand


def register(subparsers: Any) -> None:
    """Add ``phh`` and its ``replay`` subcommand."""
    parser = subparsers.add_parser("phh", help="PHH hand histories: replay real hands through the engines")
    sub = parser.add_subparsers(dest="phh_command", required=True, metavar="SUBCOMMAND")
    replay = sub.add_parser(
        "replay",
        help="replay .phh/.phhs files and folders; check finishing stacks",
        description="Replay every hand through the engines under the phh rule profile and compare the "
        "finishing stacks. Exit status 0 when every hand is legal and none mismatches.",
    )
    replay.add_argument("paths", nargs="+", metavar="PATH", help=".phh or .phhs file, or a folder (searched recursively)")
    replay.add_argument("--json", action="store_true", help="one JSON object per hand")
    replay.add_argument("--reference", action="store_true",
                        help="also play each hand through pokerkit and compare our stacks with its")
    which = replay.add_mutually_exclusive_group()
    which.add_argument("--expected", metavar="FILE", type=Path,
                       help="expectations file (TOML) naming the expected differences; default: the one found "
                       f"for the hands' folder ({phh_expected.BESIDE}, or the one shipped for its README.md)")
    which.add_argument("--no-expected", action="store_true", help="report every difference as a mismatch")
    replay.set_defaults(func=run_replay)


def _hand_label(section: str | None, hand: dict[str, Any]) -> Any:
    if section is not None:
        return section
    return hand.get("hand")


def _reference(hand: dict[str, Any], result: ReplayResult) -> dict[str, Any]:
    from cardhall.clients.bench import pokerkit_ref

    try:
        stacks = pokerkit_ref.replay(hand)
    except Exception as exc:  # pokerkit's own refusal, reported not raised
        return {"agrees": False, "detail": f"pokerkit refuses the hand: {exc}"}
    ours = result.stacks
    agrees = ours is not None and len(ours) == len(stacks) and all(a == b for a, b in zip(ours, stacks))
    shown = [int(s) if s == int(s) else float(s) for s in stacks]
    return {"agrees": agrees, "stacks": shown}


def run_replay(args: argparse.Namespace) -> int:
    """Replay the hands under ``args.paths``; returns the exit status."""
    try:
        files = list(phh.find_files(args.paths))
    except FileNotFoundError as exc:
        print(f"cardhall phh replay: {exc}", file=sys.stderr)
        return 2
    if args.reference:
        from cardhall.clients.bench import pokerkit_ref

        try:
            pokerkit_ref.require()
        except RuntimeError as exc:
            print(f"cardhall phh replay: {exc}", file=sys.stderr)
            return 2
    try:
        expectations = _expectations(args)
    except ValueError as exc:
        print(f"cardhall phh replay: {exc}", file=sys.stderr)
        return 2
    for found in expectations:
        print(f"cardhall phh replay: expectations: {found.source}" + (f" (for {found.root})" if found.root else ""),
              file=sys.stderr)
    counts = dict.fromkeys(STATUSES, 0)
    verdicts = {"expected": 0, "unexpected": 0}
    disagreements = 0
    for path in files:
        entries: list[tuple[Any, ReplayResult, dict[str, Any] | None]]
        try:
            hands = phh.load_file(path)
        except (OSError, UnicodeDecodeError, phh.PHHError) as exc:
            entries = [(None, ReplayResult("error", f"cannot read the file: {exc}"), None)]
        else:
            entries = [(_hand_label(section, hand), replay_hand(hand), hand) for section, hand in hands]
        for label, result, hand in entries:
            counts[result.status] += 1
            reference = _reference(hand, result) if args.reference and hand is not None else None
            if reference is not None and not reference["agrees"]:
                disagreements += 1
            judged = _judge(expectations, path, label, hand, result)
            if judged.verdict is not None:
                verdicts[judged.verdict] += 1
            _print(path, label, result, reference, args.json, judged)
    if not args.json:
        total = sum(counts.values())
        summary = ", ".join(f"{counts[s]} {s}" for s in STATUSES)
        if expectations:
            summary = (f"{counts['match']} match, {verdicts['expected']} expected differences, "
                       f"{verdicts['unexpected']} unexpected, {counts['unchecked']} unchecked, "
                       f"{counts['illegal']} illegal, {counts['error']} error")
        line = f"{total} hand{'s' if total != 1 else ''} in {len(files)} file{'s' if len(files) != 1 else ''}: {summary}"
        if args.reference:
            line += f"; pokerkit disagrees on {disagreements}"
        print(line)
    mismatches = counts["mismatch"] - verdicts["expected"]
    bad = mismatches + counts["illegal"] + counts["error"]
    return 0 if bad == 0 else 1


def _expectations(args: argparse.Namespace) -> list[phh_expected.Expectations]:
    """The expectations the command uses (none with ``--no-expected``); notes
    about a README it cannot use go to stderr. Raises ValueError for a file
    that cannot be read."""
    if args.no_expected:
        return []
    if args.expected is not None:
        return [phh_expected.load(args.expected)]
    found, notes = phh_expected.find(Path(p) for p in args.paths)
    for note in notes:
        print(f"cardhall phh replay: {note}", file=sys.stderr)
    return found


class _Judged:
    """What the expectations say of one hand: ``entry`` (the expectation
    naming it, or None), ``holds`` (its difference is the one described),
    ``verdict`` (``expected``/``unexpected`` for a mismatch while
    expectations are in use, else None)."""

    __slots__ = ("entry", "holds", "verdict")

    def __init__(self, entry: phh_expected.Expected | None, holds: bool, verdict: str | None) -> None:
        self.entry, self.holds, self.verdict = entry, holds, verdict


def _judge(expectations: list[phh_expected.Expectations], path: Path, label: Any, hand: dict[str, Any] | None,
           result: ReplayResult) -> _Judged:
    entry = next((e for found in expectations if (e := found.lookup(path, label)) is not None), None)
    holds = entry is not None and phh_expected.holds(entry, hand, result)
    verdict = None
    if expectations and result.status == "mismatch":
        verdict = "expected" if holds else "unexpected"
    return _Judged(entry, holds, verdict)


def _print(path: Path, label: Any, result: ReplayResult, reference: dict[str, Any] | None, as_json: bool,
           judged: _Judged) -> None:
    entry = judged.entry
    if as_json:
        out = {"file": str(path), "hand": label, **result.to_data()}
        if reference is not None:
            out["pokerkit"] = reference
        if entry is not None:
            out["expectation"] = {"kind": entry.kind, "reason": entry.reason, "holds": judged.holds}
        if judged.verdict is not None:
            out["difference"] = judged.verdict
        print(json.dumps(out, ensure_ascii=False))
        return
    name = str(path) if label is None or not str(path).endswith(".phhs") else f"{path} [{label}]"
    line = f"{judged.verdict or result.status:<9} {name}: {result.detail}"
    if entry is not None and judged.holds:
        line += f"  [expected: {entry.reason}]"
    elif entry is not None and result.status == "match":
        line += f"  [a difference was expected ({entry.kind}), but it matches]"
    elif entry is not None:
        line += f"  [not the expected difference: {entry.reason}]"
    if reference is not None:
        line += "  [pokerkit agrees]" if reference["agrees"] else f"  [POKERKIT DISAGREES: {reference.get('stacks', reference.get('detail'))}]"
    print(line)
