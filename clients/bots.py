"""Play a seat through the public protocol with one of the engines' strategies.

This is the template for a third-party bot: it uses nothing but the protocol
(``protocol/SPEC.md``) through :class:`cardhall.clients.client.Client`. The strategies
are the engines' own (``cardhall.engine.bots.registry``): a bot's ``choose(view,
legal)`` takes exactly the ``state`` of a ``snapshot`` and the ``legal``
actions of the frame that puts the seat to act, so the same code runs inside
the server and out here.

The loop, in protocol terms:

1. ``join`` the table as a player (optionally a seat and a client seed, G-2);
2. read events; a frame whose ``turn.seat`` is ours carries either ``legal``
   (our decision) or ``continue: true`` (solo play waits for us between streets
   and hands, G-4);
3. for a decision, ``join`` again to get a fresh ``snapshot`` (its ``state`` is
   our view now, its ``legal`` and ``turn`` the open turn), ask the strategy,
   and ``act`` with ``turn`` = the turn id, so an action that comes too late is
   refused (``stale_turn``) instead of landing on a later turn;
4. stop at ``match_ended`` (or play the rematches).

A strategy that needs only the legal actions (``random``) skips step 3's
``join``. Writing your own bot: replace :meth:`BotPlayer.decide`.

>>> async def main(url, table):                         # doctest: +SKIP
...     async with Client(url, reconnect=True) as c:
...         await c.hello("my bot")
...         result = await BotPlayer(c, table).play()
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from cardhall.clients.client import Client, ServerError
from cardhall.engine.bots.base import Bot
from cardhall.engine.bots.registry import BOTS, DEFAULT, make_bot
from cardhall.engine.rng import FairRandom

log = logging.getLogger("cardhall.bot")

Frame = dict[str, Any]

#: strategies that decide from the legal actions alone (no fresh state needed)
_STATELESS = {"random"}
#: a request refused with ``rate_limited`` is sent again after these waits (seconds), then given up
RATE_LIMITED_WAITS = (0.1, 0.2, 0.4, 0.8, 1.6)


class BotPlayer:
    """Plays ``client``'s seat at ``table`` with the strategy ``strategy`` (a
    name of ``cardhall.engine.bots.registry.BOTS[game]``; None: the game's default).

    ``seat``/``seed``: as in ``join``. ``bot_seed``: bytes for the strategy's
    own generator (default: random; bots never use the match's, G-2).
    ``rematches``: how many more matches to play after the first (asks for the
    rematch, G-7). After :meth:`play`, :attr:`seat`, :attr:`game`,
    :attr:`actions` (decisions sent) and :attr:`results` (each match's result).
    """

    def __init__(self, client: Client, table: str, strategy: str | None = None, *, seat: int | None = None,
                 seed: str | None = None, bot_seed: bytes | None = None, rematches: int = 0) -> None:
        self.client = client
        self.table = table
        self.strategy = strategy
        self.wanted_seat = seat
        self.seed = seed
        self.bot_seed = bot_seed if bot_seed is not None else secrets.token_bytes(32)
        self.rematches = rematches
        self.seat: int | None = None
        self.game: str | None = None
        self.bot: Bot | None = None
        self.actions = 0
        self.results: list[dict[str, Any]] = []

    async def play(self, timeout: float | None = None) -> list[dict[str, Any]]:
        """Join, play until the last match ends, return the results (one per match);
        TimeoutError after ``timeout`` seconds (None: no limit). A cancellation
        (a Ctrl-C) always ends it with CancelledError, even one that lands as the
        last match ends (``asyncio.timeout``, not ``wait_for``: see
        :class:`~cardhall.clients.client.Client`, "Cancellation")."""
        async with asyncio.timeout(timeout):
            return await self._play()

    async def _play(self) -> list[dict[str, Any]]:
        snap = await self.client.join(self.table, role="player", seat=self.wanted_seat, seed=self.seed)
        self.seat = snap["you"]
        self.game = snap["info"]["game"]
        name = self.strategy or DEFAULT[self.game]
        if name not in BOTS[self.game]:
            raise ValueError(f"{self.game} has no strategy {name!r}; it has {', '.join(sorted(BOTS[self.game]))}")
        self.strategy = name
        self.bot = make_bot(self.game, name, FairRandom(self.bot_seed))
        log.info("seat %s at %s (%s), strategy %s", self.seat, self.table, self.game, name)
        await self._on_frame(snap)
        async for frame in self.client.events(self.table):
            if frame["type"] == "event" and frame["event"]["type"] == "match_ended":
                self.results.append(frame["event"]["result"])
                if len(self.results) > self.rematches:
                    return self.results
                await self._request_rematch()
                continue
            await self._on_frame(frame)
        return self.results

    async def _on_frame(self, frame: Frame) -> None:
        """Handle one frame; if the connection drops meanwhile (and the client
        reconnects), decide again from a fresh snapshot: the turn we were
        answering was received before the drop, so it will not come again."""
        try:
            await self._handle(frame)
        except ConnectionError:
            for _ in range(3):
                await self.client.wait_ready()
                try:
                    await self._handle(await self.client.join(self.table, role="player"))
                    return
                except ConnectionError:
                    continue
            raise

    async def _request_rematch(self) -> None:
        try:
            await self.client.act(self.table, {"type": "rematch"})
        except ServerError as exc:  # another seat asked first
            if exc.code != "bad_state":
                raise

    async def _handle(self, frame: Frame) -> None:
        turn = frame.get("turn")
        if not turn or turn["seat"] != self.seat:
            return
        if turn.get("continue"):
            await self._send({"type": "continue"}, turn["id"])
            return
        if "legal" not in frame:
            return
        legal, turn_id, state = frame["legal"], turn["id"], frame.get("state")
        if self.strategy not in _STATELESS and frame["type"] != "snapshot":
            snap = await self._patiently(lambda: self.client.join(self.table, role="player"))
            if "legal" not in snap or snap.get("turn", {}).get("seat") != self.seat:
                return  # the turn passed meanwhile (clock)
            legal, turn_id, state = snap["legal"], snap["turn"]["id"], snap["state"]
        action = self.decide(state or {}, legal)
        await self._send(action, turn_id)

    def decide(self, state: dict[str, Any], legal: Sequence[Frame]) -> Frame:
        """The action to send: the strategy's choice from the snapshot ``state``
        (this seat's view) and the ``legal`` actions. Override to write your own."""
        assert self.bot is not None
        return self.bot.choose(state, list(legal))

    async def _patiently(self, request: Callable[[], Awaitable[Frame]]) -> Frame:
        """``request()``'s reply, sent again after each of :data:`RATE_LIMITED_WAITS`
        while the server answers ``rate_limited`` (SPEC "Limits"); other errors
        (and the last ``rate_limited``) raise ServerError."""
        for wait in RATE_LIMITED_WAITS:
            try:
                return await request()
            except ServerError as exc:
                if exc.code != "rate_limited":
                    raise
                await asyncio.sleep(wait)
        return await request()

    async def _send(self, action: Frame, turn_id: int) -> None:
        try:
            await self._patiently(lambda: self.client.act(self.table, action, turn=turn_id))
            if action["type"] != "continue":
                self.actions += 1
        except ServerError as exc:
            if exc.code in ("stale_turn", "not_your_turn", "bad_state"):
                return  # too late: the table moved on (a clock, a reconnect)
            if exc.code == "illegal_action":
                log.warning("illegal action %r refused (%s); playing safe", action, exc.message)
                await self._send_safe(turn_id)
                return
            raise

    async def _send_safe(self, turn_id: int) -> None:
        snap = await self.client.join(self.table, role="player")
        legal = {a["type"]: a for a in snap.get("legal", [])}
        for kind in ("check", "call", "snowfall", "fold"):
            if kind in legal:
                await self._send_once({"type": kind}, turn_id)
                return
        if "play" in legal:  # Avalanche: one card of the lowest rank held
            rank = min(legal["play"]["groups"], key="23456789TJQKAX".index)
            await self._send_once({"type": "play", "rank": rank, "count": 1}, turn_id)

    async def _send_once(self, action: Frame, turn_id: int) -> None:
        try:
            await self.client.act(self.table, action, turn=turn_id)
        except ServerError as exc:
            log.warning("safe action %r refused too: %s", action, exc)
