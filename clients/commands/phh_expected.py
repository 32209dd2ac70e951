"""Expected differences of a collection of PHH hands, for ``cardhall phh replay``.

A collection of real hands may come with a README saying which of its files a
correct replay does not match, and why (``../shared/phh/README.md``: split
pots recorded in half chips, a file whose ante trimming is wrong, one without
finishing stacks). An *expectations file* says the same in TOML: one
``[[hand]]`` table per file, with ``path`` (relative to the collection's
folder, ``/``-separated), ``kind`` (a key of :data:`KINDS`) and optionally
``reason`` (a sentence said instead of the kind's own) and ``hand`` (the
``.phhs`` section meant); ``phh-expected-shared.toml`` beside this module is one.

Where the command finds one (:func:`find`), for each path it replays: the
nearest folder at or above it holding ``phh-expected.toml`` or a
``README.md``; a ``phh-expected.toml`` there is used; for a ``README.md``,
the expectations shipped with cardhall (``phh-expected-*.toml`` beside this
module; ``phh-expected-shared.toml`` transcribes ``../shared/phh/README.md``)
whose every file exists under that folder. ``--expected FILE`` names one
instead; its paths then match any hand file whose path ends with them.

An expectation is granted only when the difference is the one its kind
describes (:func:`holds`): a half-chip file with a stack altered otherwise is
an unexpected difference.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path, PurePosixPath
from typing import Any

from cardhall.engine.replay import ReplayResult, replay_hand

#: the name of an expectations file kept beside the hands
BESIDE = "phh-expected.toml"
#: the expectations shipped with cardhall, recognised by their files
SHIPPED = sorted(Path(__file__).parent.glob("phh-expected-*.toml"))

#: kind -> what the difference is, as the command says it
KINDS = {
    "half_chip": "a split pot recorded in half chips: a whole-chip replay pays the odd chip to one winner, "
                 "each differing stack 0.5 away",
    "ante_trimming": "the file says ante_trimming_status = true, but its finishing stacks are reached only "
                     "with ante trimming off (replayed so, they match)",
    "no_finishing_stacks": "the file records no finishing stacks: only the actions' legality is checked",
}


@dataclass(frozen=True)
class Expected:
    """One hand's expected difference: ``path`` (relative, ``/``-separated),
    ``kind`` (a key of :data:`KINDS`), ``reason`` (one sentence), ``hand``
    (the ``.phhs`` section it names, None: every hand of the file)."""

    path: PurePosixPath
    kind: str
    reason: str
    hand: str | None = None


@dataclass
class Expectations:
    """The expected differences of one expectations file: ``entries``;
    ``root``, the folder their paths are relative to (None: a path matches
    any hand file ending with it); ``source``, the file read."""

    entries: list[Expected]
    root: Path | None
    source: Path

    def lookup(self, file: Path, label: Any) -> Expected | None:
        """The entry for the hand ``label`` of ``file``, or None."""
        parts = file.resolve().parts
        if self.root is not None:
            root = self.root.resolve().parts
            if parts[:len(root)] != root:
                return None
            parts = parts[len(root):]
        for entry in self.entries:
            if entry.hand is not None and str(label) != entry.hand:
                continue
            wanted = entry.path.parts
            if (parts == wanted) if self.root is not None else (parts[len(parts) - len(wanted):] == wanted):
                return entry
        return None


def load(source: Path, root: Path | None = None) -> Expectations:
    """Read expectations file ``source`` (its paths relative to ``root``).
    Raises ValueError naming the file and the problem (unreadable, not TOML,
    a ``[[hand]]`` without a relative ``path`` or with an unknown ``kind``)."""
    try:
        data = tomllib.loads(source.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"{source}: cannot read the expectations: {exc}") from None
    hands = data.get("hand")
    if not isinstance(hands, list) or not hands:
        raise ValueError(f"{source}: no [[hand]] tables")
    entries = []
    for i, item in enumerate(hands, 1):
        path, kind = item.get("path"), item.get("kind")
        if not isinstance(path, str) or not path or PurePosixPath(path).is_absolute() or ".." in path.split("/"):
            raise ValueError(f"{source}: hand {i}: path must be a relative path inside the folder, not {path!r}")
        if kind not in KINDS:
            raise ValueError(f"{source}: hand {i} ({path}): kind must be one of {', '.join(KINDS)}, not {kind!r}")
        reason = item.get("reason", KINDS[kind])
        hand = item.get("hand")
        entries.append(Expected(PurePosixPath(path), kind, str(reason), None if hand is None else str(hand)))
    return Expectations(entries, root, source)


def find(paths: Iterable[Path]) -> tuple[list[Expectations], list[str]]:
    """The expectations for the hands under ``paths`` (the module docstring),
    each file once, and notes for the user: a README.md that seems to list
    expected results (it names ``finishing_stacks``) but no expectations file
    is known for. Raises ValueError for an expectations file that cannot be read."""
    found: dict[Path, Expectations] = {}
    notes: list[str] = []
    for path in paths:
        folder = collection_folder(path)
        if folder is None or folder in found:
            continue
        if (folder / BESIDE).is_file():
            found[folder] = load(folder / BESIDE, folder)
            continue
        for shipped in SHIPPED:
            candidate = load(shipped, folder)
            if all((folder / e.path).is_file() for e in candidate.entries):
                found[folder] = candidate
                break
        else:
            readme = folder / "README.md"
            if "finishing_stacks" in readme.read_text(encoding="utf-8", errors="replace"):
                note = (f"{readme} may list expected results, but no expectations file is known for it: "
                        f"write one ({BESIDE} beside it, or pass --expected FILE)")
                if note not in notes:
                    notes.append(note)
    return list(found.values()), notes


def collection_folder(path: Path) -> Path | None:
    """The nearest folder at or above ``path`` holding :data:`BESIDE` or a README.md, or None."""
    folder = path.resolve()
    if not folder.is_dir():
        folder = folder.parent
    for candidate in (folder, *folder.parents):
        if (candidate / BESIDE).is_file() or (candidate / "README.md").is_file():
            return candidate
    return None


def holds(entry: Expected, hand: dict[str, Any] | None, result: ReplayResult) -> bool:
    """Whether ``result`` (the replay of ``hand``) differs from the file
    exactly as ``entry``'s kind describes."""
    if entry.kind == "no_finishing_stacks":
        return result.status == "unchecked"
    if result.status != "mismatch" or hand is None or result.stacks is None or result.expected is None:
        return False
    if entry.kind == "half_chip":
        if len(result.stacks) != len(result.expected):
            return False
        diffs = [Decimal(ours) - Decimal(str(theirs)) for ours, theirs in zip(result.stacks, result.expected)]
        return sum(diffs) == 0 and all(abs(d) == Decimal("0.5") for d in diffs if d)
    if entry.kind == "ante_trimming":
        return bool(hand.get("ante_trimming_status")) and \
            replay_hand({**hand, "ante_trimming_status": False}).status == "match"
    return False
