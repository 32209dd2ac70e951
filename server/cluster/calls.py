"""Calls from one node to another: create a table there, close a table there,
apply a player's new name there (SPEC "Names", ``rename``).

A call is ``["call", caller, id, op, args]`` in the callee's inbox; the
answer ``["ret", id, ok, value]`` in the caller's, where ``value`` is the
result, or ``[code, message, extra]`` of the ProtocolError the callee raised.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from typing import Any

from cardhall.protocol.errors import ProtocolError
from cardhall.server.cluster.host import NodeHost
from cardhall.server.cluster.naming import TABLE_ID
from cardhall.server.renaming import apply_here

#: seconds a call may take before the caller gives up (TimeoutError)
CALL_TIMEOUT = 2.0


class Calls:
    """Node ``node``'s calls; ``send(node, message)`` queues a message for a
    node's inbox; ``created(table_id)``: a creation placed here is over (made or refused)."""

    def __init__(self, host: NodeHost, node: str, send: Callable[[str, list[Any]], None],
                 created: Callable[[str], None]) -> None:
        self.host = host
        self.created = created
        self.node = node
        self.send = send
        self._waiting: dict[int, asyncio.Future[tuple[bool, Any]]] = {}
        self._ids = itertools.count(1)

    async def call(self, node: str, op: str, args: list[Any]) -> Any:
        """Run ``op`` (``create``: args ``[spec, owner, address, table id]``,
        returns the new table's info; ``close``: args ``[table, reason]``;
        ``rename``: args ``[player, token hash, name]``, saved already, returns
        how many of that node's tables were told) on ``node``; raises the
        ProtocolError it raised, or TimeoutError after :data:`CALL_TIMEOUT` seconds."""
        cid = next(self._ids)
        fut: asyncio.Future[tuple[bool, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[cid] = fut
        self.send(node, ["call", self.node, cid, op, args])
        try:
            ok, value = await asyncio.wait_for(fut, CALL_TIMEOUT)
        finally:
            self._waiting.pop(cid, None)
        if not ok:
            code, message, extra = value
            raise ProtocolError(code, message, **extra)
        return value

    def returned(self, cid: int, ok: bool, value: Any) -> None:
        """The answer to call ``cid``."""
        fut = self._waiting.get(cid)
        if fut is not None and not fut.done():
            fut.set_result((ok, value))

    def answer(self, caller: str, cid: int, op: str, args: list[Any]) -> None:
        """Run a call from ``caller`` here and send the answer back."""
        asyncio.get_running_loop().create_task(self._answer(caller, cid, op, args))

    async def _answer(self, caller: str, cid: int, op: str, args: list[Any]) -> None:
        try:
            if op == "create":
                spec, owner, address, *placed = args  # the id the placement gave it (absent: a new one)
                table_id = placed[0] if placed and isinstance(placed[0], str) and TABLE_ID.fullmatch(placed[0]) else None
                try:
                    value: Any = (await self.host.create_here(spec, owner, address, table_id)).machine.info(True)
                finally:
                    if table_id is not None:
                        self.created(table_id)
            elif op == "close":
                self.host.close_table(args[0], args[1])
                value = True
            elif op == "rename" and len(args) == 3 and all(isinstance(a, str) for a in args):
                value = apply_here(self.host, args[0], args[1], args[2])
            else:
                raise ProtocolError("bad_request", f"unknown call {op!r}")
            reply = ["ret", cid, True, value]
        except ProtocolError as exc:
            frame = exc.frame()
            extra = {k: v for k, v in frame.items() if k not in ("type", "code", "message", "re")}
            reply = ["ret", cid, False, [exc.code, frame.get("message", ""), extra]]
        self.send(caller, reply)
