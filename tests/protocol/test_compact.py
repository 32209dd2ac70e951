"""Compact events (protocol 1.8, SPEC "Compact events"): :mod:`cardhall.protocol.compact`
gives back every recorded step of every game exactly (``protocol/examples``, grouped by
step as a server groups them, compacted under the server's layouts and expanded), and any
generated ``events`` frame under any layouts; :class:`~cardhall.protocol.schemas.FrameValidator`
takes the compact arrays of a recorded hand (alone and in a ``batch``) after a ``welcome``
with layouts and refuses malformed ones; the SPEC's and the conformance kit's examples are
what the server's layouts make of the frames they stand for."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgpack
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cardhall.protocol import schemas
from cardhall.protocol.compact import Layouts, expand, layouts_from
from cardhall.protocol.conformance import load
from cardhall.protocol.examples.record import example_games
from cardhall.protocol.frames import expand_events, grouped, welcome
from cardhall.protocol.schemas import FrameValidator, SchemaViolation

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "protocol" / "examples"
SPEC = (ROOT / "protocol" / "SPEC.md").read_text()
GAMES = sorted(example_games())

Frame = dict[str, Any]


def _layouts() -> Layouts:
    """The layouts this server sends in ``welcome.layouts``."""
    return layouts_from(schemas.documents(), schemas.game_documents())


def _welcome(layouts: list[list[Any]] | None) -> Frame:
    return dict(welcome(1, "p_1", "ann", "t" * 22, layouts=layouts))


def _received(game: str, side: str) -> list[Frame]:
    """The frames ``side`` received in the game's recorded hand from its first
    ``table_created`` or ``snapshot`` on (the recorded ``welcome`` is the
    recording's minor version's)."""
    example = json.loads((EXAMPLES / f"{game}.json").read_text())
    frames = [e["recv"] for e in example[side] if "recv" in e]
    first = next(i for i, f in enumerate(frames) if f["type"] in ("table_created", "snapshot"))
    return copy.deepcopy(frames[first:])


def _compacted(game: str, side: str, layouts: Layouts) -> tuple[list[Frame], list[Any]]:
    """The recorded frames grouped by step, and the same with each ``events``
    frame as its compact array."""
    steps = grouped(_received(game, side))
    return steps, [layouts.compact(f, game) if f["type"] == "events" else f for f in steps]


# -- round trips -----------------------------------------------------------------------------------
@pytest.mark.parametrize("side", ["player", "spectator"])
@pytest.mark.parametrize("game", GAMES)
def test_every_recorded_step_comes_back_from_its_compact_array(game, side):
    layouts = _layouts()
    entries = layouts.entries()
    received = _received(game, side)
    steps, compacted = _compacted(game, side, layouts)
    arrays = [c for c in compacted if isinstance(c, list)]
    assert len(arrays) == sum(f["type"] == "events" for f in steps) >= 1
    for step, packed in zip(steps, compacted, strict=True):
        if step["type"] != "events":
            continue
        for codec_round_trip in (lambda a: a, lambda a: orjson.loads(orjson.dumps(a)),
                                 lambda a: msgpack.unpackb(msgpack.packb(a), raw=False)):
            assert expand(codec_round_trip(packed), entries) == step
        assert len(orjson.dumps(packed)) < len(orjson.dumps(step))
    # and the event frames they stand for are exactly the recorded ones
    expanded = [e for c in compacted for e in (expand_events(expand(c, entries)) if isinstance(c, list) else [c])]
    assert expanded == received
    # every form of the encoding turns up somewhere in the recorded hands
    if game == "alamo" and side == "spectator":
        elements = [e for a in arrays for e in a[3:]]
        assert any(isinstance(e, dict) for e in elements)  # seated: no layout
        assert any(isinstance(e, list) and isinstance(e[-1], dict) and isinstance(e[0], int) for e in elements)
        assert {len(e[1]) for e in elements if isinstance(e, list) and isinstance(e[0], (list, dict))} == {2, 3, 4}


def test_whole_seconds_of_a_turn_are_integers_and_others_stay_as_they_are():
    layouts = Layouts([(None, "awaiting", [])])
    frame = {"type": "events", "table": "t", "seq": 3, "ts": 1.5, "events": [
        {"event": {"type": "awaiting"}, "turn": {"seat": 1, "id": 3, "clock": 30.0, "bank": 12.25}}]}
    packed = layouts.compact(frame, None)
    assert packed[3] == [[0], [1, 3, 30, 12.25]] and type(packed[3][1][2]) is int
    assert expand(packed, layouts.entries()) == frame


NAMES = st.text("abcdefg_", min_size=1, max_size=5).filter(lambda n: n != "type")
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2 ** 40), 2 ** 40) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=6)
GAMES_DRAWN = st.sampled_from([None, "g", "h"])
ENTRIES = st.lists(st.tuples(GAMES_DRAWN, st.sampled_from("abcdef"), st.lists(NAMES, unique=True, max_size=4)),
                   unique_by=lambda e: (e[0], e[1]), max_size=12)
SECONDS = st.floats(0, 1e6) | st.integers(0, 1000).map(float)
TURNS = st.one_of(
    st.fixed_dictionaries({"seat": st.integers(1, 9), "id": st.integers(1, 10 ** 6)}),
    st.fixed_dictionaries({"seat": st.integers(1, 9), "id": st.integers(1, 10 ** 6), "continue": st.just(True)}),
    st.fixed_dictionaries({"seat": st.integers(1, 9), "id": st.integers(1, 10 ** 6), "clock": SECONDS, "bank": SECONDS}))
LEGAL = st.lists(st.fixed_dictionaries({"type": st.text("abc", min_size=1, max_size=3)},
                                       optional={"min": st.integers(0, 99), "max": st.integers(0, 99)}), min_size=1, max_size=3)


@st.composite
def _events_frames(draw: st.DrawFn) -> tuple[list[tuple[str | None, str, list[str]]], str | None, Frame]:
    """Layouts, a game, and an ``events`` frame of that game's table whose events
    fill their layouts or not, with or without fields beyond them, turns of every
    form and ``legal``."""
    entries = draw(ENTRIES)
    game = draw(GAMES_DRAWN)
    items = []
    for _ in range(draw(st.integers(1, 5))):
        kind = draw(st.sampled_from("abcdefgh"))
        event: Frame = {"type": kind}
        layout = next((f for g, k, f in entries if (g, k) == (game, kind)), None) \
            or next((f for g, k, f in entries if (g, k) == (None, kind)), None)
        if layout is not None and draw(st.booleans()):
            event.update((name, draw(VALUES)) for name in layout)
        event.update(draw(st.dictionaries(NAMES, VALUES, max_size=3)))
        item: Frame = {"event": event}
        if draw(st.booleans()):
            item["turn"] = draw(TURNS)
            if draw(st.booleans()):
                item["legal"] = draw(LEGAL)
        items.append(item)
    frame = {"type": "events", "table": draw(st.text(min_size=1, max_size=8)), "seq": draw(st.integers(1, 2 ** 40)),
             "ts": draw(st.floats(0, 4e9)), "events": items}
    return entries, game, frame


@settings(max_examples=300, deadline=None)
@given(_events_frames())
def test_expand_gives_back_any_events_frame_compacted_under_any_layouts(drawn):
    entries, game, frame = drawn
    layouts = Layouts(entries)
    packed = layouts.compact(frame, game)
    assert expand(packed, layouts.entries()) == frame
    assert expand(orjson.loads(orjson.dumps(packed)), layouts.entries()) == frame
    assert expand(msgpack.unpackb(msgpack.packb(packed), raw=False), layouts.entries()) == frame
    assert len(packed) == 3 + len(frame["events"])


# -- the validator -----------------------------------------------------------------------------------
def _checker_and_step(game: str = "no_limit_holdem") -> tuple[FrameValidator, list[Any]]:
    """A validator that has the server's layouts (a ``welcome``) and knows the
    table's game, and a compact array of a step of two or more events, the last
    putting the player's seat to act (``[event, [seat, id, clock, bank], legal]``)."""
    layouts = _layouts()
    steps = grouped(_received(game, "player"))
    checker = FrameValidator()
    checker.check_server(_welcome(layouts.entries()))
    checker.check_server(steps[0])
    step = next(f for f in steps if f["type"] == "events" and len(f["events"]) >= 2 and "legal" in f["events"][-1]
                and "clock" in f["events"][-1]["turn"] and f["events"][0]["event"]["type"] == "action")
    packed = layouts.compact(step, game)
    assert isinstance(packed[3][0], int) and not isinstance(packed[3][-1], dict) and len(packed[-1]) == 3
    return checker, packed


