"""The ``heuristic`` Avalanche bot: legal, view-only, sensible choices, beats ``random``."""

from __future__ import annotations

import msgpack
import pytest

from cardhall.engine.bots.avalanche import AvalancheBot, fall_chance
from cardhall.engine.bots.random_bot import RandomBot
from cardhall.engine.bots.registry import make_bot
from cardhall.engine.games.avalanche import Avalanche
from cardhall.engine.play import play_match, win_rate
from cardhall.engine.rng import FairRandom
from tests.engine.test_avalanche import new_game, play, position


def choose(game: Avalanche) -> dict:
    """The bot's choice from the seat's view and legal actions, sent through msgpack as a client would get them."""
    seat = game.to_act
    assert seat is not None
    view = msgpack.unpackb(msgpack.packb(game.view(seat)))
    legal = msgpack.unpackb(msgpack.packb([a.to_data() for a in game.legal_actions()]))
    return AvalancheBot(FairRandom(b"t")).choose(view, legal)


def test_registry_default_is_the_heuristic() -> None:
    assert isinstance(make_bot("avalanche", None, FairRandom(b"x")), AvalancheBot)


@pytest.mark.parametrize("players", [2, 5, 8])
def test_heuristic_plays_only_legal_moves(players: int) -> None:
    bots = {s: AvalancheBot(FairRandom(f"h{s}".encode())) for s in range(1, players + 1)}
    run = play_match(Avalanche.new(sorted(bots), None, FairRandom(f"legal{players}".encode())), bots)
    result = run.result  # IllegalAction would have raised
    assert sum(result["stored"].values()) + result["neutral"] == (110 if players <= 6 else 165)


@pytest.mark.parametrize(
    ("count", "rank", "hand_size", "low", "high"),
    [
        (2, "2", 0, 1.0, 1.0),  # nobody to answer
        (1, "2", 10, 0.0, 0.01),  # any card grows a deuce
        (1, "X", 1, 0.9, 0.99),  # one card: falls unless it is a joker
        (3, "9", 5, 0.8, 1.0),  # five cards rarely hold a triple
        (2, "9", 30, 0.0, 0.05),  # thirty cards almost surely hold a pair
    ],
)
def test_fall_chance(count: int, rank: str, hand_size: int, low: float, high: float) -> None:
    unseen = {r: 8 for r in "23456789TJQKA"} | {"X": 6}
    assert low <= fall_chance(count, rank, unseen, hand_size) <= high


def test_stops_a_big_avalanche_rather_than_let_it_fall() -> None:
    game = position(
        {1: "Qc Qd 2c", 2: "5c 5d 9h", 3: "7c 7d 8c 8d"},
        turn=2,
        deck="2d 2h 3c 3d 4c 4d",
        avalanche=[(3, "3h"), (1, "4h4s"), (3, "TcTd"), (1, "KcKd")],
    )
    assert choose(game) == {"type": "play", "rank": "5", "count": 2}


def test_starts_with_a_set_the_next_player_cannot_answer() -> None:
    # the next player holds two cards: a triple can only fall onto the bot
    game = position({1: "8c 8d 8h 3c 6d", 2: "Ks Ah"}, turn=1)
    assert choose(game) == {"type": "play", "rank": "8", "count": 3}


def test_snowfalls_with_a_weak_hand_and_a_big_deck() -> None:
    game, _ = new_game([1, 2, 3, 4], 4, {1: "2c 3d 4h 5s 6c 7d 8h 9s Tc Jd"})
    assert choose(game) == {"type": "snowfall"}


def test_grows_with_a_higher_single_rather_than_fall() -> None:
    game, _ = new_game([1, 2], 2, {1: "9c", 2: "2c 3d 4h 5s 6c 7d 8h Ts Jc Xr"})
    play(game, 1, "9c")
    action = choose(game)
    assert action["type"] == "play" and action["rank"] in "TJX" and action["count"] == 1


@pytest.mark.parametrize(("players", "at_least"), [(2, 0.8), (4, 0.5), (6, 0.4)])
def test_beats_random_clearly(players: int, at_least: float) -> None:
    """40 matches, one heuristic bot against random bots (chance: 1/players)."""
    assert win_rate("avalanche", players, 40).rate >= at_least


def test_random_bot_is_a_fair_baseline() -> None:
    """Sanity: random against random wins about its share (so the margin above is the strategy's)."""
    wins = 0
    for i in range(40):
        bots = {s: RandomBot(FairRandom(f"r{i}/{s}".encode())) for s in (1, 2)}
        wins += 1 in play_match(Avalanche.new([1, 2], None, FairRandom(f"rr{i}".encode())), bots).result["winners"]
    assert 8 <= wins <= 32
