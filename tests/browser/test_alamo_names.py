"""Alamo's hand names in Chromium count the jokers as wild, exactly as the engine ranks them (RULES AL-2).

The client's namer (``bestHand`` of clients/web/js/games/alamo.js, over showdown.js's evaluator) is
run in a page and compared with :mod:`cardhall.engine.games.alamo_ranking`: the category, every
tie-break rank (decoded from the engine's value), the name drawn, and the five cards it marks as the
winning ones (which, jokers included, must rank as the whole hand does).

* A table of hands: a joker in every category it can make, two jokers, hands of five and six cards
  (AL-6: a showdown with three or four board cards), and the tester's hand (board J♦ 4♦ 7♠ Q♠ Q♣,
  Joker + A♦: three queens, not a pair).
* 360 random hands of five to seven cards with 0, 1 and 2 jokers (a seeded ``random.Random``).
* Whole Alamo matches played by the engine: after every showdown, the name beside each seat that
  showed a joker and the pot's line in the centre (the felt), and the replayer's show steps built
  from the engine's hand records.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from cardhall.engine.games.alamo_ranking import FIVE_OF_A_KIND, hand_name, hand_value
from cardhall.engine.play import seat_bots
from cardhall.engine.registry import engine_class
from cardhall.engine.rng import FairRandom

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

WORD = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine", 10: "ten",
        11: "jack", 12: "queen", 13: "king", 14: "ace"}
#: the engine's categories (eval7's names, and five of a kind) as the page names them
CATEGORY = {"High Card": "High card", "Pair": "Pair", "Two Pair": "Two pair", "Trips": "Three of a kind",
            "Straight": "Straight", "Flush": "Flush", "Full House": "Full house", "Quads": "Four of a kind",
            "Straight Flush": "Straight flush", "Five of a Kind": "Five of a kind"}
#: how many ranks of an eval7 value (4-bit rank indexes from bit 16 down) rank a hand of each category
RANKED = {0: 5, 1: 4, 2: 3, 3: 3, 4: 1, 5: 5, 6: 2, 7: 2, 8: 1}
DECK = [r + s for s in "cdhs" for r in "23456789TJQKA"]


def words(v: int) -> str:
    return "sixes" if v == 6 else WORD[v] + "s"


def engine_score(cards: list[str]) -> tuple[int, list[int]]:
    """The engine's value of ``cards`` as [category 0..9, tie-break ranks 2..14, high first]."""
    value = hand_value(cards)
    if value >= FIVE_OF_A_KIND:
        return 9, [value - FIVE_OF_A_KIND]
    category = value >> 24
    return category, [((value >> (16 - 4 * i)) & 0xF) + 2 for i in range(RANKED[category])]


def engine_name(cards: list[str]) -> str:
    """The name a person should read for the engine's ranking of ``cards``."""
    category, r = engine_score(cards)
    return {
        9: lambda: f"Five of a kind, {words(r[0])}",
        8: lambda: "Royal flush" if r[0] == 14 else f"Straight flush, {WORD[r[0]]} high",
        7: lambda: f"Four of a kind, {words(r[0])}",
        6: lambda: f"Full house, {words(r[0])} full of {words(r[1])}",
        5: lambda: f"Flush, {WORD[r[0]]} high",
        4: lambda: f"Straight, {WORD[r[0]]} high",
        3: lambda: f"Three of a kind, {words(r[0])}",
        2: lambda: f"Two pair, {words(r[0])} and {words(r[1])}",
        1: lambda: f"Pair of {words(r[0])}",
        0: lambda: f"High card, {WORD[r[0]]}",
    }[category]()


