"""The ``events`` frame of protocol 1.7 (SPEC "Batching and grouping") in the
schemas: each game's recorded events, grouped by step as a server groups them
for a client that said ``hello`` with ``group: true``, pass the core's union,
the game's ``events_frame`` and :class:`~cardhall.protocol.schemas.FrameValidator`
(alone and inside a ``batch``, each element checked as the ``event`` frame it
stands for); a frame that breaks the format does not. The conformance kit's
``events`` case expands to its own ``event`` case."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from cardhall.clients.client import expand_events
from cardhall.protocol.conformance import load
from cardhall.protocol.examples.record import example_games
from cardhall.protocol.schemas import BASE, FrameValidator, game_document, registry

EXAMPLES = Path(__file__).resolve().parents[2] / "protocol" / "examples"
GAMES = sorted(example_games())
ENVELOPE = ("type", "table", "seq", "ts")

Frame = dict[str, Any]


def _validator(ref: str) -> Draft202012Validator:
    return Draft202012Validator({"$ref": BASE + ref}, registry=registry())


def _grouped(frames: list[Frame]) -> list[Frame]:
    """``frames`` (server frames in order) with each run of ``event`` frames of
    one table, consecutive seqs and one ``ts`` as one ``events`` frame."""
    out: list[Frame] = []
    for frame in frames:
        last = out[-1] if out else None
        if frame["type"] != "event":
            out.append(frame)
            continue
        item = {k: v for k, v in frame.items() if k not in ENVELOPE}
        if (last is not None and last["type"] == "events" and last["table"] == frame["table"]
                and last["ts"] == frame["ts"] and last["seq"] + len(last["events"]) == frame["seq"]):
            last["events"].append(item)
        else:
            out.append({"type": "events", "table": frame["table"], "seq": frame["seq"], "ts": frame["ts"],
                        "events": [item]})
    return out


def _received(game: str, side: str) -> list[Frame]:
    """The frames ``side`` (``player`` or ``spectator``) received in the game's
    recorded hand, from its first ``table_created`` or ``snapshot`` on (the
    recorded ``welcome`` is the recording's minor version's)."""
    example = json.loads((EXAMPLES / f"{game}.json").read_text())
    frames = [e["recv"] for e in example[side] if "recv" in e]
    first = next(i for i, f in enumerate(frames) if f["type"] in ("table_created", "snapshot"))
    return copy.deepcopy(frames[first:])


@pytest.mark.parametrize("side", ["player", "spectator"])
@pytest.mark.parametrize("game", GAMES)
def test_a_recorded_hand_grouped_by_step_matches_the_schemas(game, side):
    received = _received(game, side)
    grouped = _grouped(received)
    groups = [f for f in grouped if f["type"] == "events"]
    assert len(groups) < sum(f["type"] == "event" for f in received), "no step with more than one event"
    assert any("legal" in item for g in groups for item in g["events"]) or side == "spectator"
    server_any = _validator("server.json")
    events_frame = _validator(f"{game_document(game)}#/$defs/events_frame")
    checker = FrameValidator()
    for frame in grouped:
        assert not list(server_any.iter_errors(frame)), frame["type"]
        checker.check_server(frame)
        if frame["type"] == "events":
            assert not list(events_frame.iter_errors(frame))
            assert not set(ENVELOPE) & {k for item in frame["events"] for k in item}
    # the expansion gives back exactly the event frames recorded
    expanded = [e for f in grouped for e in (expand_events(f) if f["type"] == "events" else [f])]
    assert expanded == received
    assert checker.checked["events"] == len(groups)


@pytest.mark.parametrize("game", GAMES)
def test_events_frames_in_a_batch_beside_other_frames(game):
    received = _received(game, "player")
    grouped = _grouped(received)
    checker = FrameValidator()
    checker.check_server(grouped[0])  # the table's game, from its snapshot or table_created
    rest = grouped[1:]
    batch = {"type": "batch", "frames": [*rest, {"type": "ok", "re": 5, "seq": received[-1]["seq"]}]}
    assert checker.server_errors(batch) == []
    assert _validator("server.json").is_valid(batch)


def _some_group(game: str = "no_limit_holdem") -> tuple[FrameValidator, Frame]:
    """A validator that knows the table's game, and a grouped step of two or
    more events, the last one putting the player's seat to act (with ``legal``)."""
    grouped = _grouped(_received(game, "player"))
    checker = FrameValidator()
    checker.check_server(grouped[0])
    group = next(f for f in grouped if f["type"] == "events" and len(f["events"]) >= 2
                 and "legal" in f["events"][-1])
    return checker, group


