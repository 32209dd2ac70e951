"""Private tables and the lobby's filters for the terminal client, as text (protocol 1.5; SPEC
"Private tables", "The host's controls", "HTTP"): no textual here.

* **Invite links**: ``<page>/#table=<id>&invite=<invite>`` (:func:`invite_link`; the page is the
  server's HTTP URL, as the browser's), read back by :func:`parse_invite` from what is typed or
  pasted in the lobby.
* **Filters** of ``GET /api/tables``: :func:`parse_filter` reads ``game=NAME free=N bots=yes|no
  min_big_blind=N max_big_blind=N`` into the query parameters (:data:`FILTER_HELP`).
* **Options** of ``create_table`` typed as ``option=value``: :func:`option_value` reads a value as
  the option's type in ``GET /api/games`` (a ``text`` option such as ``password`` stays text, a
  ``bool`` takes ``true``/``false``/``yes``/``no``/``on``/``off``/``1``/``0``).
* **Host events** (``seat_requested`` ... ``owner_changed``): :func:`host_line`, their log lines.

>>> invite_link("http://127.0.0.1:8000", "t_1a", "Ab-_9")
'http://127.0.0.1:8000/#table=t_1a&invite=Ab-_9'
>>> parse_invite("http://127.0.0.1:8000/#table=t_1a&invite=Ab-_9")
('t_1a', 'Ab-_9')
>>> parse_invite("no_limit_holdem 2 1") is None
True
>>> parse_filter("game=alamo free=1 bots=no min_big_blind=2")
{'game': 'alamo', 'free': '1', 'bots': 'false', 'min_big_blind': '2'}
>>> option_value("1234", "text"), option_value("yes", "bool"), option_value("0.5", "number")
('1234', True, 0.5)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

Data = dict[str, Any]

#: the lobby's filter line, as its placeholder and help say it
FILTER_HELP = "game=NAME free=N bots=yes|no min_big_blind=N max_big_blind=N"
#: the query parameters of ``GET /api/tables`` the filter line sets, and the integer ones' bounds (SPEC "HTTP")
FILTER_INTS = {"free": (1, 9), "min_big_blind": (0, 10**12), "max_big_blind": (0, 10**12)}
#: the words read as true and as false (a ``bool`` option, the ``bots`` filter)
TRUE, FALSE = ("true", "yes", "on", "1"), ("false", "no", "off", "0")
#: the types of the private table options (SPEC "Private tables"), used when the catalogue is not known
PRIVATE_OPTIONS = {"password": "text", "password_spectators": "bool", "approve_seats": "bool"}
#: the table events of requests for a seat and of the host's controls (1.5); none ends a turn
HOST_EVENTS = frozenset({"seat_requested", "seat_approved", "seat_denied", "seat_request_lapsed",
                         "kicked", "banned", "owner_changed"})


def invite_link(page: str, table: str, invite: str) -> str:
    """The invite link of ``table`` (SPEC "Private tables"): ``page`` (the server's HTTP URL,
    ``http://host:port``), ``/#table=``, the id, ``&invite=``, the invite (percent-encoded as the
    browser's ``encodeURIComponent``: ids and invites need none)."""
    return f"{page.rstrip('/')}/#table={quote(table, safe='')}&invite={quote(invite, safe='')}"


def parse_invite(text: str) -> tuple[str, str | None] | None:
    """``(table, invite)`` from an invite link, or from its part after ``#``, or from
    ``table=ID[&invite=INVITE]``; None when ``text`` is none of these (invite None: a link without one)."""
    text = text.strip()
    if "table=" not in text or " " in text:
        return None
    fragment = urlsplit(text).fragment if "#" in text else text
    fields = parse_qs(fragment.lstrip("#"), keep_blank_values=False)
    table = (fields.get("table") or [None])[0]
    if not table:
        return None
    invite = (fields.get("invite") or [None])[0]
    return table, invite


def _truth(value: str, what: str) -> bool:
    low = value.lower()
    if low in TRUE:
        return True
    if low in FALSE:
        return False
    raise ValueError(f"{what} is yes or no (true/false, on/off, 1/0), not {value!r}")


def parse_filter(text: str) -> dict[str, str]:
    """The query parameters of ``GET /api/tables`` for the filter line ``text``
    (:data:`FILTER_HELP`; blank: no filter). ValueError naming the word that is wrong."""
    query: dict[str, str] = {}
    for word in text.split():
        key, sep, value = word.partition("=")
        if not sep or not value:
            raise ValueError(f"filter: {word!r} is not name=value ({FILTER_HELP})")
        if key == "game":
            query[key] = value
        elif key == "bots":
            query[key] = "true" if _truth(value, "bots") else "false"
        elif key in FILTER_INTS:
            low, high = FILTER_INTS[key]
            if not (value.isascii() and value.isdigit() and low <= int(value) <= high):
                raise ValueError(f"filter: {key} is a whole number from {low} to {high}, not {value!r}")
            query[key] = str(int(value))
        else:
            raise ValueError(f"filter: no filter {key!r} ({FILTER_HELP})")
    return query


def option_value(raw: str, kind: str | None) -> Any:
    """``raw`` (what follows ``option=``) as a value of an option of type ``kind`` (``GET
    /api/games``: ``text``, ``bool``, ``int``, ...; None: not known): text stays text, a switch
    takes yes/no words, anything else is read as JSON when it is JSON (``5``, ``0.5``, ``null``,
    ``[1, 2]``), else as text. ValueError for a switch that is neither yes nor no."""
    if kind == "text":
        return raw
    if kind == "bool":
        return _truth(raw, "this option")
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw


def option_kinds(catalogue: Data | None, game: str) -> dict[str, str]:
    """Option name -> type of ``game``'s options and the table options in the catalogue
    (``GET /api/games``); at least those of :data:`PRIVATE_OPTIONS`."""
    kinds = dict(PRIVATE_OPTIONS)
    if catalogue:
        for option in catalogue.get("table_options") or []:
            kinds[option["name"]] = option["type"]
        for g in catalogue.get("games") or []:
            if g.get("name") == game:
                kinds.update({o["name"]: o["type"] for o in g.get("options") or []})
    return kinds


def host_line(event: Data, who: Callable[[str], str], me: str | None) -> str | None:
    """The log line of host event ``event`` (:data:`HOST_EVENTS`); ``who(player)``: a name for a
    public id; ``me``: this player's id (its own events say "you").

    >>> names = {"p_1": "ann", "p_2": "bob"}.get
    >>> host_line({"type": "seat_requested", "player": "p_2", "name": "bob"}, names, "p_1")
    'bob asks for a seat'
    >>> host_line({"type": "kicked", "player": "p_1", "seat": 2}, names, "p_1")
    'the host removed you from seat 2: you are watching'
    """
    t, player = event.get("type"), str(event.get("player") or event.get("owner") or "")
    name = "you" if player == me else (who(player) or player)
    if t == "seat_requested":
        return f"{event.get('name')} asks for a seat"
    if t == "seat_approved":
        return f"the host gave {'you' if player == me else name} seat {event.get('seat')}"
    if t == "seat_denied":
        return f"the host turned down {'your' if player == me else name + chr(39) + 's'} request for a seat"
    if t == "seat_request_lapsed":
        whose = "your" if player == me else name + "'s"
        return f"{whose} request for a seat lapsed ({event.get('reason')})"
    if t == "kicked":
        seat = event.get("seat")
        where = f" from seat {seat}" if seat is not None else ""
        return f"the host removed {name}{where}: {'you are' if player == me else 'now'} watching"
    if t == "banned":
        return f"the host banned {name} from the table"
    if t == "owner_changed":
        why = " (the host was away)" if event.get("reason") == "absent" else ""
        return f"{'you are' if player == me else name + ' is'} the host now{why}"
    return None