#: (board and hole cards, the engine's category, the name shown): a joker in every category it can
#: make (high card and two pair it never makes: it pairs a card, or makes trips of a pair), two jokers
CASES: list[tuple[str, str, str]] = [
    ("Jd 4d 7s Qs Qc Xr Ad", "Trips", "Three of a kind, queens"),  # the tester's hand
    ("2c 7d 9h Js 4c Xr Kd", "Pair", "Pair of kings"),
    ("2c 7d 9h Js Xb", "Pair", "Pair of jacks"),
    ("2c 7d 9h Js 4c 3h Kd", "High Card", "High card, king"),
    ("2c 7d 9h 9s 4c 7h Kd", "Two Pair", "Two pair, nines and sevens"),
    ("2c 7d 9h 9s 4c Xr Kd", "Trips", "Three of a kind, nines"),
    ("5c 6d 7h 9s Kc Xr 2d", "Straight", "Straight, nine high"),
    ("Ac 2d 3h 4s 9c Xb", "Straight", "Straight, five high"),
    ("Tc Jd Qh Ks 2c Xr 3d", "Straight", "Straight, ace high"),
    ("Ac 9c 5c 2c Kd Xr 7h", "Flush", "Flush, ace high"),
    ("Ac Ad Kc Kd 7h Xr 2s", "Full House", "Full house, aces full of kings"),
    ("6c 6d 2c 2d 7h Xb", "Full House", "Full house, sixes full of twos"),
    ("Ac Ad Ah 7h 2s Xr Kd", "Quads", "Four of a kind, aces"),
    ("5h 6h 7h 8h Kc Xr 2d", "Straight Flush", "Straight flush, nine high"),
    ("Ts Js Qs Ks 2c Xb 3d", "Straight Flush", "Royal flush"),
    ("Ac Ad Ah As 7d Xb 2c", "Five of a Kind", "Five of a kind, aces"),
    ("2c 7d 9h Js 4c Xr Xb", "Straight", "Straight, jack high"),
    ("2c 7d 9h Kh 4c Xr Xb", "Trips", "Three of a kind, kings"),
    ("Kc 7d 2h Kh 4c Xr Xb", "Quads", "Four of a kind, kings"),
    ("2c 7c 9c Kh 4d Xr Xb", "Flush", "Flush, ace high"),
    ("9s Ts Js 2h 4d Xr Xb", "Straight Flush", "Straight flush, king high"),
    ("8c 8d 8h 2c 4d Xr Xb", "Five of a Kind", "Five of a kind, eights"),
    ("Qc Qd Qh Qs 4d Xr Xb", "Five of a Kind", "Five of a kind, queens"),
    ("Xr Xb 3c 8d Kh", "Trips", "Three of a kind, kings"),
]


