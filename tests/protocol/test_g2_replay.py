"""SPEC "Randomness" is enough to check every card of a real match.

A real server plays a match of each game (two people with client seeds, seated
in the reverse of the order they joined, plus a server bot; a spectator
watches). Then, with ONLY the algorithm of protocol/SPEC.md, implemented again
here from hashlib (no ``engine`` import), the revealed server seed and client
seeds rebuild the generator, and every random choice is replayed in the order
the spec gives: the first button or dealer, each hand's shuffle, Alamo's board
picks from the face-down pot and its winnings shuffles. Checked against what
the clients saw (board cards, cards shown, each person's own cards, Avalanche's
draws and every card played) and, after the match, against the hand histories
(``GET /api/tables/{id}/hands``), which hold every hidden card too.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections import Counter
from pathlib import Path

import httpx
import pytest

from cardhall.clients.bots import BotPlayer
from tests.server.conftest import running_server


@pytest.fixture
async def live():
    async with running_server() as srv:
        yield srv

# --------------------------------------------------------------------------- the spec, again


class G2:
    """SPEC "Randomness": SHA-256 counter-mode stream, rejection sampling, Fisher-Yates."""

    def __init__(self, server_seed: bytes, client_seeds: list[bytes]) -> None:
        material = b"cardhall/g2/v1" + server_seed
        for seed in client_seeds:
            material += len(seed).to_bytes(4, "big") + seed
        self.key = hashlib.sha256(material).digest()
        self.counter = 0
        self.buffer = b""

    def read(self, n: int) -> bytes:
        while len(self.buffer) < n:
            self.buffer += hashlib.sha256(self.key + self.counter.to_bytes(8, "big")).digest()
            self.counter += 1
        out, self.buffer = self.buffer[:n], self.buffer[n:]
        return out

    def randbelow(self, n: int) -> int:
        if n == 1:
            return 0  # no bytes read
        limit = 2**64 - (2**64 % n)
        while True:
            x = int.from_bytes(self.read(8), "big")
            if x < limit:
                return x % n

    def shuffle(self, items: list) -> None:
        for i in range(len(items) - 1, 0, -1):
            j = self.randbelow(i + 1)
            items[i], items[j] = items[j], items[i]


def standard_deck(jokers: int = 0) -> list[str]:
    return [r + s for s in "cdhs" for r in "23456789TJQKA"] + [("Xr", "Xb")[i % 2] for i in range(jokers)]


def clockwise(seats: list[int], after: int) -> list[int]:
    ordered = sorted(seats)
    return [s for s in ordered if s > after] + [s for s in ordered if s <= after]


RANK = {r: i for i, r in enumerate("23456789TJQKAX")}

# --------------------------------------------------------------------------- a real match

QUICK = {
    "fixed_limit_holdem": {"starting_stacks": 60},
    "no_limit_holdem": {"starting_stacks": 200},
    "alamo": {"max_hands": 5},
    "loco_poker": {"points_to_win": 2},
    "avalanche": {},
}
SEATS = {"fixed_limit_holdem": 3, "no_limit_holdem": 3, "alamo": 3, "loco_poker": 3, "avalanche": 2}


async def _match(live, game):
    ann = await live.client("ann", codec="json")
    bob = await live.client("bob")
    eve = await live.client("eve", codec="json")
    seats = SEATS[game]
    table = await ann.create_table(game, seats=seats, bots=seats - 2,
                                   options={"pause": 0, "bot_think": 0, **QUICK[game]})
    await eve.join(table, role="spectator")
    players = [BotPlayer(bob, table, "random", seat=2, seed="bob's seed", bot_seed=b"b"),
               BotPlayer(ann, table, "random", seat=1, seed="ann's seed", bot_seed=b"a")]
    bob_task = asyncio.get_running_loop().create_task(players[0].play(timeout=120))
    await asyncio.sleep(0.05)  # bob sits down first
    await asyncio.gather(bob_task, players[1].play(timeout=120))
    ended = await eve.next_event(table, timeout=60, where=lambda f: f["event"]["type"] == "match_ended")
    async with httpx.AsyncClient(base_url=live.http) as http:
        hands = (await http.get(f"/api/tables/{table}/hands")).text
    own = {}
    for seat, client in ((1, ann), (2, bob)):
        own[seat] = [f["event"] for f in client.frames if f.get("type") == "event" and f["table"] == table]
    public = [f["event"] for f in eve.frames if f.get("type") == "event" and f["table"] == table]
    for c in (ann, bob, eve):
        await c.close()
    return ended["event"], public, own, hands


def _generator(ended) -> G2:
    server_seed = bytes.fromhex(ended["server_seed"])
    assert hashlib.sha256(server_seed).hexdigest() == ended["commitment"]
    seeds = ended["client_seeds"]
    assert seeds == {"1": "ann's seed", "2": "bob's seed"}
    return G2(server_seed, [seeds[k].encode() for k in sorted(seeds, key=int)])  # seat order, not join order


def _private(own, seat, kind, field):
    return [e[field] for e in own[seat] if e["type"] == kind and field in e]


# --------------------------------------------------------------------------- per game


def _replay_board_game(game, rng, public, own, hands):
    """Hold'em and Loco Poker: one shuffle of a standard deck per hand."""
    start = next(e for e in public if e["type"] == "match_start")
    seats = start["seats"]
    if game != "fixed_limit_holdem":  # FL-1: the first button is the lowest seat, nothing drawn
        drawn = sorted(seats)[rng.randbelow(len(seats))]
        assert drawn == start.get("button", start.get("dealer"))
    checked = 0
    deals = []
    hand = None
    for e in public:
        if e["type"] == "hand_start":
            deck = standard_deck()
            rng.shuffle(deck)
            players = e["players"]
            n = len(players)
            hole = {p: [deck[k], deck[n + k]] for k, p in enumerate(players)}
            board = [deck[2 * n + 1], deck[2 * n + 2], deck[2 * n + 3], deck[2 * n + 5], deck[2 * n + 7]]
            hand = {"hole": hole, "board": board, "players": players}
            deals.append(hand)
        elif e["type"] in ("board", "street"):
            assert e["board"] == hand["board"][: len(e["board"])], (game, e)
            checked += len(e["cards"])
        elif e["type"] == "show":
            assert e["cards"] == hand["hole"][e["seat"]]
            checked += 2
        elif e["type"] == "showdown":
            for shown in e["hands"]:
                assert shown["cards"] == hand["hole"][shown["seat"]]
                checked += 2
    for seat in (1, 2):  # each person's own cards, hand by hand
        mine = _private(own, seat, "hole_cards", "cards")
        dealt = [d["hole"][seat] for d in deals if seat in d["hole"]]
        assert mine == dealt[-len(mine):] if mine else True
        checked += 2 * len(mine)
    # the hand histories hold every card dealt, hidden ones included
    if game == "loco_poker":
        records = httpx.Response(200, text=hands).json()["hands"]
        assert len(records) == len(deals)
        for rec, deal in zip(records, deals):
            hole = rec["hand"]["hole"]
            assert {int(s): c for s, c in hole.items()} == deal["hole"]
            assert rec["hand"]["board"] == deal["board"][: len(rec["hand"]["board"])]
            checked += 2 * len(hole) + len(rec["hand"]["board"])
    else:
        recorded = re.findall(r"\[(\d+)\].*?actions = \[(.*?)\]", hands, re.S)
        assert len(recorded) == len(deals)
        for (_, actions), deal in zip(recorded, deals):
            dealt = dict(re.findall(r"d dh p(\d+) (\w{4})", actions))
            for k, p in enumerate(deal["players"]):
                assert dealt[str(k + 1)] == "".join(deal["hole"][p])
                checked += 2
            board = "".join(re.findall(r"d db (\w+)", actions))
            assert board == "".join(deal["board"])[: len(board)]
    return checked


