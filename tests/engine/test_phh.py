"""cardhall.engine.phh: reading and writing PHH text, parsing actions, and mapping a hand onto engine options.

Facts about the standard are checked against pokerkit 0.7.7's own reader and writer (the reference).
"""

from __future__ import annotations

import doctest
import warnings
from decimal import Decimal

import pokerkit  # a test dependency: the reference implementation
import pytest

import cardhall.engine.phh
from cardhall.engine.cards import standard_deck
from cardhall.engine.phh import PHHError, deck_order, dumps, dumps_all, engine_setup, loads, loads_all, parse_action
from tests.engine.test_phh_real_hands import shared_files

NT_HEADS_UP = """
variant = "NT"
antes = [0, 0]
blinds_or_straddles = [10, 20]
min_bet = 20
starting_stacks = [1000, 1200]
actions = ["d dh p1 AhAd", "d dh p2 KhKd", "p2 cbr 60", "p1 cc", "d db 2c7d9s", "p1 cc", "p2 cc",
           "d db 3c", "p1 cc", "p2 cc", "d db 4h", "p1 cc", "p2 cc", "p1 sm AhAd", "p2 sm"]
finishing_stacks = [1060, 1140]
"""


def test_docstring_examples():
    result = doctest.testmod(cardhall.engine.phh)
    assert result.failed == 0 and result.attempted > 0


# -- actions -------------------------------------------------------------------
@pytest.mark.parametrize(
    "text, actor, op, cards, amount",
    [
        ("d dh p1 AcKd", 1, "dh", ["Ac", "Kd"], None),
        ("d dh p2 ????", 2, "dh", ["??", "??"], None),
        ("d db Jc3d5c", "d", "db", ["Jc", "3d", "5c"], None),
        ("d db 4h # turn", "d", "db", ["4h"], None),
        ("p3 f", 3, "f", None, None),
        ("p12 cc", 12, "cc", None, None),
        ("p1 cbr 1067100", 1, "cbr", None, 1067100),
        ("p1 cbr 9,999", 1, "cbr", None, 9999),
        ("p1 cbr 22.5", 1, "cbr", None, Decimal("22.5")),
        ("p1 sm Ac2d", 1, "sm", ["Ac", "2d"], None),
        ("p4 sm", 4, "sm", None, None),
        ("p4 sm -", 4, "sm", None, None),
    ],
)
def test_parse_action(text, actor, op, cards, amount):
    action = parse_action(text)
    assert (action.actor, action.op, action.cards, action.amount, action.text) == (actor, op, cards, amount, text)


@pytest.mark.parametrize(
    "text, message",
    [
        ("p0 f", "not a player label"),
        ("x1 f", "not a player label"),
        ("p1 cbr", "malformed action"),
        ("p1 cbr lots", "not an amount"),
        ("d dh p1 AcK", "bad cards"),
        ("d dh p1 AcZz", "bad cards"),
        ("p1 sd AcKd", "not part of Texas Hold'em"),
        ("p1 pb", "not part of Texas Hold'em"),
        ("d deal p1", "malformed action"),
        ("", "malformed action"),
    ],
)
def test_parse_action_rejects(text, message):
    with pytest.raises(PHHError, match=message):
        parse_action(text)


# -- reading ---------------------------------------------------------------------
def test_loads_reads_floats_exactly_as_decimals():
    hand = loads("finishing_stacks = [10112.5, 9775.0, 10000]\nvariant = 'NT'")
    assert hand["finishing_stacks"] == [Decimal("10112.5"), Decimal("9775.0"), 10000]
    assert isinstance(hand["finishing_stacks"][0], Decimal)


def test_loads_rejects_text_that_is_not_toml():
    with pytest.raises(PHHError, match="not valid TOML"):
        loads("variant = ")


def test_loads_all_reads_phhs_sections_in_order():
    text = dumps_all([loads(NT_HEADS_UP), {**loads(NT_HEADS_UP), "starting_stacks": [500, 500]}])
    hands = loads_all(text)
    assert [name for name, _ in hands] == ["1", "2"]
    assert hands[1][1]["starting_stacks"] == [500, 500]
    with pytest.raises(PHHError, match="not a hand table"):
        loads_all("x = 1")