def random_hands(count: int) -> list[list[str]]:
    """``count`` hands of 5 to 7 cards with 0, 1 and 2 jokers in turn (seeded test data)."""
    rng = random.Random(20240611)
    hands = []
    for i in range(count):
        jokers = ["Xr", "Xb"][: i % 3]
        size = 5 + (i // 3) % 3
        cards = rng.sample(DECK, size - len(jokers)) + jokers
        rng.shuffle(cards)
        hands.append(cards)
    return hands



async def client_hands(page: Any, hands: list[list[str]]) -> list[dict[str, Any]]:
    """The page's ``bestHand`` of each hand: {category, name, score, cards}."""
    return await page.evaluate("""async (hands) => {
      const { bestHand } = await import("/web/js/games/alamo.js");
      return hands.map((cards) => bestHand(cards));
    }""", hands)


def check(cards: list[str], got: dict[str, Any]) -> None:
    category, ranks = engine_score(cards)
    assert got["category"] == CATEGORY[hand_name(hand_value(cards))], (cards, got)
    assert got["score"] == [category, ranks], (cards, got)  # kickers too
    assert got["name"] == engine_name(cards), (cards, got)
    five = got["cards"]
    assert len(five) == 5 and all(five.count(c) <= cards.count(c) for c in five), (cards, five)
    assert hand_value(five) == hand_value(cards), (cards, five)  # the five marked win as the hand does


async def test_table_of_wild_hands(page: Any) -> None:
    hands = [case.split() for case, _, _ in CASES]
    for cards, (_, category, name) in zip(hands, CASES):
        assert hand_name(hand_value(cards)) == category, cards  # the table says what the engine says
        assert engine_name(cards) == name, cards
    got = await client_hands(page, hands)
    for cards, g, (_, _, name) in zip(hands, got, CASES):
        check(cards, g)
        assert g["name"] == name
    # every category a joker can make is in the table, with one joker and with two
    for jokers in (1, 2):
        made = {c for cards, (_, c, _) in zip(hands, CASES) if sum(x[0] == "X" for x in cards) == jokers}
        assert made >= {"Trips", "Straight", "Flush", "Quads", "Straight Flush", "Five of a Kind"}, (jokers, made)
    assert {c for cards, (_, c, _) in zip(hands, CASES) if "Xr" in cards and "Xb" not in cards} >= {"Pair", "Full House"}


async def test_random_hands_as_the_engine_ranks_them(page: Any) -> None:
    hands = random_hands(360)
    got = await client_hands(page, hands)
    for cards, g in zip(hands, got):
        check(cards, g)
    assert {len(c) for c in hands} == {5, 6, 7}
    assert {sum(x[0] == "X" for x in c) for c in hands} == {0, 1, 2}


def alamo_matches(seeds: range) -> list[dict[str, Any]]:
    """Whole 3-seat Alamo matches (jokers in the deck, random bots): the events a spectator gets and
    each hand's record as the history serves it."""
    out = []
    for seed in seeds:
        engine = engine_class("alamo").new([1, 2, 3], {"max_hands": 30}, FairRandom(f"names/{seed}".encode()))
        bots = seat_bots("alamo", 3, FairRandom(f"names-bots/{seed}".encode()), "random")
        events = [e.view(None) for e in engine.start()]
        records: list[Any] = []
        while not engine.finished:
            seat = engine.to_act
            if seat is None:
                step = engine.advance()
            else:
                step = engine.apply(seat, bots[seat].choose(engine.view(seat), [a.to_data() for a in engine.legal_actions()]))
            events += [e.view(None) for e in step]
            record = engine.hand_record()
            if record is not None and (not records or records[-1]["hand"] != record["hand"]):
                records.append(record)
        out.append(json.loads(json.dumps({"events": events, "records": records})))
    return out


async def test_felt_and_replayer_name_joker_hands(page: Any) -> None:
    matches = alamo_matches(range(24))
    # the felt: at each award, the name beside every seat that showed, and the centre's pot line
    felt = await page.evaluate("""async (matches) => {
      const g = (await import("/web/js/games/alamo.js")).default;
      const out = [];
      for (const m of matches) {
        let s = null;
        for (const e of m.events) {
          if (e.type === g.firstEvent) s = g.init(e);
          if (!s) continue;
          g.reduce(s, e, null);
          if (e.type !== "award") continue;
          const ctx = { you: null, names: {} };
          for (const [seat, cards] of Object.entries(s.shown)) {
            const v = g.seatView(s, Number(seat), ctx);
            const line = v.lines.find((el) => el.classList && el.classList.contains("hand-name"));
            const box = document.createElement("div");
            box.append(v.cards);
            const marked = [...box.querySelectorAll(".card.win")].map((c) => c.dataset.card);
            const centre = g.center(s, ctx);
            out.push({ seat: Number(seat), cards, board: [...s.board], name: line ? line.textContent : null, marked,
              won: e.pots.some((p) => p.winners.includes(Number(seat))), main: e.pots[0].winners[0] === Number(seat),
              boardMarked: [...centre.querySelectorAll(".board .card.win")].map((c) => c.dataset.card),
              centre: centre.querySelector(".hand-result").textContent });
          }
        }
      }
      return out;
    }""", matches)
    jokers = [f for f in felt if any(c[0] == "X" for c in f["cards"])]
    assert len(jokers) >= 5, felt
    for f in felt:
        if len(f["board"]) < 3:
            continue
        cards = f["board"] + f["cards"]
        assert f["name"] == engine_name(cards), f
        assert set(f["marked"]) <= set(f["cards"]), f
        if f["main"]:
            # the main pot's winner: its best five marked (a joker as itself), the name in the centre
            five = f["marked"] + f["boardMarked"]
            assert len(five) == 5 and hand_value(five) == hand_value(cards), f
            assert "(" not in f["centre"] or f"({engine_name(cards)})" in f["centre"], f
        elif not f["won"]:
            assert not f["marked"], f
    # the replayer: the show steps of every hand record that showed a joker
    records = [r for m in matches for r in m["records"] if any(c[0] == "X" for s in r["shown"] for c in r["hole_cards"][str(s)])]
    assert records
    steps = await page.evaluate("""async (records) => {
      const g = (await import("/web/js/games/alamo.js")).default;
      const n = (seat) => `seat ${seat}`;
      return records.map((r) => {
        const { steps } = g.history.hand(r, n);
        const last = steps[steps.length - 1].scene.seats;
        return { texts: steps.map((s) => s.text), shows: Object.fromEntries(last.map((x) => [x.seat, x.shows])) };
      });
    }""", records)
    for r, got in zip(records, steps):
        if len(r["board"]) < 3:
            continue
        for seat in r["shown"]:
            cards = r["hole_cards"][str(seat)]
            name = engine_name(r["board"] + cards)
            assert got["shows"][str(seat)] == name, (r["board"], cards, got)
            assert any(t.startswith(f"seat {seat} shows") and t.endswith(f"({name})") for t in got["texts"]), got