def _replay_avalanche(rng, public, own, hands):
    start = next(e for e in public if e["type"] == "game_start")
    seats, decks = start["seats"], start["decks"]
    assert sorted(seats)[rng.randbelow(len(seats))] == start["dealer"]
    deck = [c for _ in range(decks) for c in standard_deck()] + [("Xr", "Xb")[i % 2] for i in range(3 * decks)]
    rng.shuffle(deck)
    order = clockwise(seats, start["dealer"])
    held = {s: Counter() for s in seats}
    for i in range(10 * len(order)):
        held[order[i % len(order)]][deck[i]] += 1
    top = 10 * len(order)
    record = httpx.Response(200, text=hands).json()["hands"][0]["hand"]
    assert record["deck_order"] == deck
    checked = len(deck)
    for seat in (1, 2):  # the seat that sat down last got its deal inside its join snapshot
        for cards in _private(own, seat, "deal", "cards"):
            assert Counter(cards) == held[seat]
            checked += 10
    draws = {1: [], 2: []}
    for e in public:
        if e["type"] == "snowfall":
            held[e["seat"]][deck[top]] += 1
            draws.setdefault(e["seat"], []).append([deck[top]])
            top += 1
        elif e["type"] == "refill":
            taken = deck[top: top + e["count"]]
            held[e["seat"]].update(taken)
            draws.setdefault(e["seat"], []).append(taken)
            top += e["count"]
        elif e["type"] == "play":
            played = Counter(e["cards"])
            assert not played - held[e["seat"]], f"seat {e['seat']} played {e['cards']} it was never dealt"
            held[e["seat"]] -= played
            checked += len(e["cards"])
    for seat in (1, 2):
        mine = [[e["card"]] if e["type"] == "snowfall" else e["cards"] for e in own[seat]
                if e["type"] in ("snowfall", "refill") and ("card" in e or "cards" in e)]
        assert mine == draws[seat]
    return checked


