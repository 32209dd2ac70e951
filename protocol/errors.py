"""Protocol v1 error codes: stable, machine-readable, documented in SPEC.md.

An ``error`` frame carries one of these in ``code`` (and ``re`` when it
answers a request). Engines' own reasons (``IllegalAction.code``) travel in
``reason`` under the code ``illegal_action``, so the set below is the whole
vocabulary a client must know.

>>> ProtocolError("unknown_table", "no table t_1").frame(re=7)["code"]
'unknown_table'
"""

from __future__ import annotations

from typing import Any

from cardhall.protocol import frames

#: code -> one-line meaning (the table in SPEC.md mirrors this).
CODES: dict[str, str] = {
    "frame_too_large": "the frame is longer than the server's frame limit",
    "malformed": "the frame is not valid msgpack/JSON, or not a map",
    "bad_request": "a field is missing or has the wrong type or range",
    "unknown_type": "the frame's type is not a client message of protocol v1",
    "hello_required": "send hello before this request",
    "unknown_token": "the token names no known player",
    "bad_auth": "the hello's auth token is refused (reason says why), or the server takes no auth tokens",
    "auth_required": "the server admits only players its operator identifies: say hello with auth",
    "unknown_game": "the game is not one of the server's games",
    "bad_options": "a table option or game option is unknown or out of range",
    "too_many_tables": "the player, or the client's address, already has the most open tables allowed",
    "unknown_table": "no open table has this id",
    "bad_password": "the table needs its password (table option password) and the join did not carry the right one",
    "approval_required": "the owner approves each seat at this table (table option approve_seats): join with ask",
    "seat_denied": "the owner denied this player a seat at this table for the current match",
    "not_joined": "join the table first",
    "seat_taken": "another player holds that seat",
    "table_full": "no free seat",
    "already_seated": "the player already holds a seat at this table (G-5)",
    "match_running": "seats cannot be taken while a match is running",
    "not_a_player": "spectators cannot act",
    "not_your_turn": "the seat is not the one to act",
    "stale_turn": "the turn named in the request has already passed",
    "illegal_action": "the game's rules forbid the action (see reason and rule)",
    "not_owner": "only the table's owner may do this (G-8, G-9)",
    "banned": "the table's owner has banned this player from the table: no join, in any role",
    "kicked": "the table's owner removed this player from a seat: it may watch, and sit again once that match has ended",
    "not_operator": "only the service's operator may do this (HTTP: X-Operator-Key missing or wrong)",
    "bad_state": "the table's state does not allow this now",
    "paused": "the table is paused by its owner (G-8)",
    "rate_limited": "too many frames, or too many new players from one address: slow down",
    "table_broken": "the table failed and is out of service",
    "table_closed": "the table has been closed",
    "shutting_down": "the server is stopping; reconnect shortly",
    "unavailable": "the server cannot save game state right now (its store is down); retry shortly",
    "internal": "an unexpected server error (logged)",
}


class ProtocolError(Exception):
    """A request that gets an ``error`` frame. ``code`` is one of :data:`CODES`;
    ``extra`` adds fields to the frame (``reason``, ``rule`` for ``illegal_action``)."""

    def __init__(self, code: str, message: str, **extra: Any) -> None:
        assert code in CODES, code
        super().__init__(message)
        self.code = code
        self.message = message
        self.extra = extra

    def frame(self, re: Any = None) -> dict[str, Any]:
        """The ``error`` frame for this error, answering request ``re`` if given."""
        return dict(frames.error(self.code, self.message, re, **self.extra))
