"""Table chat in the machine: who may chat, the ``chat`` event, the owner's switch (SPEC "Chat").

A chat message is a table event like any other (a ``seq``, kept for
``since``, stored, published to every node), so every viewer, on every
node and after every reconnect, sees the same chat in the same place of the
table's history. Its fields are exactly ``seat`` (the sender's seat, or
None for a spectator), ``name``, ``text`` (as the connection's node checked
it, :mod:`cardhall.server.chat`) and ``from`` (the sender's public player
id); the table adds nothing to the text, and bots never chat. Chat events
leave the open turn open (they carry no ``turn``).

The owner's control ``spectator_chat`` (``on``: a bool) allows or stops
spectators' messages; it is kept with the table (:attr:`TableCore.spectator_chat`)
and announced with a ``spectator_chat`` event.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cardhall.engine.base import Event
from cardhall.protocol import frames
from cardhall.protocol.errors import ProtocolError
from cardhall.server.table.core import TableCore
from cardhall.server.table.inputs import Chat
from cardhall.server.table.subscribers import NOT_JOINED

#: the owner's control of spectators' chat
SPECTATOR_CHAT = "spectator_chat"


def chat(t: TableCore, inp: Chat) -> None:
    """``chat`` from subscriber ``inp.sub``: a ``chat`` event, then ``ok``.
    ProtocolError ``not_joined``, ``bad_state`` (a spectator while the owner
    has switched spectators' chat off)."""
    viewer = t.subscribers.viewer(inp.sub)
    if viewer is NOT_JOINED:
        raise ProtocolError("not_joined", f"join table {t.id} first")
    occ = t.seats.get(viewer) if viewer is not None else None
    if occ is None and not t.spectator_chat:
        raise ProtocolError("bad_state", "the owner has turned spectators' chat off at this table")
    name = occ.name if occ is not None else inp.name
    t.emit(Event({"type": "chat", "seat": viewer if occ is not None else None, "name": name,
                  "text": inp.text, "from": inp.player}))
    t.reply(inp.sub, frames.ok(inp.re))


def spectator_chat(t: TableCore, player: str, action: Mapping[str, Any]) -> None:
    """The owner's ``{"type": "spectator_chat", "on": bool}``: a
    ``spectator_chat`` event when it changes anything. ProtocolError
    ``not_owner``, ``bad_request`` (``on`` missing or not a bool)."""
    if player != t.owner:
        raise ProtocolError("not_owner", "only the owner may switch spectators' chat")
    on = action.get("on")
    if not isinstance(on, bool):
        raise ProtocolError("bad_request", "spectator_chat needs on: true or false")
    if on != t.spectator_chat:
        t.spectator_chat = on
        t.changed()
        t.emit(Event({"type": SPECTATOR_CHAT, "on": on}))
