"""High Card's engine and registration, with no server: the registry, bots, the schema document,
whole matches between bots (``cardhall simulate``'s driver), persistence and redaction."""

from __future__ import annotations

import json

import pytest
from jsonschema import Draft202012Validator

from cardhall.clients.commands.simulate import simulate_match
from cardhall.engine import plugins
from cardhall.engine.base import IllegalAction
from cardhall.engine.base import test_rng as seeded
from cardhall.engine.bots.registry import BOTS, DEFAULT, bot_names, make_bot
from cardhall.engine.options import options_schema
from cardhall.engine.play import new_match, play_match, seat_bots
from cardhall.engine.registry import GAMES, engine_class
from cardhall.protocol.schemas import BASE, documents, game_document, registry
from tests.toygame.bot import BoldBot
from tests.toygame.engine import HighCard


def test_registered_only_while_it_is(toy):
    assert "high_card" in GAMES and list(GAMES)[-1] == "high_card"  # after the built-ins (their order)
    assert engine_class("high_card") is HighCard and GAMES["high_card"] is toy
    assert bot_names("high_card") == ["bold", "random"] and DEFAULT["high_card"] == "bold"
    assert isinstance(make_bot("high_card", None, seeded()), BoldBot)
    assert BOTS["high_card"]["random"] == plugins.RANDOM_BOT_REF
    with pytest.raises(plugins.RegistrationError, match="already registered"):
        plugins.register(toy)


def test_unregistered_it_is_gone():
    assert "high_card" not in GAMES and game_document("high_card") is None
    with pytest.raises(KeyError):
        engine_class("high_card")
    assert "high_card.json" not in documents()


@pytest.mark.parametrize("change, message", [
    ({"name": "High-Card"}, "the name must match"),
    ({"engine": "tests.toygame.engine"}, "not a 'module:Class' reference"),
    ({"name": "other_card"}, "says game = 'high_card'"),
    ({"bots": {"random": "tests.toygame.bot:BoldBot"}}, "'random' is every game's"),
    ({"default_bot": "timid"}, "default_bot 'timid' is not one of its bots"),
    ({"schema": plugins.builtin_schema("no_such.json")}, "no such file"),
    ({"schema": "elsewhere"}, "its \\$id must be"),
    ({"web_renderer": "games/x.js"}, "a URL path starts with '/'"),
    ({"tui_renderer": "nothing"}, "not a 'module:function' reference"),
])
def test_a_bad_registration_names_the_game(toy, change, message, tmp_path):
    from dataclasses import replace

    if change.get("schema") == "elsewhere":  # a document whose $id is not BASE + its name
        change = {"schema": tmp_path / "high_card.json"}
        change["schema"].write_text(json.dumps({"$id": "https://example.org/high_card.json"}))
    with pytest.raises(plugins.RegistrationError, match=message):
        replace(toy, **change).check()


def test_its_schema_document_is_built_like_the_built_in_ones(toy):
    doc = documents()["high_card.json"]
    Draft202012Validator.check_schema(doc)
    stored = doc["$defs"]["match_options"]
    assert stored == options_schema(HighCard.options_spec, stored["description"])
    assert json.loads(toy.schema.read_text())["$id"] == BASE + "high_card.json"
    view = Draft202012Validator({"$ref": BASE + "high_card.json#/$defs/view"}, registry=registry())
    game = HighCard.new([1, 2, 3], None, seeded("schema"))
    game.start()
    for viewer in (None, 1, 2, 3):
        assert list(view.iter_errors(game.view(viewer))) == []


@pytest.mark.parametrize("players", [2, 3, 6])
def test_whole_matches_between_bots_conserve_the_deck(toy, players):
    for index in range(5):
        report = simulate_match("high_card", players, "toy", index, None)
        assert report["finished"] and report["conservation"]["violations"] == [], report
        assert sum(report["final"].values()) == 0 and report["hands"] == 3


def test_state_round_trips_and_hides_the_cards(toy):
    rng = seeded("toy")
    engine = new_match("high_card", 3, rng.spawn("match"), {"hands": 4, "max_bet": 2})
    seen: list[dict] = []
    run = play_match(engine, seat_bots("high_card", 3, rng.spawn("bots"), "random"),
                     observe=lambda e: seen.append(e.to_data()))
    assert run.finished and run.result["hands"] == 4
    for data in seen:
        again = HighCard.from_data(data)
        assert again.to_data() == data
        for viewer in (None, 1, 2, 3):
            view = again.view(viewer)
            hidden = {c for s, c in again.cards.items() if s != viewer and str(s) not in view["shown"]}
            assert not hidden & set(json.dumps(view).replace('"', " ").split()), (viewer, view)
    with pytest.raises(IllegalAction):
        engine.apply(1, {"type": "fold"})


def test_illegal_actions_leave_the_state_alone(toy):
    game = HighCard.new([1, 2], {"max_bet": 3}, seeded("illegal"))
    game.start()
    before = game.to_data()
    for seat, action in [(2, {"type": "fold"}), (1, {"type": "bet", "amount": 4}), (1, {"type": "bet", "amount": True}),
                         (1, {"type": "bet"}), (1, {"type": "raise", "amount": 1}), (1, {"type": "fold", "amount": 1})]:
        with pytest.raises(IllegalAction):
            game.apply(seat, action)
        assert game.to_data() == before
    events = game.apply(1, {"type": "bet", "amount": 3})
    assert [e.type for e in events] == ["action"] and game.to_act == 2


def test_an_installed_package_registers_through_its_entry_point(tmp_path, monkeypatch, caplog):
    """A distribution on sys.path whose entry points name the toy in the group cardhall.games (as
    ``pip install`` of a plugin would leave it) adds it; a broken entry point is logged and skipped."""
    info = tmp_path / "cardhall_toy-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: cardhall-toy\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        f"[{plugins.ENTRY_POINT_GROUP}]\nhigh_card = tests.toygame\nbroken = tests.toygame.no_such_module\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        with caplog.at_level("ERROR", logger="cardhall.plugins"):
            found = plugins.rediscover()
        assert found["high_card"].source == "entry point high_card = tests.toygame"
        assert engine_class("high_card") is HighCard
        assert any("entry point broken = tests.toygame.no_such_module" in r.getMessage() for r in caplog.records)
    finally:
        monkeypatch.undo()
        plugins.rediscover()
    assert "high_card" not in GAMES