def _other_game_index(packed: list[Any]) -> int:
    """The index of the same event type's layout in fixed-limit Hold'em (same fields)."""
    entries = _layouts().entries()
    kind = entries[packed[3][0]][1]
    return next(i for i, (g, k, _) in enumerate(entries) if (g, k) == ("fixed_limit_holdem", kind))


def _as_map(packed: list[Any]) -> None:
    packed[3] = expand(packed[:4], _layouts().entries())["events"][0]["event"]


BAD: dict[str, Callable[[list[Any]], Any]] = {
    "no element": lambda a: a.__delitem__(slice(3, None)),
    "a table that is not a string": lambda a: a.__setitem__(0, 5),
    "seq 0": lambda a: a.__setitem__(1, 0),
    "a ts that is not a number": lambda a: a.__setitem__(2, "now"),
    "an index past the layouts": lambda a: a[3].__setitem__(0, len(_layouts().entries())),
    "a negative index": lambda a: a[3].__setitem__(0, -1),
    "an index that is a bool": lambda a: a[3].__setitem__(0, True),
    "a value too few": lambda a: a[3].pop(),
    "a value too many": lambda a: a[3].append(0),
    "a last map that repeats a field of the layout": lambda a: a[3].append({"seat": 1}),
    "a last map with a type": lambda a: a[3].append({"type": "fold"}),
    "an empty last map": lambda a: a[3].append({}),
    "a layout of another game": lambda a: a[3].__setitem__(0, _other_game_index(a)),
    "an event with a layout written as a map": _as_map,
    "a value the game's schema refuses": lambda a: a[3].__setitem__(1, "two"),
    "an element that is a string": lambda a: a.append("event"),
    "an empty element": lambda a: a.append([]),
    "a turn of five": lambda a: a[-1][1].append(0),
    "a turn of one": lambda a: a[-1].__setitem__(1, a[-1][1][:1]),
    "a turn [seat, id, false]": lambda a: a[-1].__setitem__(1, a[-1][1][:2] + [False]),
    "a turn with a clock and no bank": lambda a: a[-1][1].pop(),
    "a turn with a negative clock": lambda a: a[-1][1].__setitem__(2, -1),
    "a turn that is a map": lambda a: a[-1].__setitem__(1, {"seat": 1, "id": 10}),
    "an event with its turn and two more": lambda a: a[-1].append([]),
    "an empty legal": lambda a: a[-1].__setitem__(2, []),
    "a legal action the game does not have": lambda a: a[-1][2].append({"type": "snowfall"}),
}


