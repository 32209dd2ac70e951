"""The recorded examples (``protocol/examples/*.json``, a whole hand of each
game from a real server) stay valid against the schemas, through the unions
of the schema documents themselves (``server.json``'s root, ``client.json``'s
root, each game's ``event_frame``/``snapshot``/``act``) as a third-party
validator would use them, and through :class:`cardhall.protocol.schemas.FrameValidator`.
The games are the registered ones with an example (``GameSpec.example``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from cardhall.protocol.examples.record import example_games
from cardhall.protocol.schemas import BASE, CORE_DOCUMENTS, FrameValidator, documents, game_document, registry

EXAMPLES = Path(__file__).resolve().parents[2] / "protocol" / "examples"
GAMES = sorted(example_games())
#: the table's own event types (server.json), not a game's
TABLE_EVENTS = set(documents()["server.json"]["$defs"]["table_event_type"]["enum"])


def _validator(ref: str) -> Draft202012Validator:
    return Draft202012Validator({"$ref": BASE + ref}, registry=registry())


def _load(game: str) -> dict:
    return json.loads((EXAMPLES / f"{game}.json").read_text())


def test_schema_documents_are_valid_2020_12():
    assert set(CORE_DOCUMENTS) < set(documents())
    for name, doc in documents().items():
        Draft202012Validator.check_schema(doc)
        assert doc["$id"] == BASE + name and doc["$schema"].endswith("2020-12/schema")


@pytest.mark.parametrize("game", GAMES)
def test_example_of_a_whole_hand_matches_the_schemas(game):
    example = _load(game)
    assert example["game"] == game and example["subprotocol"] == "cardhall.v1.json"
    server_any = _validator("server.json")
    client_any = _validator("client.json")
    doc = game_document(game)
    event_frame, snapshot, act = (_validator(f"{doc}#/$defs/{d}") for d in ("event_frame", "snapshot", "act"))
    checker = FrameValidator()
    kinds = set()
    for side in ("player", "spectator"):
        seqs = []
        for entry in example[side]:
            (direction, frame), = entry.items()
            if direction == "send":
                client_any.validate(frame)
                if frame["type"] == "act":
                    act.validate(frame)
                assert checker.client_errors(frame) == []
                continue
            server_any.validate(frame)
            checker.check_server(frame)
            if frame["type"] == "event":
                event_frame.validate(frame)
                seqs.append(frame["seq"])
                kinds.add(frame["event"]["type"])
            elif frame["type"] == "snapshot":
                snapshot.validate(frame)
                seqs.append(frame["seq"])
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), f"{side}: seq not gap-free"
    # a whole hand: the match starts, the game's own events follow, and the example's last event ends it
    assert {"match_started", example_games()[game].until} <= kinds
    assert len(kinds - TABLE_EVENTS) >= 3, kinds


@pytest.mark.parametrize("game", GAMES)
def test_unions_refuse_what_the_game_does_not_send(game):
    """The game documents are strict: an unknown field or a wrong value fails."""
    example = _load(game)
    event_frame = _validator(f"{game_document(game)}#/$defs/event_frame")
    frame = next(e["recv"] for e in example["spectator"] if "recv" in e and e["recv"]["type"] == "event"
                 and e["recv"]["event"]["type"] not in ("seated", "presence", "match_started"))
    assert event_frame.is_valid(frame)
    assert not event_frame.is_valid({**frame, "event": {**frame["event"], "deck_order": ["Ah"]}})
    assert not event_frame.is_valid({**frame, "seq": 0})
    assert not event_frame.is_valid({**frame, "event": {"type": "no_such_event"}})


@pytest.mark.parametrize("game", GAMES)
def test_match_started_options_are_the_games_own(game):
    """server.json names no game: match_started.options is any map there; the game's document
    (its ev_match_started) and FrameValidator hold them to the game's match_options."""
    example = _load(game)
    frames = [e["recv"] for e in example["spectator"] if "recv" in e]
    started = next(f for f in frames if f["type"] == "event" and f["event"]["type"] == "match_started")
    other = {"points_to_win": 2, "multi_call": "duels", "dealer": None} if game != "loco_poker" else {"decks": 2, "dealer": 1}
    wrong = {**started, "event": {**started["event"], "options": other}}
    server_any, event_frame = _validator("server.json"), _validator(f"{game_document(game)}#/$defs/event_frame")
    assert server_any.is_valid(started) and server_any.is_valid(wrong)
    assert event_frame.is_valid(started) and not event_frame.is_valid(wrong)
    checker = FrameValidator()
    for frame in frames[: frames.index(started)]:
        checker.check_server(frame)
    assert checker.server_errors(started) == []
    assert checker.server_errors(wrong), "another game's options pass as this game's"
