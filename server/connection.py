"""One client connection's outgoing side: a bounded queue and its writer.

Tables never await a client: they push already encoded frames with
:meth:`Connection.push`, which only appends to a deque, then :meth:`Connection.flush`
it (a table does once it has pushed everything of one step to everyone; a
callback scheduled by the first push flushes what nobody flushed). A flush
writes what is queued at once through the server's ``send_now`` extension
(``server/ws_protocol.py``): several frames, for a client that asked for
batches (``hello`` with ``batch: true``), leave as one ``batch`` frame, one
websocket message and one socket write (SPEC.md "Batching and grouping"). When the
transport cannot take it now (its buffer is full: a client that reads slowly)
or the server lacks the extension, one writer task per connection sends the
queue through ASGI ``send``, which waits; frames pushed meanwhile queue up and
leave together. A client whose queue passes ``Settings.send_queue`` frames is
dropped (close code 4009): its subscriptions end and its transport is aborted.

:class:`Connections` is the hall's registry of open connections by id: tables
know their subscribers only by that id.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Hashable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, cast

from cardhall.protocol.codec import Codec
from cardhall.protocol.compact import Layouts
from cardhall.server.ratelimit import TurnCredit

if TYPE_CHECKING:
    from cardhall.server.players import Player

log = logging.getLogger("cardhall.connection")

#: websocket close codes the server uses (SPEC.md "Closing").
CLOSE_GOING_AWAY = 1001
CLOSE_RATE_LIMITED = 4008
CLOSE_SLOW_CONSUMER = 4009
CLOSE_TABLE_GONE = 4004
#: this node lost track of a table the connection watches (a fault of the service's nodes or its
#: Redis): reconnect and join every table again with ``since`` (protocol 1.2)
CLOSE_RESUBSCRIBE = 4012

Send = Callable[[dict[str, Any]], Awaitable[None]]


class Connection:
    """A websocket client: codec, identity, joined tables, outgoing queue.

    ``id``: its key as a table subscriber. ``tables``: ids of the tables it
    has joined (or asked to join) and not left.
    ``on_drop(conn, reason)`` is called once when the connection is dropped.
    """

    __slots__ = (
        "id", "codec", "send_raw", "abort", "player", "batch", "group", "compact", "games", "tables", "address",
        "_queue", "_limit", "_wake", "_writer", "_close", "closed", "_on_sent", "_on_drop",
        "bucket", "turns", "strikes", "given_up", "ignore_input", "_send_now", "_busy", "_flush_pending", "_loop",
    )

    def __init__(
        self,
        conn_id: int,
        codec: Codec,
        send_raw: Send,
        *,
        limit: int,
        address: str = "",
        abort: Callable[[], None] | None = None,
        on_sent: Callable[[int], None] | None = None,
        on_drop: Callable[[Connection, str], None] | None = None,
        send_now: Callable[[Any], bool] | None = None,
    ) -> None:
        self.id = conn_id
        self.codec = codec
        self.send_raw = send_raw
        self.abort = abort
        self.address = address
        self.player: Player | None = None
        self.batch = False
        self.group = False  # events in ``events`` frames (``hello.group``, 1.7)
        #: the layouts its events are written under as compact arrays (``hello.compact``, 1.8), or None
        self.compact: Layouts | None = None
        #: table -> its game, for the tables whose frames reach it through another node (compact arrays
        #: write a game's events under that game's layouts)
        self.games: dict[str, str] = {}
        self.tables: set[str] = set()
        self._queue: deque[Any] = deque()
        self._limit = limit
        self._wake: asyncio.Future[None] | None = None
        self._writer: asyncio.Task[None] | None = None
        self._close: tuple[int, str] | None = None
        self.closed = False
        self._on_sent = on_sent
        self._on_drop = on_drop
        self.bucket: Any = None
        self.turns = TurnCredit()  # acts answering a new turn: free of the rate limit
        self.strikes = 0
        #: ids of its requests the server answered ``unavailable`` without their table's answer (the
        #: table moved, or its answer was lost): the table's own answer, if it comes, is not passed on
        self.given_up: set[Any] = set()
        self.ignore_input = False
        self._send_now = send_now
        self._busy = False  # the writer task is in an ASGI send
        self._flush_pending = False
        self._loop: asyncio.AbstractEventLoop | None = None

    # -- pushing ------------------------------------------------------------
    def push(self, payload: Any) -> None:
        """Queue one encoded frame; drops the connection if the queue is full.
        It leaves at the next :meth:`flush` (at the latest in the next loop iteration)."""
        if self.closed:
            return
        queue = self._queue
        queue.append(payload)
        if len(queue) > self._limit:
            self.drop(CLOSE_SLOW_CONSUMER, "slow_consumer")
            return
        if not self._flush_pending and self._loop is not None:
            self._flush_pending = True
            self._loop.call_soon(self.flush)

    def deliver(self, payloads: list[Any], message: Any = None) -> None:
        """Queue the encoded frames ``payloads`` (in order) and :meth:`flush`
        at once: what a table's step has for this connection, one call. With
        nothing queued before and the transport writable they leave as one
        message without touching the queue (``message``: that ``batch``
        already built, shared by every connection getting the same frames);
        the slow-consumer limit applies as for :meth:`push`."""
        if self.closed:
            return
        queue = self._queue
        n = len(payloads)
        send_now = self._send_now
        if (not queue and n and send_now is not None and not self._busy and self._close is None
                and (n == 1 or self.batch)):
            if n == 1:
                message = payloads[0]
            elif message is None:
                message = self.codec.batch(payloads)
            if send_now(message):
                if self._on_sent is not None:
                    self._on_sent(n)
                return
        queue.extend(payloads)
        if len(queue) > self._limit:
            self.drop(CLOSE_SLOW_CONSUMER, "slow_consumer")
            return
        self.flush()

    def send(self, message: Mapping[str, Any]) -> None:
        """Encode ``message`` (a frame) with this connection's codec and queue it."""
        self.push(self.codec.encode(cast(dict[str, Any], message)))

    def flush(self) -> None:
        """Write what is queued now, as one message when the client takes
        batches; what cannot be written now is left to the writer task."""
        self._flush_pending = False
        queue = self._queue
        if not queue or self.closed or self._busy:
            return
        send_now = self._send_now
        if send_now is not None and self._close is None:
            if len(queue) == 1 or self.batch:
                payload = queue[0] if len(queue) == 1 else self.codec.batch(list(queue))
                if send_now(payload):
                    count = len(queue)
                    queue.clear()
                    if self._on_sent is not None:
                        self._on_sent(count)
                    return
            else:
                while queue and send_now(queue[0]):
                    queue.popleft()
                    if self._on_sent is not None:
                        self._on_sent(1)
                if not queue:
                    return
        self._wake_writer()

    def _wake_writer(self) -> None:
        """Have the writer task send the queue (started on first need: an idle
        connection whose frames all leave through ``send_now`` has none)."""
        if self._writer is None:
            if self._loop is not None:
                self._writer = self._loop.create_task(self._write_loop())
            return
        wake = self._wake
        if wake is not None and not wake.done():
            wake.set_result(None)

    @property
    def queued(self) -> int:
        return len(self._queue)

    # -- writer -------------------------------------------------------------
    def start(self) -> None:
        """Ready to send (after the websocket is accepted). Without ``send_now``
        every frame goes through the writer task, started now; with it, the
        writer starts only when a frame must wait or the connection closes."""
        self._loop = asyncio.get_running_loop()
        if self._send_now is None:
            self._wake_writer()

    async def _write_loop(self) -> None:
        queue = self._queue
        codec = self.codec
        key = "bytes" if codec.binary else "text"
        loop = asyncio.get_running_loop()
        try:
            while True:
                if not queue:
                    if self._close is not None:
                        break
                    self._wake = loop.create_future()
                    await self._wake
                    self._wake = None
                    continue
                if len(queue) == 1 or not self.batch:
                    payload = queue.popleft()
                    count = 1
                else:
                    items = list(queue)
                    queue.clear()
                    payload = codec.batch(items)
                    count = len(items)
                self._busy = True
                try:
                    await self.send_raw({"type": "websocket.send", key: payload})
                finally:
                    self._busy = False
                if self._on_sent is not None:
                    self._on_sent(count)
            code, reason = self._close
            self._busy = True
            await self.send_raw({"type": "websocket.close", "code": code, "reason": reason})
        except asyncio.CancelledError:
            raise
        except Exception:  # the peer went away; the reader notices
            log.debug("writer of connection %s stopped", self.id, exc_info=True)

    # -- closing ------------------------------------------------------------
    def follows(self, seq: int) -> None:
        """Nothing to mark: a local connection gets a table's frames in the order they are sent."""

    def answers_join(self, viewer: int | None, game: str | None = None) -> None:
        """Nothing to mark: a local connection's view is the table's to apply."""

    def close(self, code: int = 1000, reason: str = "") -> None:
        """Close after the frames already queued are sent."""
        if self._close is None:
            self._close = (code, reason)
        self._wake_writer()

    def drop(self, code: int, reason: str) -> None:
        """Drop at once (slow consumer, flooding): queued frames are discarded,
        the tables forget the connection, the transport is aborted."""
        if self.closed:
            return
        self.closed = True
        self._queue.clear()
        log.info("dropping connection %s (%s): %s", self.id, self.address, reason)
        if self._on_drop is not None:
            self._on_drop(self, reason)
        if self._writer is not None:
            self._writer.cancel()
        if self.abort is not None:
            self.abort()
        else:  # a server without the abort extension: try a close frame
            asyncio.get_running_loop().create_task(self._try_close(code, reason))

    async def _try_close(self, code: int, reason: str) -> None:
        try:
            await asyncio.wait_for(self.send_raw({"type": "websocket.close", "code": code, "reason": reason}), 1.0)
        except Exception:
            pass

    async def finish(self) -> None:
        """Wait for the writer to end (after :meth:`close`), cancelling it when the connection is gone."""
        if self._writer is None:
            return
        if self._close is None:
            self._writer.cancel()
        try:
            await self._writer
        except (asyncio.CancelledError, Exception):
            pass


class Connections:
    """The open connections, by id (a set that can also be looked up by id)."""

    __slots__ = ("_by_id", "get")

    def __init__(self) -> None:
        self._by_id: dict[Hashable, Connection] = {}
        #: the connection with id ``key``, or None: the dict's own ``get`` (every delivery looks up
        #: each subscriber, so no Python frame of its own)
        self.get: Callable[[Hashable], Connection | None] = self._by_id.get

    def add(self, conn: Connection) -> None:
        """Register ``conn`` under its id."""
        self._by_id[conn.id] = conn

    def discard(self, conn: Connection) -> None:
        """Forget ``conn`` (nothing when it is not registered)."""
        if self._by_id.get(conn.id) is conn:
            del self._by_id[conn.id]

    def __contains__(self, conn: object) -> bool:
        return isinstance(conn, Connection) and self._by_id.get(conn.id) is conn

    def __iter__(self) -> Iterator[Connection]:
        return iter(list(self._by_id.values()))

    def __len__(self) -> int:
        return len(self._by_id)