def _replay_alamo(rng, public, own, hands):
    start = next(e for e in public if e["type"] == "match_start")
    seats = start["seats"]
    assert sorted(seats)[rng.randbelow(len(seats))] == start["dealer"]
    deck = standard_deck(2 if start["jokers"] else 0)
    rng.shuffle(deck)
    order = clockwise(seats, start["dealer"])
    piles = {s: deck[k::len(order)] for k, s in enumerate(order)}
    records = [r["hand"] for r in httpx.Response(200, text=hands).json()["hands"]]
    checked = 0
    face_down: list[str] = []
    board: list[str] = []
    hole: dict[int, list[str]] = {}
    street_bets: dict[int, list[str]] = {}
    players: list[int] = []
    mine = {1: _private(own, 1, "hole_cards", "cards"), 2: _private(own, 2, "hole_cards", "cards")}
    dealt = {1: [], 2: []}
    hand_no = 0
    for e in public:
        kind = e["type"]
        if kind == "eliminated":
            face_down.extend(piles[e["seat"]])
            piles[e["seat"]] = []
        elif kind == "hand_start":
            players, board, hole, street_bets = e["players"], [], {}, {}
            rec = records[hand_no]
            hand_no += 1
            assert rec["starting_stacks"] == {str(s): p for s, p in piles.items()}
            checked += sum(len(p) for p in piles.values())
        elif kind == "antes":
            for s in players:
                face_down.extend(piles[s][: e["ante"]])
                del piles[s][: e["ante"]]
        elif kind == "hole_cards":
            for s in players:
                hole[s] = piles[s][:2]
                del piles[s][:2]
                if s in dealt:
                    dealt[s].append(hole[s])
        elif kind == "action":
            moved = piles[e["seat"]][: e["cards"]]
            del piles[e["seat"]][: e["cards"]]
            face_down.extend(moved)
            street_bets.setdefault(e["seat"], []).extend(moved)
        elif kind == "uncalled":
            back = street_bets[e["seat"]][-e["cards"]:]
            for card in back:
                face_down.remove(card)
            piles[e["seat"]][:0] = back
        elif kind == "board":
            street_bets = {}
            turned = [face_down.pop(rng.randbelow(len(face_down))) for _ in e["cards"]]
            assert turned == e["cards"]
            board += turned
            checked += len(turned)
        elif kind == "show":
            assert e["cards"] == hole[e["seat"]]
            checked += 2
        elif kind == "award":
            pool = board + face_down
            holes = [c for s in players for c in hole[s]]
            assert e["hole_cards"] == len(holes)
            winners = {s for pot in e["pots"] for s in pot["winners"]}
            winnings: dict[int, list[str]] = {}
            if len(winners) == 1 and all(len(pot["winners"]) == 1 for pot in e["pots"]):
                winnings[winners.pop()] = pool + holes
            else:
                rng.shuffle(pool)
                at = 0
                for i, pot in enumerate(e["pots"]):
                    cards = pool[at: at + pot["cards"]]
                    at += pot["cards"]
                    if i == 0:
                        cards = cards + holes
                    if len(pot["winners"]) > 1:
                        rng.shuffle(cards)
                    taken = 0
                    for s in players:  # winners clockwise from the dealer's left, shares as announced
                        share = pot["shares"].get(str(s), 0)
                        winnings.setdefault(s, []).extend(cards[taken: taken + share]) if share else None
                        taken += share
            for s in players:
                if s in winnings:
                    rng.shuffle(winnings[s])
                    piles[s].extend(winnings[s])
            face_down, board = [], []
        elif kind == "hand_end":
            if e["reason"] == "last_player":  # AL-7: the pot of the eliminated cards, shuffled
                (winner,) = [int(s) for s in e["winnings"]]
                rng.shuffle(face_down)
                piles[winner].extend(face_down)
                face_down = []
            assert {str(s): len(p) for s, p in piles.items()} == e["stacks"]
    for seat in (1, 2):
        assert mine[seat] == dealt[seat][-len(mine[seat]):] if mine[seat] else True
        checked += 2 * len(mine[seat])
    return checked


