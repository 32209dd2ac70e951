"""Helpers for the live tests: play a table through the protocol, check frames.

Players choose with the engines' ``random`` bot from exactly what the protocol
gave them (the legal actions in their ``event`` frame), so every move goes
over the websocket like a third-party client's.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable
from typing import Any

from cardhall.clients.client import Client, ServerError
from cardhall.engine.bots.random_bot import RandomBot
from cardhall.engine.rng import FairRandom

Frame = dict[str, Any]

CARD = re.compile(r"^(?:[2-9TJQKA][cdhs]|X[rb])$")


def cards_in(obj: Any, out: set[str] | None = None) -> set[str]:
    """Every card string anywhere inside ``obj``."""
    if out is None:
        out = set()
    if isinstance(obj, str):
        if CARD.match(obj):
            out.add(obj)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            cards_in(k, out)
            cards_in(v, out)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            cards_in(v, out)
    return out


async def play(client: Client, table: str, seed: str, *, until: str = "match_ended", timeout: float = 60.0,
               act_delay: float = 0.0, snapshot: Frame | None = None) -> list[Frame]:
    """Play ``client``'s seat at ``table`` with random legal moves (and
    ``continue`` in solo play) until an event of type ``until``; returns the
    event frames seen. ``snapshot``: the join's snapshot (it carries the turn
    when the player was to act on joining)."""
    bot = RandomBot(FairRandom(seed.encode()))
    seen: list[Frame] = []
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    pending = snapshot
    answered: set[int] = set()  # a turn comes again with ``resumed`` (G-8): answer it once
    while True:
        if pending is not None:
            frame, pending = pending, None
        else:
            frame = await client.next_event(table, timeout=max(0.01, deadline - loop.time()))
            seen.append(frame)
            if frame["event"]["type"] == until:
                return seen
        turn = frame.get("turn")
        if turn is None or turn["id"] in answered:
            continue
        if "legal" in frame:
            answered.add(turn["id"])
            if act_delay:
                await asyncio.sleep(act_delay)
            action = bot.choose({}, frame["legal"])
            await client.act(table, action, turn=turn["id"])
        elif turn.get("continue") and turn["seat"] == client_seat(client, table):
            try:
                await client.act(table, {"type": "continue"}, turn=turn["id"])
            except ServerError as exc:  # a later frame may already have moved on
                if exc.code != "stale_turn":
                    raise


_SEATS: dict[tuple[int, str], int] = {}


def remember_seat(client: Client, table: str, seat: int) -> None:
    _SEATS[(id(client), table)] = seat


def client_seat(client: Client, table: str) -> int | None:
    return _SEATS.get((id(client), table))


async def watch(client: Client, table: str, until: str = "match_ended", timeout: float = 60.0) -> list[Frame]:
    """Read ``client``'s events at ``table`` until one of type ``until``."""
    seen: list[Frame] = []
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        frame = await client.next_event(table, timeout=max(0.01, deadline - loop.time()))
        seen.append(frame)
        if frame["event"]["type"] == until:
            return seen


def event_frames(client: Client, table: str) -> list[Frame]:
    """Every ``event`` frame ``client`` received for ``table`` (recorded)."""
    return [f for f in client.frames if f.get("type") == "event" and f.get("table") == table]


def check_gap_free(frames: Iterable[Frame], start: int) -> None:
    """``seq`` runs ``start+1, start+2, ...`` without gaps or repeats."""
    expected = start + 1
    for f in frames:
        assert f["seq"] == expected, f"seq {f['seq']} where {expected} was due"
        expected += 1
