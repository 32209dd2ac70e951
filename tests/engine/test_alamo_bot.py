"""The Alamo ``equity`` bot: its showdown odds, its model of the street, legal play, and its edge over ``random``."""

from __future__ import annotations

import pytest

from cardhall.engine.bots.alamo import AlamoBot, Street, alamo_equity, opponent_groups, showdown_shares
from cardhall.engine.bots.random_bot import RandomBot
from cardhall.engine.bots.registry import make_bot
from cardhall.engine.cards import standard_deck
from cardhall.engine.games.alamo import Alamo
from cardhall.engine.play import play_match, win_rate
from cardhall.engine.rng import FairRandom


def unseen(*known: list[str], jokers: bool = False) -> list[str]:
    seen = {c for cards in known for c in cards}
    return [c for c in standard_deck(2 if jokers else 0) if c not in seen]


def test_registry_gives_the_equity_bot():
    assert isinstance(make_bot("alamo", None, FairRandom(b"r")), AlamoBot)


@pytest.mark.parametrize(
    "name,hole,board,opponents,to_come,low,high",
    [
        ("nuts_always_wins", ["Ah", "Kh"], ["Qh", "Jh", "Th"], 2, 0, 1.0, 1.0),
        ("aces_preflop_heads_up", ["Ac", "Ad"], [], 1, 5, 0.78, 0.92),
        ("seven_deuce_on_a_dry_flop", ["7c", "2d"], ["As", "Kd", "Qh"], 1, 2, 0.0, 0.3),
        ("no_opponent", ["7c", "2d"], ["As", "Kd", "Qh"], 0, 2, 1.0, 1.0),
        # AL-6: with no face-down card left the board stays at four cards
        ("four_card_board_made_flush", ["2h", "3h"], ["Ah", "Kh", "9h", "9c"], 1, 0, 0.85, 1.0),
    ],
)
def test_alamo_equity_cases(name, hole, board, opponents, to_come, low, high):
    value = alamo_equity(hole, board, opponents, to_come, 600, FairRandom(name.encode()), unseen(hole, board))
    assert low <= value <= high


def test_AL2_equity_counts_wild_jokers():
    # with both jokers unseen, quad aces can lose to five of a kind or a wild straight flush: not 1.0
    hole, board = ["Ac", "Ad"], ["Ah", "As", "2c", "7d", "9h"]
    plain = alamo_equity(hole, board, 1, 0, 400, FairRandom(b"j"), unseen(hole, board))
    wild = alamo_equity(hole, board, 1, 0, 2000, FairRandom(b"j"), unseen(hole, board, jokers=True))
    assert plain == 1.0 and 0.95 < wild < 1.0
    # holding a joker with four aces on board and hole is five of a kind: unbeatable
    assert alamo_equity(["Xr", "Ac"], ["Ad", "Ah", "As", "2c", "3d"], 2, 0, 300, FairRandom(b"k"),
                        unseen(["Xr", "Ac"], ["Ad", "Ah", "As", "2c", "3d"], jokers=True)) == 1.0


def test_alamo_equity_rejects_impossible_requests():
    with pytest.raises(ValueError):
        alamo_equity(["Ac", "Ad"], [], 1, 2, 10, FairRandom(b"x"), unseen(["Ac", "Ad"]))
    with pytest.raises(ValueError):
        alamo_equity(["Ac", "Ad"], [], 30, 5, 10, FairRandom(b"x"), unseen(["Ac", "Ad"]))


def test_showdown_shares_give_a_table_per_board_length_and_group():
    hole, board, known = ["Ah", "Ad"], ["As", "Kd", "7c"], ["Kh", "Ks"]  # our set of aces against a shown set of kings
    tables = showdown_shares(hole, board, [known, None], [0, 1, 2], 300, FairRandom(b"s"), unseen(hole, board, known))
    assert sorted(tables) == [0, 1, 2] and opponent_groups(2) == [(0,), (1,), (0, 1)]
    for rows in tables.values():
        assert sum(frequency for _, frequency in rows) == pytest.approx(1.0)
        assert all(0.0 <= share <= 1.0 for shares, _ in rows for share in shares)
    # AL-6: with no card to come the shown kings never win; with two to come they sometimes do
    assert tables[0] == [((1.0, 1.0, 1.0), 1.0)] or all(shares[0] == 1.0 for shares, _ in tables[0])
    beaten = sum(frequency for shares, frequency in tables[2] if shares[0] == 0.0)
    assert 0.0 < beaten < 0.2
    # a pot contested by both opponents is never won more often than one contested by either alone
    for shares, _ in tables[2]:
        assert shares[2] <= min(shares[0], shares[1])


def flop_view(game: Alamo, seat: int, **changes) -> dict:
    return dict(game.view(seat), **changes)


