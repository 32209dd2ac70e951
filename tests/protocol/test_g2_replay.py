"""SPEC "Randomness" is enough to check every card of a real match.

A real server plays a match of each game and its rematch (two people with
client seeds, seated in the reverse of the order they joined, plus a server
bot; a spectator watches). Then, with ONLY the algorithm of protocol/SPEC.md,
implemented again here from hashlib (no ``engine`` import) and followed as
written, the revealed server seed and client seeds rebuild each match's
generator, and every random choice is replayed in the order the spec gives:
the first button or dealer (drawn only in the table's first match, never in a
rematch: G-2, G-7), each hand's shuffle, Alamo's board picks from the
face-down pot and its winnings (a lone winner's pool + hole cards unshuffled,
then every winner's shuffle). Checked against what the clients saw (board
cards, cards shown, each person's own cards, Avalanche's draws and every card
played) and, after the match, against the hand histories (``GET
/api/tables/{id}/hands``), which hold every hidden card too (Hold'em's burns in
``_cardhall_burns``). The msgpack client's frames carry string map keys only
(SPEC "Transport").
"""

from __future__ import annotations

import asyncio
import hashlib
import tomllib
from collections import Counter
from pathlib import Path

import httpx
import pytest

from cardhall.clients.bots import BotPlayer
from tests.conftest import until
from tests.games import GAMES, quick, seats  # the games and their quick options only: no rule of theirs
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

MATCHES = 2  # the first match and its rematch
#: the fewest cards a match's replay must check (at least one whole hand): a Loco Poker match can be
#: one hand folded before the flop (its record's three seats' hole cards, two seats' own frames)
MIN_CHECKED = {"loco_poker": 2 * 3 + 2 * 2}