def test_find_files_walks_folders_in_natural_order(tmp_path):
    (tmp_path / "a").mkdir()
    for name in ("a/10.phh", "a/2.phh", "a/41b.phhs", "a/notes.txt", "b.phh"):
        (tmp_path / name).write_text("")
    found = [p.relative_to(tmp_path).as_posix() for p in cardhall.engine.phh.find_files([tmp_path / "a", tmp_path / "b.phh"])]
    assert found == ["a/2.phh", "a/10.phh", "a/41b.phhs", "b.phh"]
    with pytest.raises(FileNotFoundError):
        list(cardhall.engine.phh.find_files([tmp_path / "missing"]))


# -- writing -----------------------------------------------------------------------
def test_dumps_then_loads_gives_the_hand_back():
    hand = loads(NT_HEADS_UP)
    hand["_cardhall_options"] = {"profile": "phh", "cap": None, "item_stakes": "a goat"}
    hand["_cardhall_seats"] = [3, 5]
    hand["finishing_stacks"] = [Decimal("1060.5"), 1139]
    back = loads(dumps(hand))
    assert back == {**hand, "_cardhall_options": {"profile": "phh", "item_stakes": "a goat"}}


def test_pokerkit_reads_what_we_write_and_we_read_what_it_writes():
    hand = loads(NT_HEADS_UP)
    hand["_cardhall_game"] = "no_limit_holdem"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # pokerkit warns about a user field without the leading underscore
        theirs = pokerkit.HandHistory.loads(dumps(hand))
    assert theirs.actions == hand["actions"] and theirs.starting_stacks == [1000, 1200]
    assert theirs.user_defined_fields == {"_cardhall_game": "no_limit_holdem"}
    written = {**hand, "ante_trimming_status": False}  # pokerkit writes its default out
    assert loads(theirs.dumps()) == written
    assert [h for _, h in loads_all(pokerkit.HandHistory.dumps_all([theirs, theirs]))] == [written, written]


# -- mapping onto the engine --------------------------------------------------------
def _hand(**fields):
    base = loads(NT_HEADS_UP)
    base.update(fields)
    return base


@pytest.mark.parametrize(
    "fields, expected",
    [
        ({}, {"small_blind": 10, "big_blind": 20, "ante": 0, "big_blind_ante": 0, "button": 2, "min_bet": 20}),
        ({"antes": [5, 5]}, {"ante": 5, "big_blind_ante": 0}),
        ({"antes": 5}, {"ante": 5}),
        ({"antes": [0, 20]}, {"ante": 0, "big_blind_ante": 20}),
        ({"antes": [5, 25]}, {"ante": 5, "big_blind_ante": 20}),
        ({"antes": [5, 25, 5], "starting_stacks": [9] * 3, "blinds_or_straddles": [10, 20, 0]},
         {"ante": 5, "big_blind_ante": 20}),
        ({"antes": [0, 500, 0, 0], "starting_stacks": [9] * 4, "blinds_or_straddles": [250, 500, 0, 0]},
         {"big_blind_ante": 500, "button": 4, "small_blind": 250, "big_blind": 500, "starting_stacks": [9] * 4}),
        ({"ante_trimming_status": True}, {"ante_trimming": True}),
        ({"ante_trimming_status": False}, {"ante_trimming": False}),
        ({"starting_stacks": [1000.0, 1200]}, {"starting_stacks": [1000, 1200]}),
        ({"variant": "FT", "small_bet": 20, "big_bet": 40}, {"small_bet": 20, "big_bet": 40}),
    ],
)
def test_engine_setup_maps_the_standard_fields(fields, expected):
    if "starting_stacks" in fields:
        fields["starting_stacks"] = [Decimal(str(s)) if isinstance(s, float) else s for s in fields["starting_stacks"]]
    game, seats, options = engine_setup(_hand(**fields))
    assert game == ("fixed_limit_holdem" if fields.get("variant") == "FT" else "no_limit_holdem")
    assert seats == list(range(1, len(options["starting_stacks"]) + 1))
    assert options["profile"] == "phh" and options["blind_levels"] is None
    for key, value in expected.items():
        assert options[key] == value, key
    assert ("min_bet" in options) == (game == "no_limit_holdem")


