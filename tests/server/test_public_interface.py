"""The public interface gaps the client developers found, over real HTTP and
websockets on loopback: the game catalogue (``GET /api/games``) agrees with
what ``create_table`` accepts, ``match_started`` carries the options the match
is played with, the join that fills the last seat gets its snapshot before the
match's events (gap-free, no repeat), and the server's own page passes the
``Origin`` check when ``allowed_origins`` lists other sites."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import httpx
import pytest
from websockets.exceptions import InvalidStatus

from cardhall.clients.client import Client, ServerError
from cardhall.engine.bots.registry import BOTS, DEFAULT
from cardhall.engine.registry import GAMES, engine_class
from cardhall.protocol.schemas import FrameValidator
from cardhall.server.options import TABLE_OPTIONS
from tests.conftest import until
from tests.server.conftest import TEST_SETTINGS, running_server
from tests.server.play import check_gap_free

FAST = {"pause": 0, "bot_think": 0}


def _out_of_range(option: dict[str, Any]) -> Any:
    """A value the catalogue entry ``option`` says is refused, or None when it names none."""
    if option["type"] in ("int", "number") and "min" in option:
        return option["min"] - 1
    if option["type"] in ("int", "number") and "max" in option:
        return option["max"] + 1
    if option["type"] == "choice":
        return "no such value"
    if option["type"] == "bool":
        return "yes"
    if option["type"] == "text" and "max" in option:
        return "x" * (int(option["max"]) + 1)
    return None


async def test_catalogue_lists_what_create_table_accepts(live):
    async with httpx.AsyncClient(base_url=live.http) as http:
        r = await http.get("/api/games")
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    body = r.json()
    FrameValidator().check_catalogue(body)
    assert [g["name"] for g in body["games"]] == list(GAMES)
    assert [o["name"] for o in body["table_options"]] == [o.name for o in TABLE_OPTIONS]
    for entry in body["games"]:
        game = entry["name"]
        ann = await live.client("ann")  # a connection per game: its requests stay within one frame budget
        cls = engine_class(game)
        assert entry["title"] == cls.title
        assert (entry["seats"]["min"], entry["seats"]["max"]) == (cls.min_seats, cls.max_seats)
        assert entry["bots"] == sorted(BOTS[game]) and entry["default_bot"] == DEFAULT[game]
        assert {o["name"]: o["default"] for o in entry["options"]} == cls.default_options
        # the defaults, given explicitly, are accepted; a table with no seats named gets the default
        table = await ann.create_table(game, options={o["name"]: o["default"] for o in entry["options"]})
        assert live.hall.tables[table].machine.n_seats == entry["seats"]["default"]
        # every bound the catalogue states is the one create_table enforces, named in the error
        for option in entry["options"] + body["table_options"]:
            bad = _out_of_range(option)
            if bad is None:
                continue
            with pytest.raises(ServerError) as err:
                await ann.create_table(game, seats=entry["seats"]["min"], options={option["name"]: bad})
            assert err.value.code == "bad_options" and err.value.frame.get("option") == option["name"], option
        for seats in (entry["seats"]["min"] - 1, entry["seats"]["max"] + 1):
            with pytest.raises(ServerError) as err:
                await ann.create_table(game, seats=seats)
            assert err.value.code == "bad_request"
        with pytest.raises(ServerError) as err:
            await ann.create_table(game, seats=2, bots=["no_such_bot"])
        assert err.value.code in ("bad_request", "bad_options")
        await ann.create_table(game, seats=2, bots=[entry["bots"][0]])
    # a rule over two options (FL-1/NL-1: the small blind at most the big blind) names the first one too
    for game in ("fixed_limit_holdem", "no_limit_holdem"):
        with pytest.raises(ServerError) as err:
            await ann.create_table(game, seats=2, options={"small_blind": 30, "big_blind": 20})
        assert err.value.code == "bad_options" and err.value.frame.get("option") == "small_blind"
    await ann.close()


#: options given per game (some defaults changed) and what the match must then be played with
GIVEN: dict[str, dict[str, Any]] = {
    "no_limit_holdem": {"starting_stacks": 300, "small_blind": 5, "big_blind": 10, "blind_levels": None},
    "fixed_limit_holdem": {"starting_stacks": [100, 120], "cap": 3},
    "alamo": {"max_hands": 2},
    "loco_poker": {"points_to_win": 2, "multi_call": "duels"},
    "avalanche": {"dealer": 2},
}


@pytest.mark.parametrize("game", GIVEN)
async def test_match_started_carries_the_options_played(live, game):
    ann = await live.client("ann", codec="json")
    table = await ann.create_table(game, seats=2, bots=1, options={**FAST, **GIVEN[game]})
    snap = await ann.join(table, role="player")
    started = await ann.next_event(table, where=lambda f: f["event"]["type"] == "match_started")
    first = await ann.next_event(table)  # the engine's first event: match_start / game_start
    options = started["event"]["options"]
    cls = engine_class(game)
    assert set(options) == set(cls.default_options)
    for name, value in GIVEN[game].items():
        if name == "starting_stacks" and isinstance(value, int):
            value = [value, value]  # resolved: one stack per seat, in seat order
        assert options[name] == value, name
    for name in set(cls.default_options) - set(GIVEN[game]) - {"button", "dealer", "jokers", "decks",
                                                                   "starting_stacks"}:
        assert options[name] == cls.default_options[name], name
    key = "button" if "button" in options else "dealer"
    assert options[key] in (1, 2) and options[key] == first["event"][key] == live.hall.tables[table].machine.first_dealer
    if game == "avalanche":
        assert options["dealer"] == 2 and options["decks"] == first["event"]["decks"] == 2
    if game == "alamo":
        assert options["jokers"] is False  # two players: no jokers (AL-1), decided from the seats
    # nothing about the deck or the seed: the same for every viewer, and no card anywhere in it
    assert not {"deck", "seed", "server_seed"} & set(options)
    assert snap["info"]["commitment"] == started["event"]["commitment"]
    await ann.close()


@pytest.mark.parametrize("codec, batch", [("msgpack", True), ("json", False)])
async def test_join_that_fills_the_last_seat_gets_snapshot_then_the_match(live, codec, batch):
    ann = await live.client("ann")
    table = await ann.create_table("loco_poker", seats=3, bots=1, options=FAST)
    await ann.join(table, role="player", seat=1)
    bob = await Client(live.url, codec=codec, batch=batch, record=True).connect()
    await bob.hello("bob")
    snap = await bob.join(table, role="player")  # seat 2, the last one: the match starts (G-9)
    assert snap["type"] == "snapshot" and snap["you"] == 2
    assert snap["info"]["status"] == "waiting" and snap["state"] is None and "turn" not in snap
    assert [o["seat"] for o in snap["info"]["occupants"]] == [1, 2, 3]
    # let the table settle on a person's turn (the bot, if first, acts at once) and the frames arrive
    actor = live.hall.tables[table]
    t = actor.machine
    await until(lambda: (actor.mailbox.empty() and t.turn_kind == "human" and bob.seqs.get(table) == t.seq
                         and ann.seqs.get(table) == t.seq), 30, "a person's turn, its frames received")
    frames = [f for f in bob.frames if f.get("table") == table]
    assert frames[0] is snap or frames[0] == snap  # the join's reply comes first
    events = [f for f in frames[1:] if f["type"] == "event"]
    assert len(events) == len(frames) - 1  # nothing but events after it
    check_gap_free(events, snap["seq"])
    assert events[0]["event"]["type"] == "match_started" and events[0]["seq"] == snap["seq"] + 1
    assert events[1]["event"]["type"] == "match_start"
    assert events[-1]["seq"] == t.seq and bob.gaps == 0
    # bob's own hole cards came as an event (he sees his, only his)
    hole = next(f["event"] for f in events if f["event"]["type"] == "hole_cards")
    assert len(hole["cards"]) == 2
    # the turn: its event, once; legal in it only if it is bob's
    turn_frames = [f for f in events if f.get("turn", {}).get("id") == t.turn_id]
    assert len(turn_frames) == 1 and ("legal" in turn_frames[0]) == (t.turn_seat == 2)
    # ann (already subscribed) got the same seqs: seated, presence, then the match, no repeat
    ann_events = [f for f in ann.frames if f.get("type") == "event" and f.get("table") == table]
    seqs = [f["seq"] for f in ann_events]
    assert seqs == list(range(seqs[0], t.seq + 1)) and ann.gaps == 0
    by_seq = {f["seq"]: f["event"]["type"] for f in ann_events}
    assert [by_seq[f["seq"]] for f in events] == [f["event"]["type"] for f in events]
    assert by_seq[snap["seq"] - 1] == "seated" and by_seq[snap["seq"]] == "presence"
    for c in (ann, bob):
        await c.close()


async def test_own_page_origin_accepted_foreign_refused():
    settings = replace(TEST_SETTINGS, allowed_origins=("https://cards.example",))
    async with running_server(settings) as live:
        host = live.http.removeprefix("http://")  # 127.0.0.1:PORT, what the client sends as Host
        with pytest.raises(InvalidStatus) as refused:
            await Client(live.url, origin="https://evil.example").connect()
        assert refused.value.response.status_code == 403
        for foreign in (f"https://{host}", "http://127.0.0.1:1", f"http://{host}.evil.example"):
            with pytest.raises(InvalidStatus):  # another scheme, port or host is another origin
                await Client(live.url, origin=foreign).connect()
        for allowed in (f"http://{host}", f"HTTP://{host.upper()}", "https://cards.example", None):
            c = await Client(live.url, origin=allowed).connect()
            assert (await c.hello("page"))["type"] == "welcome"
            await c.close()
        # the page served at / names its origin exactly like that
        async with httpx.AsyncClient(base_url=live.http) as http:
            assert (await http.get("/")).status_code == 200
