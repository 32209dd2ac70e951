"""Recovery by replay: a table's last full state with its input log applied
again gives exactly the state the table had after its last logged step
(``server/STORAGE.md``, "The input log").

The machine is rebuilt from the full state at the time that state was taken,
with what :func:`~cardhall.server.table.state.replay_context` kept (a running
clock exactly, the subscribers, the service's flags); each entry's inputs
are then stepped at the entry's time, its server seeds and bot moves played
back (:class:`~cardhall.server.table.log.Recorder`), and what the steps
would have sent is dropped. The result is the state as the table would have
written it after that step, clocks as the seconds left then.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cardhall.server.table import state
from cardhall.server.table.clock import TurnClock
from cardhall.server.table.inputs import Close, Now
from cardhall.server.table.log import Recorder, ReplayError, code_version, input_from_data
from cardhall.server.table.machine import TableMachine
from cardhall.server.table.subscribers import key_from_stored

Data = dict[str, Any]


def _no_entropy() -> bytes:
    raise ReplayError("a replay draws no randomness but the log's")


def replay(data: Data, entries: Sequence[Data]) -> tuple[Data, int]:
    """``(state, steps)``: the state after the entries of ``entries`` that
    follow ``data`` (a full state in the current format; entries numbered
    ``data["log"] + 1``, ``+ 2``, ... in order; earlier ones are skipped) and
    how many were applied (0: ``data`` itself is returned). Raises
    :class:`~cardhall.server.table.log.ReplayError` when the log has a gap,
    follows a state without a replay context, was written by other code
    (:func:`~cardhall.server.table.log.code_version`: a log is replayed only
    by the code that wrote it), holds an input or draw that does not fit, or
    (entries carrying a digest: ``Settings.verify_replay``) when a step's
    state differs from the one logged; ValueError/KeyError on a malformed state."""
    first = data["log"] + 1
    after = [e for e in entries if e.get("n", 0) >= first]
    if not after:
        return data, 0
    context = data.get("replay")
    if not isinstance(context, dict):
        raise ReplayError("an input log follows a state without a replay context")
    if context.get("version") != code_version():
        raise ReplayError(f"the input log was written by cardhall {context.get('version')}, "
                          f"not this {code_version()}: only the code that wrote it replays it")
    machine = TableMachine.from_data(data, Now(context["w"], context["m"]), entropy=_no_entropy)
    _resume(machine, context)
    expected = first
    for entry in after:
        if entry["n"] != expected:
            raise ReplayError(f"the input log has a gap: step {expected} is missing before {entry['n']}")
        now = Now(entry["w"], entry["m"])
        recorder = Recorder(entry)
        machine.step([input_from_data(inp) for inp in entry["i"]], now, recorder)
        recorder.finish()
        machine.take()
        logged = entry.get("h")
        if logged is not None and state.digest(machine, now.mono) != logged:
            raise ReplayError(f"the replay of step {entry['n']} gives another state than the table had")
        expected += 1
    return machine.to_data(after[-1]["m"]), len(after)


def _resume(machine: TableMachine, context: Data) -> None:
    """Put back what the full state's context kept beside the state."""
    clock = context.get("clock")
    if clock is not None:
        machine.clock = TurnClock(*clock)
    for key, viewer, *player in context.get("subs", ()):  # the player id: absent in older contexts
        machine.subscribers.subscribe(key_from_stored(key), viewer, player[0] if player else None)
    machine.service_stopping = bool(context.get("stopping"))
    machine.stalled = bool(context.get("stalled"))
    machine.deferred = [Close(reason) for reason in context.get("deferred", ())]
