"""cardhall.engine.stacked.StackedDeck: the scripted random source that makes an engine deal chosen cards."""

from __future__ import annotations

import doctest

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cardhall.engine.stacked
from cardhall.engine.cards import multi_deck, standard_deck
from cardhall.engine.rng import FairRandom, random_from_data
from cardhall.engine.stacked import StackedDeck, StackedDeckError


def test_docstring_examples():
    result = doctest.testmod(cardhall.engine.stacked)
    assert result.failed == 0 and result.attempted > 0


@settings(max_examples=50, deadline=None)
@given(st.permutations(standard_deck()), st.permutations(standard_deck()))
def test_shuffle_puts_any_deck_into_the_order(order, start):
    items = list(start)
    StackedDeck(order).shuffle(items)
    assert items == order


def test_shuffles_take_the_orders_in_turn_then_fail():
    first, second = standard_deck(), standard_deck()[::-1]
    rng = StackedDeck(first, second)
    deck = standard_deck()
    rng.shuffle(deck)
    assert deck == first and rng.shuffles_left == 1
    rng.shuffle(deck)
    assert deck == second and rng.shuffles_left == 0
    with pytest.raises(StackedDeckError, match="no order left for shuffle number 3"):
        rng.shuffle(deck)


def test_an_order_that_is_not_a_permutation_is_refused_and_leaves_items_alone():
    items = standard_deck()
    wrong = ["2c" if card == "Ks" else card for card in standard_deck()]  # 2c twice, Ks missing
    with pytest.raises(StackedDeckError, match=r"missing \['Ks'\], extra \['2c'\]"):
        StackedDeck(wrong).shuffle(items)
    assert items == standard_deck()
    with pytest.raises(StackedDeckError, match="not a permutation"):
        StackedDeck(standard_deck()[:51]).shuffle(standard_deck())


def test_multisets_work_for_multi_deck_games():
    deck = multi_deck(2, jokers=6)
    order = sorted(deck)
    StackedDeck(order).shuffle(deck)
    assert deck == order
    with pytest.raises(StackedDeckError):
        StackedDeck(sorted(multi_deck(2, jokers=5)) + ["As"]).shuffle(multi_deck(2, jokers=6))


def test_randbelow_follows_the_script_and_never_guesses():
    rng = StackedDeck(draws=[4, 0, 2])
    assert [rng.randbelow(5), rng.randbelow(1), rng.choice("abc")] == [4, 0, "c"]
    with pytest.raises(StackedDeckError, match=r"no scripted draw left for randbelow\(7\)"):
        rng.randbelow(7)
    with pytest.raises(StackedDeckError, match=r"scripted draw 5 is not in \[0, 5\)"):
        StackedDeck(draws=[5]).randbelow(5)
    with pytest.raises(ValueError):
        StackedDeck(draws=[0]).randbelow(0)


def test_state_round_trips_through_plain_data_mid_script():
    rng = StackedDeck(standard_deck(), standard_deck()[::-1], draws=[1, 2, 3])
    rng.shuffle(standard_deck())
    rng.randbelow(5)
    data = msgpack.unpackb(msgpack.packb(rng.to_data()))
    restored = random_from_data(data)
    assert isinstance(restored, StackedDeck) and restored == rng
    deck = standard_deck()
    restored.shuffle(deck)
    assert deck == standard_deck()[::-1]
    assert restored.randbelow(9) == 2 and restored.draws_left == 1


def test_malformed_data_is_a_value_error():
    with pytest.raises(ValueError):
        StackedDeck.from_data({"kind": "stacked", "orders": [], "shuffled": 1, "draws": [], "drawn": 0})
    with pytest.raises(ValueError):
        StackedDeck.from_data({"kind": "stacked"})
    with pytest.raises(ValueError):
        random_from_data({"kind": "loaded-dice"})
    assert isinstance(random_from_data(FairRandom(bytes(32)).to_data()), FairRandom)
