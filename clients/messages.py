"""Typed shapes of protocol v1 frames (``protocol/SPEC.md``), for type checkers.

Frames stay plain dicts on the wire and in :mod:`clients.client`; these
``TypedDict`` classes only name their fields, so ``frame["seq"]`` is an ``int``
to mypy and an editor. The JSON Schemas in ``protocol/schemas/`` are the
machine-checked definition (game-specific shapes included); these mirror the
frames every game shares.

>>> ev: EventFrame = {"type": "event", "table": "t_1", "seq": 5, "event": {"type": "awaiting"}, "ts": 0.0}
>>> ev["event"]["type"]
'awaiting'
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict, Union

Seat = int
RequestId = Union[int, str]


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


ClientMessage = Union[Hello, CreateTable, Join, Act, Leave, Ping]


# -- pieces of server frames -------------------------------------------------
class Occupant(TypedDict):
    seat: Seat
    name: str
    sitting_out: bool
    player: NotRequired[str]
    bot: NotRequired[str]
    connected: bool


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


class TableCreated(TypedDict):
    type: Literal["table_created"]
    re: RequestId | None
    table: str
    commitment: str
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


class EventFrame(TypedDict):
    type: Literal["event"]
    table: str
    seq: int
    event: dict[str, Any]
    ts: float
    turn: NotRequired[Turn]
    legal: NotRequired[list[LegalAction]]


class Ok(TypedDict):
    type: Literal["ok"]
    re: RequestId | None
    seq: NotRequired[int]


class Error(TypedDict):
    type: Literal["error"]
    code: str
    message: str
    re: NotRequired[RequestId | None]
    reason: NotRequired[str]
    rule: NotRequired[str]
    option: NotRequired[str]


class Pong(TypedDict):
    type: Literal["pong"]
    re: RequestId | None


ServerFrame = Union[Welcome, TableCreated, Snapshot, EventFrame, Ok, Error, Pong]


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
    """``GET /api/games`` (:meth:`clients.client.Client.games`)."""

    games: list[CatalogueGame]
    table_options: list[CatalogueOption]
