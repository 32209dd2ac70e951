"""Shared engine parts: cards, pots (FL-6), seats (G-1), ranking, and their docstring examples."""

from __future__ import annotations

import dataclasses
import doctest
import importlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cardhall.engine import cards, ranking, seats
from cardhall.engine.base import Event
from cardhall.engine.pots import Pot, side_pots, split

DOCTESTED = ["cardhall.engine.cards", "cardhall.engine.rng", "cardhall.engine.ranking", "cardhall.engine.pots", "cardhall.engine.seats", "cardhall.engine.registry",
             "cardhall.engine.plugins", "cardhall.engine.bots.registry"]


@pytest.mark.parametrize("module", DOCTESTED)
def test_docstring_examples(module):
    result = doctest.testmod(importlib.import_module(module))
    assert result.failed == 0 and result.attempted > 0


def test_cards_decks_are_complete_and_distinct():
    deck = cards.standard_deck()
    assert len(deck) == len(set(deck)) == 52
    assert cards.standard_deck(jokers=2)[-2:] == ["Xr", "Xb"]
    assert cards.multi_deck(3, jokers=9).count("As") == 3


@pytest.mark.parametrize("bad", ["", "A", "1h", "Az", "AhK", None, "Xx"])
def test_cards_validate_rejects_malformed(bad):
    with pytest.raises(cards.CardError):
        cards.validate(bad)


def test_cards_parse_phh_runs():
    assert cards.parse_cards("AhKd") == ["Ah", "Kd"]
    assert cards.parse_cards("????") == ["??", "??"]


def test_FL6_side_pots_seed_example_all_in_for_less():
    # a no-limit scenario other engines got wrong: 300 / 1000 / 1000 all in
    assert side_pots({1: 300, 2: 1000, 3: 1000}, {1, 2, 3}) == [Pot(900, (1, 2, 3)), Pot(1400, (2, 3))]


def test_FL6_folded_chips_count_in_every_level_they_reach():
    # seat 4 put in 500 then folded: it feeds both levels but is eligible for none
    assert side_pots({1: 100, 2: 300, 3: 300, 4: 500}, {1, 2, 3}) == [Pot(400, (1, 2, 3)), Pot(800, (2, 3))]


def test_FL6_only_folded_money_above_the_top_level_joins_the_last_pot():
    assert side_pots({1: 100, 2: 100, 3: 150}, {1, 2}) == [Pot(350, (1, 2))]


@given(st.dictionaries(st.integers(1, 9), st.integers(0, 5000), min_size=2), st.data())
def test_side_pots_conserve_chips(contributions, data):
    live = data.draw(st.sets(st.sampled_from(sorted(contributions)), min_size=1))
    result = side_pots(contributions, live)
    assert sum(p.amount for p in result) == sum(contributions.values())
    for pot in result:
        assert set(pot.eligible) <= live


def test_FL7_odd_chip_to_the_lowest_tied_seat():
    assert split(25, [4, 2], odd_chip_order=sorted([4, 2])) == {2: 13, 4: 12}


def test_G6_odd_chips_go_one_each_left_of_the_button():
    order = seats.clockwise([1, 2, 3, 4, 5], after=3)  # button 3
    assert split(11, [1, 2, 5], odd_chip_order=order) == {5: 4, 1: 4, 2: 3}


def test_G1_clockwise_and_dead_button():
    assert seats.clockwise([2, 3, 5], after=4) == [5, 2, 3]
    assert seats.next_seat([2, 3, 5], after=5, eligible={3}) == 3
    with pytest.raises(ValueError):
        seats.next_seat([1, 2], after=1, eligible=set())


def test_ranking_issue2_scenario_wheel_beats_trips():
    board = ["3d", "4s", "5c", "9h", "Kd"]
    assert ranking.hand_value(["Ah", "2c", *board]) > ranking.hand_value(["9s", "9d", *board])
    assert ranking.hand_name(ranking.hand_value(["Ah", "2c", *board])) == "Straight"


def test_event_view_lays_private_fields_over_public_ones():
    event = Event({"type": "hole_cards", "seat": 3, "count": 2}, {3: {"cards": ["Ah", "Kd"]}})
    assert event.view(None) == {"type": "hole_cards", "seat": 3, "count": 2}
    assert event.view(1) == event.view(None)
    assert event.view(3)["cards"] == ["Ah", "Kd"]
    assert Event.from_data(event.to_data()) == event


def test_every_built_in_game_declares_itself():
    """Each module of cardhall.engine.games with an engine registers it (GAME), with its own bots,
    its schema document and its renderers; the registry lists exactly those, in catalogue order."""
    import pkgutil

    from cardhall.engine import games, plugins
    from cardhall.engine.base import Engine

    engines = {}
    for info in pkgutil.iter_modules(games.__path__):
        module = importlib.import_module(f"cardhall.engine.games.{info.name}")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Engine) and value.__module__ == module.__name__ \
                    and not getattr(value, "__abstractmethods__", None):
                engines[value.game] = module
    found = plugins.rediscover()
    assert list(found) == ["fixed_limit_holdem", "no_limit_holdem", "alamo", "loco_poker", "avalanche"]
    assert set(found) == set(engines)
    for name, spec in found.items():
        assert spec.source == engines[name].__name__ and spec.engine_class().game == name
        assert spec.schema is not None and spec.schema.is_file() and spec.example is not None
        assert spec.default_bot != "random" and spec.bot_class(spec.default_bot).name == spec.default_bot
        assert spec.web_renderer and spec.tui_renderer
        assert callable(plugins.resolve(spec.tui_renderer))


def test_a_broken_built_in_game_is_an_error(monkeypatch):
    """A built-in game module must not fail: the registry refuses to start without it."""
    from cardhall.engine import plugins
    from cardhall.engine.games import loco_poker

    monkeypatch.setattr(loco_poker, "GAME", dataclasses.replace(loco_poker.GAME, default_bot="nobody"))
    with pytest.raises(plugins.RegistrationError, match="game 'loco_poker': default_bot 'nobody'"):
        plugins.rediscover()
    monkeypatch.undo()
    assert "loco_poker" in plugins.rediscover()
