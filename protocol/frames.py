"""Protocol v1 frames (``protocol/SPEC.md``): their typed shapes and the one
place each server frame is built.

Frames stay plain dicts on the wire, in the server and in
:mod:`cardhall.clients.client`; the ``TypedDict`` classes name their fields, so
``frame["seq"]`` is an ``int`` to mypy and an editor, and the builder functions
(:func:`welcome`, :func:`event`, :func:`snapshot`, :func:`ok`, :func:`error`,
...) are the only code in the server that assembles a frame. The JSON Schemas
in ``protocol/schemas/`` are the machine-checked definition (game-specific
shapes included); these mirror the frames every game shares.

>>> ev: EventFrame = {"type": "event", "table": "t_1", "seq": 5, "event": {"type": "awaiting"}, "ts": 0.0}
>>> ev["event"]["type"]
'awaiting'
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict, cast

Seat = int
RequestId = int | str


# -- client messages ---------------------------------------------------------
class Hello(TypedDict):
    type: Literal["hello"]
    id: NotRequired[RequestId]
    name: NotRequired[str]
    token: NotRequired[str]
    batch: NotRequired[bool]


class CreateTable(TypedDict):
    type: Literal["create_table"]
    id: NotRequired[RequestId]
    game: str
    seats: NotRequired[int]
    options: NotRequired[dict[str, Any]]
    bots: NotRequired[int | list[str | None]]


class Join(TypedDict):
    type: Literal["join"]
    id: NotRequired[RequestId]
    table: str
    role: NotRequired[Literal["player", "spectator"]]
    seat: NotRequired[Seat]
    seed: NotRequired[str]
    since: NotRequired[int]
    invite: NotRequired[str]
    password: NotRequired[str]
    ask: NotRequired[bool]


class Action(TypedDict, total=False):
    """A game action or a table control: ``type`` and, per game, ``amount``,
    ``rank``, ``count``, ``cards``."""

    type: str
    amount: int
    rank: str
    count: int
    cards: list[str]


class Act(TypedDict):
    type: Literal["act"]
    id: NotRequired[RequestId]
    table: str
    action: Action
    turn: NotRequired[int]


class Leave(TypedDict):
    type: Literal["leave"]
    id: NotRequired[RequestId]
    table: str


class Ping(TypedDict):
    type: Literal["ping"]
    id: NotRequired[RequestId]


class Chat(TypedDict):
    type: Literal["chat"]
    id: NotRequired[RequestId]
    table: str
    text: str


class Rename(TypedDict):
    type: Literal["rename"]
    id: NotRequired[RequestId]
    name: str


ClientMessage = Hello | CreateTable | Join | Act | Leave | Ping | Chat | Rename


# -- pieces of server frames -------------------------------------------------
class Occupant(TypedDict):
    seat: Seat
    name: str
    sitting_out: bool
    player: NotRequired[str]
    bot: NotRequired[str]
    connected: bool


class SeatRequestEntry(TypedDict):
    """A request for a seat waiting for the owner (1.5, the owner's ``info.requests``):
    the player, its name, the seat its join asked for (None: any)."""

    player: str
    name: str
    seat: Seat | None


class Info(TypedDict):
    """A table's public metadata (``GET /api/tables`` entries have the first eight fields)."""

    id: str
    game: str
    seats: int
    taken: int
    spectators: int
    status: Literal["waiting", "running", "paused", "finished", "closed", "broken"]
    owner: str | None
    options: dict[str, Any]
    occupants: list[Occupant]
    commitment: str
    match: int
    paused: bool
    result: dict[str, Any] | None
    spectator_chat: bool
    password: bool
    invite: NotRequired[str]
    requests: NotRequired[list[SeatRequestEntry]]


#: The open turn: ``id`` is the seq of the event that began it (send it back as
#: ``act.turn``); ``clock``/``bank`` (seconds) for a person, ``continue`` when the
#: table waits for the solo player's ``continue`` ("continue" is a Python keyword,
#: hence the functional form).
Turn = TypedDict("Turn", {"seat": Seat, "id": int, "clock": NotRequired[float], "bank": NotRequired[float],
                          "continue": NotRequired[bool]})


class LegalAction(TypedDict, total=False):
    type: str
    min: int
    max: int
    # all_in: "as"; Avalanche play: "groups"


# -- server frames -------------------------------------------------------------
class Welcome(TypedDict):
    type: Literal["welcome"]
    re: RequestId | None
    player: str
    name: str
    token: str
    protocol: int
    minor: int
    group: bool
    compact: bool
    layouts: NotRequired[list[list[Any]]]


class TableCreated(TypedDict):
    type: Literal["table_created"]
    re: RequestId | None
    table: str
    commitment: str
    invite: str
    info: Info


class Snapshot(TypedDict):
    type: Literal["snapshot"]
    table: str
    seq: int
    you: Seat | None
    info: Info
    state: dict[str, Any] | None
    turn: NotRequired[Turn]
    legal: NotRequired[list[LegalAction]]
    re: NotRequired[RequestId | None]
    pending: NotRequired[bool]


class EventFrame(TypedDict):
    type: Literal["event"]
    table: str
    seq: int
    event: dict[str, Any]
    ts: float
    turn: NotRequired[Turn]
    legal: NotRequired[list[LegalAction]]


class EventItem(TypedDict):
    """One event of an :class:`EventsFrame`: an ``event`` frame without its envelope."""

    event: dict[str, Any]
    turn: NotRequired[Turn]
    legal: NotRequired[list[LegalAction]]


class EventsFrame(TypedDict):
    """Events of one table with consecutive seqs from ``seq`` and one ``ts`` (1.7, ``hello.group``)."""

    type: Literal["events"]
    table: str
    seq: int
    ts: float
    events: list[EventItem]


class Ok(TypedDict):
    type: Literal["ok"]
    re: RequestId | None
    seq: NotRequired[int]
    name: NotRequired[str]


class Error(TypedDict):
    type: Literal["error"]
    code: str
    message: str
    re: RequestId | None
    reason: NotRequired[str]
    rule: NotRequired[str]
    option: NotRequired[str]


class Pong(TypedDict):
    type: Literal["pong"]
    re: RequestId | None


ServerFrame = Welcome | TableCreated | Snapshot | EventFrame | Ok | Error | Pong

#: the protocol's major version: in the subprotocol names and ``welcome.protocol`` (SPEC "Versioning")
PROTOCOL_VERSION = 1
#: the protocol's minor version within the major one, in ``welcome.minor``: each minor version only
#: adds to the one before it (message, event and frame types, error codes, close codes, fields, games)
PROTOCOL_MINOR = 8


# -- building server frames ------------------------------------------------------
def welcome(re: RequestId | None, player: str, name: str, token: str, group: bool = False,
            layouts: list[list[Any]] | None = None) -> Welcome:
    """The answer to ``hello``: the player's id, name and token (SPEC "Identity").

    ``protocol`` is the major version, ``minor`` the minor one (SPEC "Versioning");
    ``group``: the connection gets its events in ``events`` frames (1.7, :func:`events`);
    ``layouts``: it gets them as compact arrays (1.8, ``compact`` true), written under these
    layouts (:mod:`cardhall.protocol.compact`, SPEC "Compact events").

    >>> w = welcome(1, "p_1", "ann", "tok")
    >>> (w["protocol"], w["minor"], w["group"], w["compact"])
    (1, 8, False, False)
    """
    frame: Welcome = {"type": "welcome", "re": re, "player": player, "name": name, "token": token,
                      "protocol": PROTOCOL_VERSION, "minor": PROTOCOL_MINOR, "group": group or layouts is not None,
                      "compact": layouts is not None}
    if layouts is not None:
        frame["layouts"] = layouts
    return frame


def table_created(re: RequestId | None, info: Info) -> TableCreated:
    """The answer to ``create_table``: the new table's id, its first match's
    commitment (G-2), its ``invite`` (the secret of its invite link, 1.5:
    ``info`` as its owner sees it carries it) and its ``info``."""
    return {"type": "table_created", "re": re, "table": info["id"], "commitment": info["commitment"],
            "invite": info.get("invite", ""), "info": info}


def ok(re: RequestId | None, seq: int | None = None, name: str | None = None) -> Ok:
    """A request done; ``seq``: the table's last ``seq`` the reply follows
    (a ``join`` with ``since``); ``name``: the name kept (a ``rename``, 1.4).

    >>> ok(3), ok("a", seq=12), ok(4, name="ann")
    ({'type': 'ok', 're': 3}, {'type': 'ok', 're': 'a', 'seq': 12}, {'type': 'ok', 're': 4, 'name': 'ann'})
    """
    out: Ok = {"type": "ok", "re": re}
    if seq is not None:
        out["seq"] = seq
    if name is not None:
        out["name"] = name
    return out


def error(code: str, message: str, re: RequestId | None = None, **extra: Any) -> Error:
    """An ``error`` frame: ``code`` from :data:`cardhall.protocol.errors.CODES`,
    a human-readable ``message``, ``re`` (the ``id`` of the request it answers;
    null when the request had none or could not be read: SPEC "Errors"), and
    the code's extra fields (``reason`` and ``rule`` for ``illegal_action``,
    ``option`` for ``bad_options``).

    >>> error("not_joined", "join first", re=4)
    {'type': 'error', 'code': 'not_joined', 'message': 'join first', 're': 4}
    >>> error("malformed", "not a map")["re"] is None
    True
    """
    out: dict[str, Any] = {"type": "error", "code": code, "message": message, "re": re}
    out.update(extra)
    return out  # type: ignore[return-value]


def pong(re: RequestId | None) -> Pong:
    """The answer to ``ping``."""
    return {"type": "pong", "re": re}


def event(table: str, seq: int, event: dict[str, Any], ts: float, turn: Turn | None = None,
          legal: list[LegalAction] | None = None) -> EventFrame:
    """One table event as one viewer sees it: ``event`` is already that
    viewer's view (``Event.view``); ``ts`` Unix seconds; ``turn`` when the
    event puts a seat to act; ``legal`` only for the seat to act (the caller
    decides who gets it: one gate, the table's fan-out).

    >>> event("t_1", 5, {"type": "awaiting"}, 0.0, {"seat": 2, "id": 5})["turn"]
    {'seat': 2, 'id': 5}
    """
    out: EventFrame = {"type": "event", "table": table, "seq": seq, "event": event, "ts": ts}
    if turn is not None:
        out["turn"] = turn
        if legal is not None:
            out["legal"] = legal
    return out


def event_item(event: dict[str, Any], turn: Turn | None = None, legal: list[LegalAction] | None = None) -> EventItem:
    """One element of an ``events`` frame: what :func:`event` holds but the
    envelope (``type``, ``table``, ``seq``, ``ts``)."""
    out: EventItem = {"event": event}
    if turn is not None:
        out["turn"] = turn
        if legal is not None:
            out["legal"] = legal
    return out


def events(table: str, seq: int, ts: float, items: list[EventItem]) -> EventsFrame:
    """Events of one table with the seqs ``seq``, ``seq + 1``, ... and one
    ``ts`` (the step that made them), each an :func:`event_item` (1.7: for a
    client that said ``hello`` with ``group: true``; SPEC "Batching and grouping").

    >>> f = events("t_1", 7, 0.0, [event_item({"type": "a"}), event_item({"type": "b"}, {"seat": 1, "id": 8})])
    >>> f["seq"], [item["event"]["type"] for item in f["events"]], f["events"][1]["turn"]
    (7, ['a', 'b'], {'seat': 1, 'id': 8})
    """
    return {"type": "events", "table": table, "seq": seq, "ts": ts, "events": items}


def grouped(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` (server frames, in order) with each run of ``event``
    frames of one table with consecutive seqs and one ``ts`` merged into one
    :func:`events` frame; every other frame stays as it is, in place.

    >>> out = grouped([event("t", 3, {"type": "a"}, 1.0), event("t", 4, {"type": "b"}, 1.0),
    ...                ok(9), event("t", 5, {"type": "c"}, 2.0)])
    >>> [(f["type"], f.get("seq"), len(f.get("events", ()))) for f in out]
    [('events', 3, 2), ('ok', None, 0), ('events', 5, 1)]
    """
    out: list[dict[str, Any]] = []
    run: dict[str, Any] | None = None
    for msg in messages:
        if msg.get("type") != "event":
            out.append(msg)
            run = None
            continue
        item = event_item(msg["event"], msg.get("turn"), msg.get("legal"))
        if (run is not None and run["table"] == msg["table"] and run["ts"] == msg["ts"]
                and run["seq"] + len(run["events"]) == msg["seq"]):
            run["events"].append(item)
            continue
        run = cast(dict[str, Any], events(msg["table"], msg["seq"], msg["ts"], [item]))
        out.append(run)
    return out


def expand_events(frame: dict[str, Any]) -> list[dict[str, Any]]:
    """The v1 ``event`` frames an ``events`` frame (protocol 1.7, SPEC "Batching
    and grouping") stands for, in order (the inverse of :func:`grouped`):
    element i of ``frame["events"]`` (an ``event`` frame without ``type``,
    ``table``, ``seq`` and ``ts``) gets the frame's ``table`` and ``ts`` and
    the ``seq`` ``frame["seq"] + i``. Raises
    KeyError on a frame without ``table``, ``seq``, ``ts`` or ``events`` (a
    validator in use refuses such a frame before it gets here).

    >>> first, second = expand_events({"type": "events", "table": "t_1", "seq": 7, "ts": 2.5, "events": [
    ...     {"event": {"type": "a"}}, {"event": {"type": "b"}, "turn": {"seat": 1, "id": 8}}]})
    >>> first
    {'type': 'event', 'table': 't_1', 'seq': 7, 'ts': 2.5, 'event': {'type': 'a'}}
    >>> second["seq"], second["turn"]
    (8, {'seat': 1, 'id': 8})
    """
    table, seq, ts = frame["table"], frame["seq"], frame["ts"]
    return [{"type": "event", "table": table, "seq": seq + i, "ts": ts, **item}
            for i, item in enumerate(frame["events"])]


def snapshot(table: str, seq: int, you: Seat | None, info: Info, state: dict[str, Any] | None,
             re: RequestId | None = None, turn: Turn | None = None,
             legal: list[LegalAction] | None = None, *, reply: bool = False, pending: bool = False) -> Snapshot:
    """The table as viewer ``you`` (a seat, or None for a spectator) sees it at
    ``seq``: ``state`` is ``Engine.view(you)`` (None before the first match);
    ``legal`` only for the seat to act. The answer to a ``join`` (``reply``,
    or any ``re``) carries ``re``, null for a join without an id; a snapshot
    sent on its own (the table replaced the viewer's copy) has none (SPEC
    "Resuming and reconnecting"). ``pending``: the viewer's player asked the
    owner for a seat and waits for the answer (1.5, SPEC "Private tables").

    >>> "re" in snapshot("t_1", 0, None, {}, None, reply=True), "re" in snapshot("t_1", 0, None, {}, None)
    (True, False)
    """
    out: Snapshot = {"type": "snapshot", "table": table, "seq": seq, "you": you, "info": info, "state": state}
    if reply or re is not None:
        out["re"] = re
    if turn is not None:
        out["turn"] = turn
        if legal is not None:
            out["legal"] = legal
    if pending:
        out["pending"] = True
    return out


# -- HTTP ----------------------------------------------------------------------


class CatalogueOption(TypedDict):
    """One option of ``GET /api/games`` (a game's or a table's)."""

    name: str
    type: Literal["int", "number", "bool", "choice", "text", "seat"]
    default: Any
    nullable: bool
    meaning: str
    min: NotRequired[float]
    max: NotRequired[float]
    choices: NotRequired[list[Any]]
    per_seat: NotRequired[bool]
    rule: NotRequired[str]


class CatalogueSeats(TypedDict):
    min: int
    max: int
    default: int


class CatalogueGame(TypedDict):
    name: str
    title: str
    seats: CatalogueSeats
    options: list[CatalogueOption]
    bots: list[str]
    default_bot: str


class Catalogue(TypedDict):
    """``GET /api/games`` (:meth:`cardhall.clients.client.Client.games`)."""

    games: list[CatalogueGame]
    table_options: list[CatalogueOption]
