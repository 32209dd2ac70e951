"""Table chat at the connection: the text checked, the rate's figures (SPEC "Chat").

A ``chat`` frame is checked here, on the node its connection is on, before it
becomes a :class:`~cardhall.server.table.inputs.Chat` input for the table
(which checks that the connection joined it and that spectators may chat,
:mod:`cardhall.server.table.chat`). The text is plain text, as names are
(:mod:`cardhall.server.names`, whose character rules it shares), in this order:

1. a string of at most :data:`MAX_CHARS` characters as sent;
2. no control or invisible characters (newlines and tabs included; names'
   rule 2: Unicode's Default_Ignorable_Code_Point too, but in the emoji
   sequences people type);
3. normalised: NFC, white space around it removed, each run of white space
   inside it made one space;
4. then at most :data:`MAX_CHARS` characters and :data:`MAX_BYTES` bytes of
   UTF-8, at most ``MAX_MARKS`` combining marks on one character;
5. not blank.

Anything else is ``bad_request`` with the reason. The rate, two token
buckets on top of the frame limit, counted by the hall's
:class:`~cardhall.server.limits.Limits` over all connections on every node:
:data:`BURST` messages at once, then one every ``1 / RATE`` seconds per
player; and :data:`ADDRESS_BURST` at once, then one every
``1 / ADDRESS_RATE`` seconds per client address (every player and connection
from it: a flood from many players or connections of one client is bounded,
and a few players behind one NAT still chat at the player rate each). Past
either: ``rate_limited``.

>>> checked_text("  gg   wp ")
'gg wp'
>>> checked_text("<b>hi</b> & [red]x[/]")
'<b>hi</b> & [red]x[/]'
"""

from __future__ import annotations

from typing import Any

from cardhall.server.names import plain_text

#: longest message, in characters (Unicode code points), as sent and as kept
MAX_CHARS = 200
#: longest message in UTF-8 bytes, as kept
MAX_BYTES = 600
#: messages a player may send at once
BURST = 5.0
#: messages per second after the burst (5 per 10 s)
RATE = 0.5
#: messages all players from one client address may send at once (three players' bursts)
ADDRESS_BURST = 15.0
#: messages per second from one client address after its burst (15 per 10 s: three players at :data:`RATE`)
ADDRESS_RATE = 1.5


def checked_text(value: Any) -> str:
    """The text to publish for ``chat.text`` ``value`` (the module docstring's
    rules, in order). Raises ProtocolError ``bad_request`` naming the rule broken."""
    return plain_text(value, "text", MAX_CHARS, MAX_BYTES)

