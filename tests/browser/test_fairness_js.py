"""The browser's G-2 check (clients/web/js/fair.js, verify.js) against the Python generator and engines.

The JS generator must produce the same numbers as ``cardhall.engine.rng.FairRandom`` (the
rejection path included), and each game's replay (its renderer module's ``fairness``, found
through the catalogue) must accept every card of whole matches the Python engines dealt (as a
seat and as a spectator see them) and reject a single changed card or a wrong seed. Every
registered game is played, with its registration's ``quick_options``.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from cardhall.engine import plugins
from cardhall.engine.base import Event
from cardhall.engine.play import seat_bots
from cardhall.engine.registry import engine_class
from cardhall.engine.rng import FairRandom

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

SEED = bytes(range(32))
CLIENT_SEEDS = {"1": "ann's seed ♠", "3": "c"}



async def js(page: Any, body: str, arg: Any = None) -> Any:
    """Evaluate ``body`` (an async function body with ``fair``, ``verify`` and ``arg`` in scope)."""
    return await page.evaluate(
        "async (arg) => { const fair = await import('/web/js/fair.js');"
        " const verify = await import('/web/js/verify.js');" + body + "}", arg)


async def test_generator_matches_python(page: Any) -> None:
    seeds = [CLIENT_SEEDS[k] for k in sorted(CLIENT_SEEDS, key=int)]
    py = FairRandom(SEED, [s.encode() for s in seeds])
    deck52, deck110 = list(range(52)), list(range(110))
    py.shuffle(deck52)
    py.shuffle(deck110)
    draws = [py.randbelow(n) for n in (1, 2, 3, 7, 52, 1000, 2**32 + 15, 2**53 - 1)]
    got = await js(page, """
        const key = await fair.deriveKey(arg.seed, arg.seeds);
        return await fair.replayWith(key, (rng) => {
          const a = [...Array(52).keys()], b = [...Array(110).keys()];
          rng.shuffle(a); rng.shuffle(b);
          const d = [1, 2, 3, 7, 52, 1000, 2 ** 32 + 15, 2 ** 53 - 1].map((n) => rng.randbelow(n));
          return {a, b, d, position: rng.position};
        }, 4);""", {"seed": SEED.hex(), "seeds": seeds})
    assert got["a"] == deck52 and got["b"] == deck110
    assert got["d"] == draws
    assert got["position"] == py.position


async def test_rejection_sampling_matches_python(page: Any) -> None:
    # n = 2**63 + 1 rejects about half the draws: the path a deck shuffle almost never takes
    n = 2**63 + 1
    py = FairRandom(b"rejection")
    want = [str(py.randbelow(n)) for _ in range(40)]
    got = await js(page, """
        const key = await fair.deriveKey(arg.seed, []);
        return await fair.replayWith(key, (rng) => {
          const out = []; for (let i = 0; i < 40; i++) out.push(String(rng.randbelow(2n ** 63n + 1n)));
          return {out, position: rng.position};
        }, 2);""", {"seed": b"rejection".hex()})
    assert got["out"] == want
    assert got["position"] == py.position > 40 * 8  # some draws were rejected


async def test_commitment(page: Any) -> None:
    got = await js(page, "return await fair.commitmentOf(arg);", SEED.hex())
    assert got == hashlib.sha256(SEED).hexdigest()


# ----------------------------------------------------------------- whole matches

#: the games played whole (every registered one) and the seats of each match
GAMES = sorted(plugins.games())
SEATS = 3


def wire(obj: Any) -> Any:
    return json.loads(json.dumps(obj))


def play(game: str, viewer: int | None, label: str, n: int = SEATS) -> tuple[dict[str, Any], dict[str, Any]]:
    """A whole match of ``n`` seats with random bots and the game's ``quick_options``; the record
    the page keeps as ``viewer`` and its ``match_ended``."""
    options = dict(plugins.spec(game).quick_options)
    seeds = [CLIENT_SEEDS[k].encode() for k in sorted(CLIENT_SEEDS, key=int)]
    engine = engine_class(game).new(list(range(1, n + 1)), options, FairRandom(SEED, seeds))
    bots = seat_bots(game, n, FairRandom(label.encode()), "random")
    events: list[Event] = list(engine.start())
    steps = 0
    while not engine.finished:
        steps += 1
        assert steps < 200_000
        seat = engine.to_act
        if seat is not None:
            legal = [a.to_data() for a in engine.legal_actions()]
            events += engine.apply(seat, bots[seat].choose(engine.view(seat), legal))
        else:
            events += engine.advance()
    record = {
        "game": game, "match": 1, "you": viewer, "options": options, "commitment": hashlib.sha256(SEED).hexdigest(),
        "complete": True, "snapshot": None,
        "events": [wire({**e.view(viewer), "seq": i + 2}) for i, e in enumerate(events)],
    }
    ended = {"server_seed": SEED.hex(), "commitment": hashlib.sha256(SEED).hexdigest(), "client_seeds": CLIENT_SEEDS}
    return record, ended


async def verify(page: Any, record: dict[str, Any], ended: dict[str, Any]) -> dict[str, Any]:
    return await js(page, "return await verify.verifyMatch(arg[0], arg[1]);", [record, ended])


def first_private(record: dict[str, Any]) -> dict[str, Any]:
    """The first event carrying the viewer's own cards."""
    for e in record["events"]:
        if e["type"] in ("hole_cards", "deal") and "cards" in e:
            return e
    raise AssertionError("no private cards")