def three_handed_flop(shove: bool) -> tuple[Alamo, int]:
    """Hand 1 of a three-player match on the flop; the first player shoves when ``shove``.
    Returns the game and the seat now to act."""
    game = Alamo.new([1, 2, 3], {"dealer": 3}, FairRandom(b"street"))
    game.start()
    while game.to_act is None:
        game.advance()
    if shove:
        game.apply(game.to_act, {"type": "all_in"})
    return game, game.to_act


BOARD = ["Kd", "9s", "4h"]


@pytest.mark.parametrize("hole,expected", [(["7c", "2d"], {"fold"}), (["Kh", "Ks"], {"call", "all_in"})])
def test_facing_an_early_all_in_it_folds_trash_and_calls_with_a_set(hole, expected):
    game, seat = three_handed_flop(shove=True)
    view = flop_view(game, seat, my_cards=hole, board=BOARD)
    legal = [a.to_data() for a in game.legal_actions()]
    assert AlamoBot(FairRandom(b"b")).choose(view, legal)["type"] in expected


def test_unopened_it_checks_trash():
    game, seat = three_handed_flop(shove=False)
    view = flop_view(game, seat, my_cards=["7c", "2d"], board=BOARD)
    legal = [a.to_data() for a in game.legal_actions()]
    assert AlamoBot(FairRandom(b"b")).choose(view, legal) == {"type": "check"}


@pytest.mark.parametrize("hole,expected", [(["7c", "2d"], {"fold"}), (["Kh", "Ks"], {"raise", "all_in"})])
def test_facing_a_small_bet_it_folds_trash_and_raises_a_set(hole, expected):
    game, seat = three_handed_flop(shove=False)
    game.apply(seat, {"type": "bet", "amount": 3})
    seat = game.to_act
    view = flop_view(game, seat, my_cards=hole, board=BOARD)
    legal = [a.to_data() for a in game.legal_actions()]
    assert AlamoBot(FairRandom(b"b")).choose(view, legal)["type"] in expected


def test_AL4_AL7_street_counts_hole_cards_and_eliminated_cards_in_the_main_pot():
    game, seat = three_handed_flop(shove=False)
    view = flop_view(game, seat)
    legal = [a.to_data() for a in game.legal_actions()]
    street = Street.from_view(view, legal, 20, FairRandom(b"x"), 0.7)
    assert street.extra == 2 * 3  # antes are contributions; the six hole cards go with the main pot
    # an eliminated player's cards lie in the pot without being anyone's contribution (AL-7)
    street = Street.from_view(dict(view, pot=view["pot"] + 5), legal, 20, FairRandom(b"x"), 0.7)
    assert street.extra == 2 * 3 + 5


def test_a_fold_is_worth_the_stack_behind_and_nothing_is_worth_less_than_busting():
    game, seat = three_handed_flop(shove=True)
    view = flop_view(game, seat, my_cards=["7c", "2d"], board=BOARD)
    legal = [a.to_data() for a in game.legal_actions()]
    street = Street.from_view(view, legal, 100, FairRandom(b"x"), 0.7)
    behind = view["stacks"][str(seat)]
    assert street.value({"type": "fold"}) == pytest.approx(street.utility(behind))
    assert street.utility(view["ante"] + 1) == 0.0  # too few cards to ante and pull a hand (AL-7)
    assert 0.0 < street.value({"type": "call"}) < street.utility(behind)


def test_bot_plays_only_legal_actions_in_whole_matches():
    for i in range(6):
        players = 2 + i % 2
        bots = {s: AlamoBot(FairRandom(f"legal{i}{s}".encode())) if s == 1 else RandomBot(FairRandom(f"r{i}{s}".encode()))
                for s in range(1, players + 1)}
        # play_match raises IllegalAction on an illegal action
        game = Alamo.new(sorted(bots), {"preflop_betting": i % 3 == 0}, FairRandom(f"legal-match{i}".encode()))
        assert play_match(game, bots).result["winners"]


def test_bot_beats_random_heads_up():
    """60 matches, deterministic seed; fair share 0.5 (measured about 0.71 over 500)."""
    rate = win_rate("alamo", 2, 60, seed="unit")
    assert rate == win_rate("alamo", 2, 60, seed="unit")
    assert rate.rate > 0.5


def test_bot_beats_random_three_handed():
    """90 matches, deterministic seed; fair share 1/3 (measured 0.53 to 0.57 over 500)."""
    rate = win_rate("alamo", 3, 90, seed="unit")
    assert rate.rate > 0.4


@pytest.mark.slow
@pytest.mark.parametrize("players,floor", [(2, 0.55), (3, 0.40)])
def test_bot_beats_random_clearly(players, floor):
    """200 matches: the lower end of the 95% interval clears ``floor`` (fair share 1/players)."""
    rate = win_rate("alamo", players, 200)
    print(f"alamo equity vs random, {players} players: {rate.rate:.3f} [{rate.low:.3f}, {rate.high:.3f}]")
    assert rate.low > floor