def test_engine_setup_uses_our_user_fields_for_seats_button_and_other_options():
    hand = _hand(_cardhall_seats=[4, 2], _cardhall_button=3,  # a dead button deals like pn's seat
                 _cardhall_options={"profile": "table", "cap": 4, "small_blind": 999, "blind_levels": 15},
                 _cardhall_game="no_limit_holdem")
    game, seats, options = engine_setup(hand)
    assert seats == [2, 4]
    assert options["starting_stacks"] == [1200, 1000]  # seat 2 is p2, seat 4 is p1
    assert options["button"] == 2 and options["profile"] == "table" and options["cap"] == 4
    assert options["small_blind"] == 10 and options["blind_levels"] is None
    assert "ante_trimming" not in options  # a phh-profile option only


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"variant": "PO"}, "variant 'PO' is not supported"),
        ({"variant": "FT"}, "missing required field.*small_bet, big_bet"),
        ({"min_bet": None}, "must be a number"),
        ({"blinds_or_straddles": [10, 20, 40], "starting_stacks": [100] * 3}, "straddles are not supported"),
        ({"antes": [2, 1], "starting_stacks": [100, 100]}, "antes = \\[2, 1\\] are not supported"),
        ({"antes": [1, 2, 3], "starting_stacks": [100] * 3, "blinds_or_straddles": [1, 2, 0]}, "are not supported"),
        ({"blinds_or_straddles": [20, 0], "starting_stacks": [100] * 2}, "heads-up both blinds are posted"),
        ({"antes": [3, 0, 0], "starting_stacks": [100] * 3, "blinds_or_straddles": [1, 2, 0]}, "are not supported"),
        ({"starting_stacks": [Decimal("100.5"), 100]}, "not a whole number"),
        ({"starting_stacks": [100]}, "2 to 9 players"),
        ({"_cardhall_seats": [1, 1]}, "distinct seats"),
        ({"_cardhall_game": "alamo"}, "does not match variant NT"),
    ],
)
def test_engine_setup_rejects_what_the_engines_cannot_play(fields, message):
    hand = _hand(**fields)
    if fields.get("min_bet", 0) is None:
        hand["min_bet"] = "twenty"
    if fields.get("variant") == "FT":
        hand.pop("min_bet")
    with pytest.raises(PHHError, match=message):
        engine_setup(hand)