def _string_keys(value, where="frame"):
    """SPEC "Transport": map keys are strings in both codecs (seat-keyed maps too)."""
    if isinstance(value, dict):
        for key, item in value.items():
            assert isinstance(key, str), f"{where}: map key {key!r} is not a string"
            _string_keys(item, f"{where}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _string_keys(item, f"{where}[{i}]")


async def _match(live, game):
    """Play the match and its rematch; returns, per match, (match_ended, public events, own events,
    that match's hand records), and the table's ``info.options``."""
    ann = await live.client("ann", codec="json")
    bob = await live.client("bob")  # msgpack
    eve = await live.client("eve", codec="json")
    n = seats(game, 3)
    table = await ann.create_table(game, seats=n, bots=n - 2, options=quick(game, pause=0, bot_think=0))
    info = (await eve.join(table, role="spectator"))["info"]
    players = [BotPlayer(bob, table, "random", seat=2, seed="bob's seed", bot_seed=b"b", rematches=MATCHES - 1),
               BotPlayer(ann, table, "random", seat=1, seed="ann's seed", bot_seed=b"a", rematches=MATCHES - 1)]
    bob_task = asyncio.get_running_loop().create_task(players[0].play(timeout=240))
    # bob sits down first: ann joins once bob's join is answered (his seat is known)
    await until(lambda: players[0].seat is not None or bob_task.done(), 60, "bob's join answered")
    await asyncio.gather(bob_task, players[1].play(timeout=240))
    await eve.next_event(table, timeout=60, where=lambda f: f["event"]["type"] == "match_ended"
                         and f["event"]["match"] == MATCHES)
    async with httpx.AsyncClient(base_url=live.http) as http:
        hands = (await http.get(f"/api/tables/{table}/hands")).text
    for frame in bob.frames:
        _string_keys(frame)
    frames = {seat: [f["event"] for f in client.frames if f.get("type") == "event" and f["table"] == table]
              for seat, client in ((0, eve), (1, ann), (2, bob))}
    for c in (ann, bob, eve):
        await c.close()
    matches = []
    for number in range(1, MATCHES + 1):
        public = _of_match(frames[0], number)
        own = {seat: _of_match(frames[seat], number) for seat in (1, 2)}
        ended = next(e for e in frames[0] if e["type"] == "match_ended" and e["match"] == number)
        matches.append((ended, public, own, _records(game, hands, number)))
    return matches, info["options"]


def _of_match(events, number):
    """The events of match ``number``: from its ``match_started`` up to its ``match_ended``."""
    out, inside = [], False
    for e in events:
        if e["type"] == "match_started":
            inside = e["match"] == number
        if inside:
            out.append(e)
        if e["type"] == "match_ended" and e["match"] == number:
            break
    return out


def _records(game, hands, number):
    """The hand records of match ``number`` (SPEC "HTTP"): PHH tables with ``_cardhall_match``
    for Hold'em, else the JSON list's ``hand`` maps."""
    if game.endswith("holdem"):
        return [h for h in tomllib.loads(hands).values() if h["_cardhall_match"] == number]
    return [r["hand"] for r in httpx.Response(200, text=hands).json()["hands"] if r["match"] == number]


def _generator(ended) -> G2:
    server_seed = bytes.fromhex(ended["server_seed"])
    assert hashlib.sha256(server_seed).hexdigest() == ended["commitment"]
    seeds = ended["client_seeds"]
    assert seeds == {"1": "ann's seed", "2": "bob's seed"}
    return G2(server_seed, [seeds[k].encode() for k in sorted(seeds, key=int)])  # seat order, not join order


def _first_button_or_dealer(rng, game, start, number, options, previous):
    """SPEC "Randomness", "The first button or dealer": drawn (the very first draw) only in the
    table's first match and only when the table's option is not set; a rematch's is the seat
    after the previous match's first, clockwise, never drawn; fixed limit never draws."""
    key = "button" if game.endswith("holdem") else "dealer"
    seats = start["seats"]
    if number > 1:
        expected = clockwise(seats, previous)[0]
    elif options.get(key) is not None:
        expected = options[key]
    elif game == "fixed_limit_holdem":
        expected = min(seats)  # FL-1
    else:
        expected = sorted(seats)[rng.randbelow(len(seats))]
    assert start[key] == expected, (game, number, start[key], expected)
    return expected


def _private(own, seat, kind, field):
    return [e[field] for e in own[seat] if e["type"] == kind and field in e]


# --------------------------------------------------------------------------- per game


def _replay_board_game(rng, game, public, own, records, number, options, previous):
    """Hold'em and Loco Poker: one shuffle of a standard deck per hand."""
    start = next(e for e in public if e["type"] == "match_start")
    first = _first_button_or_dealer(rng, game, start, number, options, previous)
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
            burns = [deck[2 * n], deck[2 * n + 4], deck[2 * n + 6]]
            hand = {"hole": hole, "board": board, "burns": burns, "players": players}
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
    # the hand histories hold every card dealt, hidden ones (burns too) included
    assert len(records) == len(deals)
    for rec, deal in zip(records, deals):
        if game == "loco_poker":
            assert {int(s): c for s, c in rec["hole"].items()} == deal["hole"]
            board = rec["board"]
            assert rec["burns"] == deal["burns"][: {0: 0, 3: 1, 4: 2, 5: 3}[len(board)]]
            checked += 2 * len(rec["hole"]) + len(board) + len(rec["burns"])
        else:
            dealt = {a.split()[2]: a.split()[3] for a in rec["actions"] if a.startswith("d dh ")}
            for k, p in enumerate(deal["players"]):
                assert dealt[f"p{k + 1}"] == "".join(deal["hole"][p])
                checked += 2
            board = [a.split()[2][i: i + 2] for a in rec["actions"] if a.startswith("d db ") for i in (0, 2, 4)]
            board = [c for c in board if c]
            assert rec["_cardhall_burns"] == deal["burns"][: {0: 0, 3: 1, 4: 2, 5: 3}[len(board)]]
            checked += len(rec["_cardhall_burns"])
        assert board == deal["board"][: len(board)]
    return checked, first


def _replay_avalanche(rng, game, public, own, records, number, options, previous):
    start = next(e for e in public if e["type"] == "game_start")
    seats, decks = start["seats"], start["decks"]
    first = _first_button_or_dealer(rng, game, start, number, options, previous)
    deck = [c for _ in range(decks) for c in standard_deck()] + [("Xr", "Xb")[i % 2] for i in range(3 * decks)]
    rng.shuffle(deck)
    order = clockwise(seats, start["dealer"])
    held = {s: Counter() for s in seats}
    dealt = {s: [] for s in seats}
    for i in range(10 * len(order)):
        held[order[i % len(order)]][deck[i]] += 1
        dealt[order[i % len(order)]].append(deck[i])
    top = 10 * len(order)
    (record,) = records
    assert record["deck_order"] == deck
    checked = len(deck)
    for seat in (1, 2):  # the seat that sat down last got its deal inside its join snapshot
        for cards in _private(own, seat, "deal", "cards"):
            # sorted by rank, then by the card string (SPEC "Avalanche")
            assert cards == sorted(dealt[seat], key=lambda c: (RANK[c[0]], c))
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
    return checked, first


def _replay_alamo(rng, game, public, own, records, number, options, previous):
    """SPEC "Randomness", Alamo, as written: the stacks, each board card's pick, each hand's
    settling (a lone winner: pool + hole cards, unshuffled; else the pool shuffled and cut into the
    pots' slices, shared pots shuffled; a winner's shares joined main pot first), then every
    winner's shuffle of its winnings, which go under its stack."""
    start = next(e for e in public if e["type"] == "match_start")
    seats = start["seats"]
    first = _first_button_or_dealer(rng, game, start, number, options, previous)
    deck = standard_deck(2 if start["jokers"] else 0)
    rng.shuffle(deck)
    order = clockwise(seats, start["dealer"])
    piles = {s: deck[k::len(order)] for k, s in enumerate(order)}
    checked = 0
    alone = 0
    face_down: list[str] = []
    board: list[str] = []
    hole: dict[int, list[str]] = {}
    street_bets: dict[int, list[str]] = {}
    players: list[int] = []
    mine = {1: _private(own, 1, "hole_cards", "cards"), 2: _private(own, 2, "hole_cards", "cards")}
    dealt = {1: [], 2: []}
    hand_no = 0
    rec = None
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
            winnings: dict[int, list[str]] = {}
            lone = {w for pot in e["pots"] for w in pot["winners"]}
            if len(lone) == 1 and all(len(pot["winners"]) == 1 for pot in e["pots"]):
                # one seat wins every pot alone: pool + hole cards, in that order, no draw yet
                winnings[lone.pop()] = pool + holes
                alone += 1
            else:
                rng.shuffle(pool)
                at = 0
                for i, pot in enumerate(e["pots"]):  # main pot first
                    cards = pool[at: at + pot["cards"]]
                    at += pot["cards"]
                    if i == 0:
                        cards = cards + holes
                    if len(pot["winners"]) > 1:
                        rng.shuffle(cards)
                    taken = 0
                    for s in players:  # consecutive slices of the announced shares, hand_start order
                        share = pot["shares"].get(str(s), 0)
                        if share:
                            winnings.setdefault(s, []).extend(cards[taken: taken + share])
                            taken += share
            # then, in both cases, each winner in hand_start order shuffles its winnings (AL-4)
            for s in players:
                if s in winnings:
                    rng.shuffle(winnings[s])
                    piles[s].extend(winnings[s])
            assert rec is not None and rec["winnings"] == {str(s): w for s, w in winnings.items()}
            checked += sum(len(w) for w in winnings.values())
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
    assert alone, "no hand of this match was won alone"
    return checked, first


#: each game's replay from SPEC "Randomness" (a registered game needs one here)
REPLAYS = {"fixed_limit_holdem": _replay_board_game, "no_limit_holdem": _replay_board_game,
           "loco_poker": _replay_board_game, "avalanche": _replay_avalanche, "alamo": _replay_alamo}


@pytest.mark.parametrize("game", GAMES)
async def test_every_card_of_a_real_match_and_its_rematch_from_the_revealed_seeds(live, game):
    assert game in REPLAYS, f"{game}: no replay of SPEC 'Randomness' for it in this test"
    matches, options = await _match(live, game)
    first = None
    for number, (ended, public, own, records) in enumerate(matches, 1):
        rng = _generator(ended)
        checked, first = REPLAYS[game](rng, game, public, own, records, number, options, first)
        assert checked >= MIN_CHECKED.get(game, 21), (game, number, checked)


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