@pytest.mark.parametrize("game", GAMES)
async def test_replay_accepts_a_whole_match_and_rejects_a_changed_card(page: Any, game: str) -> None:
    record, ended = play(game, 1, f"bots/{game}")
    result = await verify(page, record, ended)
    assert result["status"] == "verified", (result["notes"], result["mismatches"][:3])
    assert result["commitmentOk"] and not result["mismatches"]
    assert result["checked"] >= 2

    # one private card swapped for another card of the deck: a mismatch naming it
    tampered = json.loads(json.dumps(record))
    event = first_private(tampered)
    card = event["cards"][0]
    event["cards"][0] = "2c" if card != "2c" else "3d"
    bad = await verify(page, tampered, ended)
    assert bad["status"] == "mismatch" and bad["mismatches"], bad

    # a revealed seed that is not the committed one
    wrong = {**ended, "server_seed": bytes(32).hex()}
    assert (await verify(page, record, wrong))["status"] == "mismatch"

    # the right server seed with another client seed deals other cards
    other = {**ended, "client_seeds": {**CLIENT_SEEDS, "3": "d"}}
    assert (await verify(page, record, other))["status"] == "mismatch"


@pytest.mark.parametrize("game", GAMES)
async def test_replay_as_a_spectator(page: Any, game: str) -> None:
    record, ended = play(game, None, f"bots/{game}")
    result = await verify(page, record, ended)
    if game == "avalanche":  # every card played is traced back to the seat it was dealt to
        assert result["status"] == "verified" and result["checked"] > 20, result
    else:  # boards and shown hands
        assert result["status"] in ("verified",) or result["checked"] == 0, result
        assert not result["mismatches"]


async def test_avalanche_counts_each_card_once(page: Any) -> None:
    """A card the seat was dealt and later played is one card verified, not two: the count is of
    distinct deck positions, never more than the deck holds."""
    record, ended = play("avalanche", 1, "bots/avalanche")
    events = record["events"]
    total = next(e for e in events if e["type"] == "game_start")["deck_total"]
    received = (sum(len(e["cards"]) for e in events if e["type"] == "deal" and "cards" in e)
                + sum(1 for e in events if e["type"] == "snowfall" and e["seat"] == 1)
                + sum(e["count"] for e in events if e["type"] == "refill" and e["seat"] == 1))
    played = {seat: sum(len(e["cards"]) for e in events if e["type"] == "play" and (e["seat"] == 1) == seat)
              for seat in (True, False)}
    result = await verify(page, record, ended)
    assert result["status"] == "verified", result
    # the seat's own cards once each (as received), plus every card the other seats played
    assert result["checked"] == received + played[False] <= total, (result["checked"], received, played, total)
    assert played[True] > 0  # some of the seat's cards were seen twice (dealt, then played): counted once

    spectator = await verify(page, *play("avalanche", None, "bots/avalanche"))
    assert spectator["checked"] == sum(played.values()) <= total  # a spectator sees each card once, when played
