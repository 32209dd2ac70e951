"""Messages between nodes, as msgpack (Redis pub/sub carries them).

To a node's inbox (``Keys.inbox``):

* ``["in", table, input]``: a request (``chat`` included), a disconnect or a close for a table
  the receiver owns; ``input`` is :func:`pack_input`'s list (a join's with the outcome of
  its invite and password, checked by the sender: never the secrets themselves). A remote
  subscriber's key (a :class:`~cardhall.server.table.subscribers.RemoteSub`)
  travels as ``"<node>/<connection id>"``.
* ``["out", ...]`` (as below) for a connection that does not watch the table
  (an error to a request it sent without joining): nothing to keep in order.
* ``["moved", table]``: the receiver's idea of the table's owner is stale.
* ``["claim", table, stopped]``: take this table over (a handover);
  ``stopped`` Unix seconds when the old owner stopped it (the pause starts).
* ``["call", node, call id, op, args]`` / ``["ret", call id, ok, value]``:
  a request to another node (``create``, ``close``) and its answer.

On a table's channel (``Keys.channel``: one channel per table, every message
of the table for other nodes in the order the table produced them):

* ``["e", table, seq, changes, [seq, view, frame, view, frame, ...], ...]``:
  one commit of the table, published by its owner's commit script (a stored
  event is never left unpublished): ``seq`` the table's after it;
  ``changes`` flat ``[node, connection, viewer, ...]``, the views the table
  gave its subscribers on other nodes in it (a seat, None for a spectator,
  ``-1`` when it no longer counts one); then each event once per distinct
  view of those subscribers (``view`` a seat, or None for what spectators see).
* ``["out", table, node, connection, after, frames, member, join]``: frames
  (each already msgpack-encoded) for connection ``connection`` of node
  ``node``; ``after`` the table's ``seq`` they follow; ``member`` True/False
  when the connection joined or left the table with them, else None;
  ``join`` ``[viewer, game]`` for a join answer (its events start after
  ``after``; ``game`` the table's, so that the connection's node writes its
  events under that game's layouts for a client with ``compact``, 1.8; a node
  reads ``[viewer]`` alone too).
  Published after the commit they follow and before the table's next one.
* ``["o", node]``: a new owner claimed the table (published by the claim
  script; subscribers join it again).

>>> j = unpack_input(pack_input(Join(remote_key("n1", 7), "p_1", "Ann", 3, "play", 2, None, 10, 1.0)))
>>> j.sub, j.re, j.seat, j.since, j.received
(RemoteSub(node='n1', conn=7), 3, 2, 10, None)
>>> parse_key(j.sub), parse_key(7)
(('n1', 7), None)
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import msgpack

from cardhall.server.table.inputs import Act, Chat, Close, Disconnect, Join, Leave
from cardhall.server.table.subscribers import RemoteSub, key_from_stored, stored_key

#: inputs that travel to an owner
Remote = Join | Act | Leave | Chat | Disconnect | Close


def remote_key(node: str, conn: int) -> RemoteSub:
    """The subscriber key of connection ``conn`` of node ``node`` at a table owned elsewhere."""
    return RemoteSub(node, conn)


def parse_key(key: Hashable) -> tuple[str, int] | None:
    """``(node, connection id)`` of a remote subscriber key, None for a local one."""
    return (key.node, key.conn) if isinstance(key, RemoteSub) else None


def pack_input(inp: Remote) -> list[Any]:
    """``inp`` as a list (its ``received`` time is the sender's clock: dropped)."""
    if isinstance(inp, Join):
        return ["j", stored_key(inp.sub), inp.player, inp.name, inp.re, inp.role, inp.seat, inp.seed, inp.since,
                inp.ask, inp.invited, inp.password_ok]
    if isinstance(inp, Act):
        return ["a", stored_key(inp.sub), inp.player, inp.re, inp.action, inp.turn]
    if isinstance(inp, Leave):
        return ["l", stored_key(inp.sub), inp.player, inp.re]
    if isinstance(inp, Chat):
        return ["m", stored_key(inp.sub), inp.player, inp.name, inp.re, inp.text]
    if isinstance(inp, Disconnect):
        return ["d", stored_key(inp.sub)]
    return ["c", inp.reason]


def unpack_input(data: list[Any]) -> Remote:
    """The input of :func:`pack_input`'s list; ValueError for anything else."""
    kind, *f = data
    if f and kind != "c":
        f[0] = key_from_stored(f[0])
    if kind == "j" and len(f) == 11 and isinstance(f[9], bool) and isinstance(f[10], bool):
        sub, player, name, re, role, seat, seed, since, ask, invited, password_ok = f
        return Join(sub, player, name, re, role, seat, seed, since, None, ask, invited, password_ok)
    if kind == "j" and len(f) == 8:  # from a node before 1.5 (a rolling upgrade): nothing private carried
        return Join(*f)
    if kind == "a" and len(f) == 5:
        return Act(*f)
    if kind == "l" and len(f) == 3:
        return Leave(*f)
    if kind == "m" and len(f) == 5 and isinstance(f[4], str):
        return Chat(*f)
    if kind == "d" and len(f) == 1:
        return Disconnect(f[0])
    if kind == "c" and len(f) == 1:
        return Close(f[0])
    raise ValueError(f"not an input: {data!r:.80}")


def pack(message: list[Any]) -> bytes:
    """One message's bytes."""
    return msgpack.packb(message, use_bin_type=True)


def unpack(blob: bytes) -> list[Any]:
    """A message's list; ValueError when it is not one."""
    try:
        data = msgpack.unpackb(blob, raw=False, strict_map_key=False)
    except Exception as exc:
        raise ValueError(f"unreadable message: {exc}") from None
    if not isinstance(data, list) or not data:
        raise ValueError("a message is a non-empty list")
    return data
