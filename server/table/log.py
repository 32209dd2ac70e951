"""The input log: each step a table applied, as data a replay applies again.

A table's checkpoints between two full states are its log (``server/STORAGE.md``,
"The input log"): the machine is deterministic given its inputs, the time of
each step and what it drew from outside, so an entry holds exactly those:

* ``n``: the entry's number (1, 2, ... over the table's life; a full state
  stores the number of the last entry it covers as ``log``);
* ``w``, ``m``: the step's :class:`~cardhall.server.table.inputs.Now` (Unix
  and monotonic seconds, as the table saw them);
* ``i``: the inputs in order, each as :func:`input_data` gives it (a request's
  ``re`` and arrival time are left out: they shape replies and metrics, never
  the table);
* ``d`` (when any): the server seeds the step drew from the OS (G-2), hex;
* ``b`` (when any): each bot move the step made, ``[action, generator
  position after it]``: a bot's choice is taken from the log, not computed
  again (NL-5 bots may simulate; a replay only applies);
* ``h`` (only with ``Settings.verify_replay``): a digest of the table's state
  after the step, which recovery compares with the replay's.

The timeout action of a clock that ran out or of a sitting-out seat is not
stored: it is a function of the engine's state (G-3), computed again.

>>> from cardhall.server.table.inputs import Act
>>> input_data(Act(7, "p_1", re=3, action={"type": "fold"}, turn=12, received=5.0))
['a', 7, 'p_1', {'type': 'fold'}, 12]
>>> input_from_data(['a', 7, 'p_1', {'type': 'fold'}, 12])
Act(sub=7, player='p_1', re=None, action={'type': 'fold'}, turn=12, received=None)
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

from cardhall.server.table.inputs import (
    Act,
    AutoDue,
    BotDue,
    Chat,
    ClockDue,
    Close,
    Disconnect,
    Input,
    Join,
    Leave,
    OwnerAway,
    Rearm,
    RematchDue,
    Rename,
    SeatRequestDue,
    ServiceStopping,
    Start,
    StepDue,
    StoreBack,
    StoreFailed,
    StoreRejected,
    StoreWritten,
)
from cardhall.server.table.subscribers import key_from_stored, stored_key

Data = dict[str, Any]


class ReplayError(ValueError):
    """A log that cannot be replayed: a gap, an entry the machine cannot
    read, a draw or bot move missing, or a log written by other code."""


#: input type -> (code, its fields in the entry)
_FIELDS: dict[type, tuple[str, tuple[str, ...]]] = {
    Join: ("j", ("sub", "player", "name", "role", "seat", "seed", "since", "ask", "invited", "password_ok")),
    Act: ("a", ("sub", "player", "action", "turn")),
    Chat: ("c", ("sub", "player", "name", "text")),
    Leave: ("l", ("sub", "player")),
    Disconnect: ("d", ("sub",)),
    Rename: ("n", ("player", "name")),
    Close: ("x", ("reason",)),
    Start: ("s", ()),
    Rearm: ("r", ()),
    OwnerAway: ("o", ()),
    ServiceStopping: ("q", ()),
    StoreFailed: ("F", ("reason",)),
    StoreWritten: ("W", ()),
    StoreBack: ("B", ()),
    StoreRejected: ("R", ("reason",)),
    ClockDue: ("C", ("turn_id", "at")),
    BotDue: ("b", ("turn_id", "at")),
    AutoDue: ("A", ("turn_id", "at")),
    StepDue: ("S", ("step_id", "at")),
    RematchDue: ("M", ("match", "at")),
    SeatRequestDue: ("Q", ("at",)),
}
_TYPES: dict[str, tuple[type, tuple[str, ...]]] = {code: (cls, fields) for cls, (code, fields) in _FIELDS.items()}


def input_data(inp: Input) -> list[Any]:
    """``inp`` as a list: its code, then its fields (see the module docstring)."""
    code, fields = _FIELDS[type(inp)]
    return [code, *(stored_key(getattr(inp, f)) if f == "sub" else getattr(inp, f) for f in fields)]


def input_from_data(data: Any) -> Input:
    """The input :func:`input_data` gave ``data`` for; :class:`ReplayError` otherwise."""
    if not isinstance(data, list) or not data or data[0] not in _TYPES:
        raise ReplayError(f"not a logged input: {data!r}"[:200])
    cls, fields = _TYPES[data[0]]
    if len(data) != len(fields) + 1:
        raise ReplayError(f"logged input {data[0]!r} has {len(data) - 1} fields, not {len(fields)}")
    values = dict(zip(fields, data[1:]))
    if "sub" in values:
        values["sub"] = key_from_stored(values["sub"])
    inp: Input = cls(**values)
    return inp


class Recorder:
    """What one step draws from outside the machine, recorded (live) or
    played back (replay): server seeds (G-2) and bot moves (NL-5).

    Live (``entry`` None), :meth:`seed` calls ``entropy`` and :meth:`bot_move`
    calls ``choose``; each result is kept in :attr:`seeds`/:attr:`moves` for
    the step's entry. Replaying, both return the entry's values in order
    (:class:`ReplayError` when there are fewer than the step asks for).
    """

    __slots__ = ("_moves", "_seeds", "moves", "seeds")

    def __init__(self, entry: Data | None = None) -> None:
        self.seeds: list[str] = []
        self.moves: list[list[Any]] = []
        self._seeds = list(entry.get("d", ())) if entry is not None else None
        self._moves = list(entry.get("b", ())) if entry is not None else None

    def seed(self, entropy: Callable[[], bytes]) -> bytes:
        """A new server seed: drawn from ``entropy`` and kept, or the logged one."""
        if self._seeds is None:
            seed = entropy()
            self.seeds.append(seed.hex())
            return seed
        if not self._seeds:
            raise ReplayError("the replay draws a server seed the log does not hold")
        return bytes.fromhex(self._seeds.pop(0))

    def bot_move(self, choose: Callable[[], Data], position: Callable[[], int]) -> tuple[Data, int | None]:
        """A bot's action and its generator position after choosing: ``choose()``
        and ``position()`` kept (live, the position None: unchanged), or the
        logged pair (the caller moves the generator there)."""
        if self._moves is None:
            action = choose()
            self.moves.append([action, position()])
            return action, None
        if not self._moves:
            raise ReplayError("the replay makes a bot move the log does not hold")
        action, pos = self._moves.pop(0)
        return action, pos

    def finish(self) -> None:
        """Replaying: :class:`ReplayError` when the entry holds draws the step did not make."""
        if self._seeds or self._moves:
            raise ReplayError("the log holds draws or bot moves the replay did not make")


def entry(n: int, wall: float, mono: float, inputs: list[Input], recorder: Recorder) -> Data:
    """The log entry of step ``n`` (see the module docstring)."""
    out: Data = {"n": n, "w": wall, "m": mono, "i": [input_data(inp) for inp in inputs]}
    if recorder.seeds:
        out["d"] = recorder.seeds
    if recorder.moves:
        out["b"] = recorder.moves
    return out


@functools.cache
def code_version() -> str:
    """What a log's replay depends on: the installed cardhall's version and a
    digest of the sources of the rules (``engine/``, ``server/table/``). A
    log is replayed only by the code that wrote it (another version first
    writes a full state: ``server/STORAGE.md``, "The input log")."""
    try:
        release = metadata.version("cardhall")
    except metadata.PackageNotFoundError:
        release = "0"
    digest = hashlib.sha256()
    here = Path(__file__).resolve().parent
    for folder in (here.parent.parent / "engine", here):
        for path in sorted(folder.rglob("*.py")):
            digest.update(path.relative_to(folder).as_posix().encode())
            digest.update(path.read_bytes())
    return f"{release}+{digest.hexdigest()[:16]}"