def test_a_compact_step_is_taken_alone_and_in_a_batch():
    checker, packed = _checker_and_step()
    assert checker.server_errors(packed) == []
    checker.check_server({"type": "batch", "frames": [packed, {"type": "ok", "re": 5}]})
    assert checker.checked["compact"] == 2 and checker.checked["events"] == 2


@pytest.mark.parametrize("how", sorted(BAD))
def test_a_malformed_compact_array_is_refused(how):
    checker, packed = _checker_and_step()
    bad = copy.deepcopy(packed)
    BAD[how](bad)
    assert checker.server_errors(bad), how
    assert checker.server_errors({"type": "batch", "frames": [bad]}), how
    with pytest.raises(SchemaViolation, match="^compact events: "):
        checker.check_server(bad)
    assert checker.failures


@pytest.mark.parametrize("side", ["player", "spectator"])
@pytest.mark.parametrize("game", GAMES)
def test_the_compact_arrays_of_a_recorded_hand_are_taken(game, side):
    layouts = _layouts()
    _, compacted = _compacted(game, side, layouts)
    checker = FrameValidator()
    checker.check_server(_welcome(layouts.entries()))
    for frame in compacted:
        checker.check_server(frame)
    assert checker.checked["compact"] == sum(isinstance(f, list) for f in compacted)
    batch = {"type": "batch", "frames": compacted[1:] + [{"type": "ok", "re": 9}]}
    assert checker.server_errors(batch) == []


def test_a_compact_array_needs_a_welcome_with_layouts_first():
    _, packed = _checker_and_step()
    fresh = FrameValidator()
    assert fresh.server_errors(packed) == ["a compact events array before a welcome with layouts"]
    fresh.check_server(_welcome(None))  # compact false: no layouts
    assert fresh.server_errors(packed)
    fresh.check_server(_welcome(_layouts().entries()))
    assert fresh.server_errors(packed) == []
    fresh.check_server(_welcome(None))  # a later hello without compact: arrays are refused again
    assert fresh.server_errors(packed)