BAD = {
    "an empty list": lambda f: f.update(events=[]),
    "no events": lambda f: f.pop("events"),
    "no ts": lambda f: f.pop("ts"),
    "no table": lambda f: f.pop("table"),
    "seq 0": lambda f: f.update(seq=0),
    "a seq in an element": lambda f: f["events"][0].update(seq=f["seq"]),
    "a table in an element": lambda f: f["events"][0].update(table=f["table"]),
    "a ts in an element": lambda f: f["events"][0].update(ts=f["ts"]),
    "a type in an element": lambda f: f["events"][0].update(type="event"),
    "an element without its event": lambda f: f["events"][0].pop("event"),
    "legal without turn": lambda f: f["events"][-1].pop("turn"),
    "a field no frame has": lambda f: f.update(later=1),
    "an event the game does not have": lambda f: f["events"][0].update(event={"type": "no_such_event"}),
    "a game event with a field it does not have": lambda f: f["events"][0]["event"].update(deck_order=["Ah"]),
    "a legal action the game does not have": lambda f: f["events"][-1]["legal"].append({"type": "snowfall"}),
    "an element that is not a map": lambda f: f["events"].append([]),
}


@pytest.mark.parametrize("how", sorted(BAD))
def test_a_broken_events_frame_is_refused(how):
    checker, group = _some_group()
    assert checker.server_errors(group) == []
    bad = copy.deepcopy(group)
    BAD[how](bad)
    assert checker.server_errors(bad), how
    assert checker.server_errors({"type": "batch", "frames": [bad]}), how
    assert not _validator(f"{game_document('no_limit_holdem')}#/$defs/events_frame").is_valid(bad), how


def test_the_core_union_refuses_an_events_frame_that_breaks_the_format():
    """server.json names no game: its union still holds the envelope and the elements' shape."""
    _, group = _some_group()
    server_any = _validator("server.json")
    assert server_any.is_valid(group)
    for how in ("an empty list", "no ts", "a seq in an element", "a type in an element", "legal without turn"):
        bad = copy.deepcopy(group)
        BAD[how](bad)
        assert not server_any.is_valid(bad), how


def test_the_conformance_kit_events_case_stands_for_its_event_case():
    cases = {c["name"]: c["value"] for c in load("codec")["cases"]}
    events = cases["events"]
    expanded = expand_events(events)
    assert [f["seq"] for f in expanded] == [events["seq"], events["seq"] + 1]
    assert expanded[-1] == cases["event_with_turn_and_legal"]
    assert cases["batch_with_events"]["frames"][0] == events
    assert cases["welcome"]["minor"] == 8 and cases["welcome"]["group"] is False
    checker = FrameValidator()
    for frame in expanded:
        checker.check_server(frame)


def test_the_spec_example_is_valid_and_stands_for_the_frames_shown_beside_it():
    spec = (Path(__file__).resolve().parents[2] / "protocol" / "SPEC.md").read_text()
    section = spec.split("## Batching and grouping\n", 1)[1].split("\n## ", 1)[0]
    grouped, frames = (json.loads(block.split("```", 1)[0]) for block in section.split("```json\n")[1:3])
    assert expand_events(grouped) == frames
    checker = FrameValidator()
    checker.check_server(_received("no_limit_holdem", "player")[0])  # the example's table is a no-limit one
    checker.check_server(grouped)
    assert _validator("holdem.json#/$defs/events_frame").is_valid(grouped)
