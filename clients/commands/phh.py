"""``cardhall phh``: PHH hand histories.

``cardhall phh replay PATH... [--json] [--reference]`` replays every hand of
the ``.phh``/``.phhs`` files named, and of those under the folders named,
through our engines (``cardhall.engine.replay``) and prints one line per hand: its
status (``match``, ``mismatch``, ``unchecked``, ``illegal``, ``error``) and
the detail. ``--json`` prints one JSON object per hand instead: ``file``,
``hand`` (the ``.phhs`` section, else the file's ``hand`` field, else null),
``status``, ``detail``, ``stacks``, ``expected``, ``notes``. ``--reference``
also plays each hand through pokerkit (the PHH reference implementation; the
``bench`` extra) and says whether our finishing stacks equal pokerkit's.

Exit status: 0 when every hand is legal and none mismatches (all ``match`` or
``unchecked``), 1 otherwise, 2 for a path that does not exist.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

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
    counts = dict.fromkeys(STATUSES, 0)
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
            _print(path, label, result, reference, args.json)
    if not args.json:
        total = sum(counts.values())
        summary = ", ".join(f"{counts[s]} {s}" for s in STATUSES)
        line = f"{total} hand{'s' if total != 1 else ''} in {len(files)} file{'s' if len(files) != 1 else ''}: {summary}"
        if args.reference:
            line += f"; pokerkit disagrees on {disagreements}"
        print(line)
    bad = counts["mismatch"] + counts["illegal"] + counts["error"]
    return 0 if bad == 0 else 1


def _print(path: Path, label: Any, result: ReplayResult, reference: dict[str, Any] | None, as_json: bool) -> None:
    if as_json:
        out = {"file": str(path), "hand": label, **result.to_data()}
        if reference is not None:
            out["pokerkit"] = reference
        print(json.dumps(out, ensure_ascii=False))
        return
    name = str(path) if label is None or not str(path).endswith(".phhs") else f"{path} [{label}]"
    line = f"{result.status:<9} {name}: {result.detail}"
    if reference is not None:
        line += "  [pokerkit agrees]" if reference["agrees"] else f"  [POKERKIT DISAGREES: {reference.get('stacks', reference.get('detail'))}]"
    print(line)