def test_the_welcome_says_compact_and_carries_layouts_exactly_when_it_is():
    checker = FrameValidator()
    entries = _layouts().entries()
    compact, plain = _welcome(entries), _welcome(None)
    assert (compact["group"], compact["compact"], plain["group"], plain["compact"]) == (True, True, False, False)
    assert "layouts" not in plain
    checker.check_server(compact)
    checker.check_server(plain)
    refused = [
        {k: v for k, v in compact.items() if k != "layouts"},  # compact without layouts
        {**plain, "layouts": entries},  # layouts without compact
        {**compact, "group": False},  # compact implies group
        {k: v for k, v in plain.items() if k != "compact"},  # compact is always there
        {**compact, "layouts": [[None, "left"]]},  # a layout is [game, type, fields]
        {**compact, "layouts": [[None, "left", ["seat", 1]]]},
        {**compact, "minor": 7},
    ]
    for frame in refused:
        assert checker.server_errors(frame), frame
    layouts_before = checker.layouts
    with pytest.raises(SchemaViolation):
        checker.check_server(refused[0])
    assert checker.layouts is layouts_before  # a refused welcome teaches nothing


def test_hello_may_ask_for_compact_events():
    checker = FrameValidator()
    assert checker.client_errors({"type": "hello", "name": "ann", "compact": True}) == []
    assert checker.client_errors({"type": "hello", "name": "ann", "compact": "yes"})


# -- the SPEC's and the kit's examples -----------------------------------------------------------------
def _section(title: str) -> str:
    return SPEC.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def _json_blocks(section: str) -> list[Any]:
    return [json.loads(block.split("```", 1)[0]) for block in section.split("```json\n")[1:]]


def test_the_spec_example_is_the_batching_example_compacted_by_the_server():
    layouts = _layouts()
    entries = layouts.entries()
    grouped_example = _json_blocks(_section("Batching and grouping"))[0]
    packed, shown_layouts, alamo = _json_blocks(_section("Compact events"))
    assert packed == layouts.compact(grouped_example, "no_limit_holdem")
    assert expand(packed, entries) == grouped_example
    indices = [packed[3][0], packed[4][0][0]]
    assert indices == [45, 44] and shown_layouts == [entries[44], entries[45]]
    checker = FrameValidator()
    checker.check_server(_welcome(entries))
    checker.games[packed[0]] = "no_limit_holdem"  # the example's table, checked by that game's schema
    checker.check_server(packed)
    # the Alamo step: the layouts the prose names, the events it says they are
    assert [entries[62], entries[61]] == [["alamo", "action", ["seat", "action", "cards", "bet", "stack", "pot", "all_in"]],
                                          ["alamo", "turn", ["seat", "to_call"]]]
    step = expand(alamo, entries)
    assert step["events"] == [
        {"event": {"type": "action", "seat": 1, "action": "bet", "cards": 13, "bet": 13, "stack": 9, "pot": 17,
                   "all_in": False, "amount": 13}},
        {"event": {"type": "turn", "seat": 2, "to_call": 13}, "turn": {"seat": 2, "id": 11}}]
    assert layouts.compact(step, "alamo") == alamo
    checker.games[alamo[0]] = "alamo"
    checker.check_server(alamo)
    assert checker.checked["event:alamo:action"] == 1 and checker.checked["event:no_limit_holdem:action"] == 1
    section = _section("Compact events")
    assert '`{"seat": 1, "id": 10, "clock": 30, "bank": 60}`' in section
    assert "never hard-codes an index" in section


def test_the_kit_compact_cases_stand_for_their_frames_under_the_servers_layouts():
    cases = {c["name"]: c for c in load("codec")["cases"]}
    case, in_batch = cases["compact_events"], cases["batch_with_compact_events"]
    assert expand(case["value"], case["layouts"]) == case["expands_to"] == cases["events"]["value"]
    packed, ok = in_batch["value"]["frames"]
    assert [expand(packed, in_batch["layouts"]), ok] == in_batch["expands_to"]
    # each layout the cases use is the one this server sends for that event
    server = {(g, k): f for g, k, f in _layouts().entries()}
    for c in (case, in_batch):
        arrays = [c["value"]] if isinstance(c["value"], list) else [f for f in c["value"]["frames"] if isinstance(f, list)]
        used = [e if isinstance(e[0], int) else e[0] for a in arrays for e in a[3:] if isinstance(e, list)]
        for written in used:
            game, kind, fields = c["layouts"][written[0]]
            assert server[(game, kind)] == fields, (c["name"], written[0])