@pytest.mark.parametrize("game", ["fixed_limit_holdem", "no_limit_holdem", "loco_poker", "alamo", "avalanche"])
async def test_every_card_of_a_real_match_from_the_revealed_seeds(live, game):
    ended, public, own, hands = await _match(live, game)
    rng = _generator(ended)
    if game == "avalanche":
        checked = _replay_avalanche(rng, public, own, hands)
    elif game == "alamo":
        checked = _replay_alamo(rng, public, own, hands)
    else:
        checked = _replay_board_game(game, rng, public, own, hands)
    assert checked > 20


def test_spec_test_vectors():
    """The test vectors printed in SPEC "Randomness", from the independent implementation."""
    zero = bytes(32)
    g = G2(zero, [])
    assert g.key.hex() == "659c282cbad73a60b7b1e1a3c1577a1b8460fb53325ac97b841624e57070f48d"
    assert g.read(16).hex() == "bec15bcb2564fa437624ac6b9f34acf9"
    g = G2(zero, [b"ann's seed", b"bob"])
    assert g.key.hex() == "c02568f3c82c27f5dbdda8e36d0f871d591ed34d4f0366d2f3f7a07ba2c99c32"
    assert g.randbelow(52) == 31
    g = G2(zero, [b"ann's seed", b"bob"])
    deck = standard_deck()
    g.shuffle(deck)
    assert deck[:8] == ["Td", "2h", "9s", "Ts", "6s", "Kc", "4h", "9c"] and 32 * g.counter - len(g.buffer) == 408
    spec = (Path(__file__).resolve().parents[2] / "protocol" / "SPEC.md").read_text()
    for text in ("659c282cbad73a60b7b1e1a3c1577a1b8460fb53325ac97b841624e57070f48d", "bec15bcb2564fa437624ac6b9f34acf9",
                 "c02568f3c82c27f5dbdda8e36d0f871d591ed34d4f0366d2f3f7a07ba2c99c32", "`Td 2h 9s Ts 6s Kc 4h 9c`"):
        assert text in spec
