"""The recorded examples (``protocol/examples/*.json``, a whole hand of each
game from a real server) stay valid against the schemas, through the unions
of the schema documents themselves (``server.json``'s root, ``client.json``'s
root, each game's ``event_frame``/``snapshot``/``act``) as a third-party
validator would use them, and through :class:`cardhall.protocol.schemas.FrameValidator`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from cardhall.protocol.schemas import BASE, DOCUMENTS, GAME_DOCUMENT, FrameValidator, documents, registry

EXAMPLES = Path(__file__).resolve().parents[2] / "protocol" / "examples"
GAMES = sorted(GAME_DOCUMENT)


def _validator(ref: str) -> Draft202012Validator:
    return Draft202012Validator({"$ref": BASE + ref}, registry=registry())


def _load(game: str) -> dict:
    return json.loads((EXAMPLES / f"{game}.json").read_text())


def test_schema_documents_are_valid_2020_12():
    for name in DOCUMENTS:
        doc = documents()[name]
        Draft202012Validator.check_schema(doc)
        assert doc["$id"] == BASE + name and doc["$schema"].endswith("2020-12/schema")


@pytest.mark.parametrize("game", GAMES)
def test_example_of_a_whole_hand_matches_the_schemas(game):
    example = _load(game)
    assert example["game"] == game and example["subprotocol"] == "cardhall.v1.json"
    server_any = _validator("server.json")
    client_any = _validator("client.json")
    doc = GAME_DOCUMENT[game]
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
    # a whole hand: it starts, cards are dealt, and it ends
    start, end = ("game_start", "game_end") if game == "avalanche" else ("hand_start", "hand_end")
    assert {"match_started", start, end} <= kinds


@pytest.mark.parametrize("game", GAMES)
def test_unions_refuse_what_the_game_does_not_send(game):
    """The game documents are strict: an unknown field or a wrong value fails."""
    example = _load(game)
    event_frame = _validator(f"{GAME_DOCUMENT[game]}#/$defs/event_frame")
    frame = next(e["recv"] for e in example["spectator"] if "recv" in e and e["recv"]["type"] == "event"
                 and e["recv"]["event"]["type"] not in ("seated", "presence", "match_started"))
    assert event_frame.is_valid(frame)
    assert not event_frame.is_valid({**frame, "event": {**frame["event"], "deck_order": ["Ah"]}})
    assert not event_frame.is_valid({**frame, "seq": 0})
    assert not event_frame.is_valid({**frame, "event": {"type": "no_such_event"}})