def test_heads_up_blinds_follow_pokerkit_p1_posts_the_big_blind():
    """Our mapping (p1 = seat 1 = big blind, button = seat 2 posts the small blind)
    is what pokerkit 0.7.7 does with the same positional list."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        state = pokerkit.HandHistory.loads(dumps({**loads(NT_HEADS_UP), "antes": [0, 3], "actions": []})).create_state()
    assert list(state.bets) == [20, 10]  # p1 big blind, p2 small blind
    assert state.antes[1] == 3 and state.get_effective_ante(0) == 3  # the ante at index 1 is the big blind's


# -- the stacked deck order -------------------------------------------------------------
def test_deck_order_follows_the_dealing_contract():
    hand = loads(NT_HEADS_UP)
    order = deck_order(hand)
    assert sorted(order) == sorted(standard_deck())
    # hole cards one at a time from p1, two rounds; then burn, flop, burn, turn, burn, river
    assert order[:4] == ["Ah", "Kh", "Ad", "Kd"]
    assert order[5:8] == ["2c", "7d", "9s"] and order[9] == "3c" and order[11] == "4h"
    assert {order[4], order[8], order[10]}.isdisjoint({"Ah", "Ad", "Kh", "Kd", "2c", "7d", "9s", "3c", "4h"})


def test_deck_order_fills_unknown_cards_and_uses_cards_shown_later():
    hand = _hand(actions=["d dh p1 ????", "d dh p2 ????", "p2 cc", "p1 cc", "d db Ah2h3h", "p1 sm KsKd"])
    order = deck_order(hand)
    assert order[0] == "Ks" and order[2] == "Kd"
    assert order[5:8] == ["Ah", "2h", "3h"] and len(set(order)) == 52
    assert "Ks" not in (order[1], order[3])


@pytest.mark.parametrize(
    "actions, message",
    [
        (["d dh p1 AhAd", "d dh p2 AhKd"], "Ah dealt more than once"),
        (["d dh p1 AhAd", "d dh p1 KhKd"], "dealt hole cards twice"),
        (["d dh p1 AhAdAc"], "two hole cards"),
        (["d dh p3 AhAd"], "only 2 players"),
    ],
)
def test_deck_order_rejects_impossible_deals(actions, message):
    with pytest.raises(PHHError, match=message):
        deck_order(_hand(actions=actions))


def test_every_shared_file_parses_and_maps():
    """All 37 real hands read, map onto engine options and give a full deck order."""
    files = shared_files()
    assert len(files) == 37
    for path in files:
        for _, hand in cardhall.engine.phh.load_file(path):
            game, seats, options = engine_setup(hand)
            assert game in ("fixed_limit_holdem", "no_limit_holdem")
            assert len(seats) == len(hand["starting_stacks"]) and options["button"] == seats[-1]
            assert sorted(deck_order(hand)) == sorted(standard_deck())


# -- our own hands: written out, read back, replayed to the same result ---------------
def _match_hands(game: str, seed: int, profile: str, limit: int) -> list[dict]:
    """Up to ``limit`` hand records of one random-action match."""
    from cardhall.clients.bench.engine import random_action
    from cardhall.engine.registry import engine_class
    from cardhall.engine.rng import FairRandom

    rng = FairRandom(f"phh-round-trip/{game}/{profile}/{seed}".encode())
    players = 2 + rng.randbelow(5 if game == "fixed_limit_holdem" else 8)
    options: dict = {"profile": profile, "starting_stacks": [40 + rng.randbelow(600) for _ in range(players)],
                     "blind_levels": 4}
    kind = rng.randbelow(4)
    if kind == 1:
        options["ante"] = 1 + rng.randbelow(5)
    elif kind == 2:
        options["big_blind_ante"] = 5 + rng.randbelow(20)
    if profile == "phh" and rng.randbelow(2):
        options["ante_trimming"] = True
    engine = engine_class(game).new(list(range(1, players + 1)), options, rng.spawn("deal"))
    engine.start()
    choose = rng.spawn("choose")
    records = []
    while len(records) < limit:
        if engine.to_act is not None:
            engine.apply(engine.to_act, random_action(engine.legal_actions(), choose))
        elif engine.pending == "hand" or engine.finished:
            records.append(engine.hand_record())
            if engine.finished:
                break
            engine.advance()
        else:
            engine.advance()
    return records


def _dead_small_blind(record: dict) -> bool:
    blinds = record["blinds_or_straddles"]
    return len(blinds) > 2 and blinds[0] > 0 and blinds[1] == 0


@pytest.mark.parametrize("profile", ["table", "phh"])
@pytest.mark.parametrize("game", ["fixed_limit_holdem", "no_limit_holdem"])
def test_every_hand_we_play_round_trips_through_phh(game, profile):
    """Issue 2 item 5: each hand's ``hand_record()`` written as PHH, read back and
    replayed gives the same finishing stacks (``match``), hands with a dead small
    blind (FL-1, after a bust-out) included."""
    from cardhall.engine.replay import replay_hand

    replayed = dead = 0
    for seed in range(30):
        records = _match_hands(game, seed, profile, limit=25)
        for record in records:
            back = loads(dumps(record))
            assert back == cardhall.engine.phh._plain(record)
            result = replay_hand(back)
            assert result.status == "match", (result.detail, record)
            assert result.stacks == record["finishing_stacks"]
            replayed += 1
            dead += _dead_small_blind(record)
        # the whole match as one .phhs file reads back hand by hand
        assert [h for _, h in loads_all(dumps_all(records))] == [cardhall.engine.phh._plain(r) for r in records]
    print(f"{game} {profile}: {replayed} hands round-trip, {dead} with a dead small blind")
    assert replayed >= 150


def test_FL1_a_dead_small_blind_hand_round_trips():
    """A hand dealt after the big blind busted: blinds ``[bb, 0, ...]``, p1 posts the
    big blind, nobody the small blind (FL-1); it replays to the recorded stacks."""
    from cardhall.engine.replay import replay_hand

    found = 0
    for seed in range(40):
        for record in _match_hands("no_limit_holdem", seed, "table", limit=40):
            if _dead_small_blind(record):
                setup = cardhall.engine.phh.engine_setup(loads(dumps(record)))
                assert setup[2]["dead_small_blind"] is True
                assert replay_hand(loads(dumps(record))).status == "match"
                found += 1
    assert found >= 3, "no dead small blind in 40 matches"


def test_cli_replays_a_phhs_file_of_our_hands(tmp_path):
    from cardhall.clients.cli import main

    records = _match_hands("no_limit_holdem", 3, "phh", limit=10)
    path = tmp_path / "match.phhs"
    path.write_text(dumps_all(records))
    assert main(["phh", "replay", str(path)]) == 0
    bad = {**records[0], "actions": records[0]["actions"] + ["p1 cbr 5"]}
    (tmp_path / "bad.phh").write_text(dumps(bad))
    assert main(["phh", "replay", str(tmp_path / "bad.phh")]) == 1
