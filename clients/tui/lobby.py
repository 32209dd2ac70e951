"""The terminal client's lobby screen: the tables of ``GET /api/tables``
(refreshed every :attr:`CardhallApp.lobby_refresh` seconds, keeping the
selected row and the typed text), the creation input (focused first: typing
``no_limit_holdem 3 2`` and Enter creates a table and sits down), the games'
help line (``GET /api/games``) and a message line for what went wrong.

The tables where you hold a seat (kept between runs,
:mod:`cardhall.clients.tui.identity`) come first, marked ``your seat N`` in
the ``you`` column, like the browser's "your table"; on start the first of
them is selected with the list focused, so Enter returns to that seat, even
mid-match (G-5: the server gives the seat back to the same player). Tables the
lobby no longer lists (closed) are forgotten.

An unlisted table (protocol 1.5, SPEC "Private tables") is in no listing, so
the client keeps its invite with it (:class:`~cardhall.clients.tui.identity.SavedTable`
``invite``: from the join by its invite link, or the owner's ``info.invite``).
Each refresh of the whole list (no filter) looks up those kept tables only, the
ones the listing leaves out, at most
:data:`~cardhall.clients.tui.app.UNLISTED_LOOKUPS` of them, each with ``GET
/api/tables/{id}`` and its invite in ``X-Table-Invite``
(:meth:`~cardhall.clients.tui.app.CardhallApp.kept_unlisted`), and lists them
with the others, marked the same (``your seat N``, ``watched``) and
``(unlisted)`` in the status; a 404 (gone, or never let in) or a closed table
is forgotten. Enter (``w``) joins such a table with its kept invite: a seat
holder needs none, a spectator does. The invite itself is never shown here (the
owner finds it on the table's host line). A filtered list leaves them out.

Keys (the footer lists those that work now): in the input, Enter creates
(the field's own Enter, with the text as typed or pasted:
:mod:`cardhall.clients.tui.fields`); Tab moves to the table list, where Enter
joins the selected table, ``w`` watches it and ``?`` shows its game's help
(:mod:`cardhall.clients.tui.help`); Tab goes back to the input. Escape leaves a
field (or the list) for nowhere: there no key acts on a table, Tab goes to the
list, ``n`` to the create line; ``r`` refreshes at once. Back from a table the
create line has the focus. ``/`` (from the list, or nowhere) moves to the filter line: ``game=NAME free=N bots=yes|no
min_big_blind=N max_big_blind=N`` (:func:`~cardhall.clients.tui.private.parse_filter`,
the query of ``GET /api/tables``, SPEC "HTTP"); Enter there applies it and
returns to the list, an empty line shows every table.

The input also joins by an invite link (protocol 1.5, SPEC "Private tables"):
``join LINK``, ``watch LINK`` or the link alone (``<page>/#table=ID&invite=INVITE``);
``join ID`` and ``watch ID`` join a listed table by its id. ``option=value``
takes the private table options too (``visibility=unlisted password=TEXT
approve_seats=yes approve_within=60``), each read as its type in ``GET /api/games``.
"""

from __future__ import annotations

import asyncio
import shlex
import time
from collections.abc import Mapping
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Input

from cardhall.clients.client import ServerError
from cardhall.clients.tui.fields import CreateInput, FilterInput
from cardhall.clients.tui.help import HelpScreen
from cardhall.clients.tui.plain import Plain, plain
from cardhall.clients.tui.private import FILTER_HELP, option_kinds, option_value, parse_filter, parse_invite

Frame = dict[str, Any]
#: what can go wrong talking to the server: shown as a message, never a crash
FAILURES = (ServerError, OSError, TimeoutError, ValueError)


def games_help(catalogue: Frame) -> str:
    """The lobby's help line from ``GET /api/games`` (:meth:`Client.games`):
    each game's name, seat range and option names.

    >>> games_help({"games": [{"name": "loco_poker", "seats": {"min": 2, "max": 8},
    ...                        "options": [{"name": "points_to_win"}]}]})
    'create: GAME [SEATS [BOTS]] [option=value ...]   loco_poker 2-8 (points_to_win)'
    """
    games = "; ".join(f"{g['name']} {g['seats']['min']}-{g['seats']['max']} ({' '.join(o['name'] for o in g['options'])})"
                      for g in catalogue["games"])
    return f"create: GAME [SEATS [BOTS]] [option=value ...]   {games}"


def create_hint(catalogue: Frame | None) -> str:
    """The create line's placeholder: an example from the catalogue's first game (its fewest
    seats, one of them a bot), else the form.

    >>> create_hint({"games": [{"name": "cribbage", "seats": {"min": 2, "max": 4}}]}), create_hint(None)
    ('cribbage 2 1   (or paste an invite link)', 'GAME SEATS BOTS   (or paste an invite link)')
    """
    first = next(iter((catalogue or {}).get("games") or []), None)
    example = "GAME SEATS BOTS" if first is None else f"{first['name']} {first['seats']['min']} {first['seats']['min'] - 1}"
    return f"{example}   (or paste an invite link)"


def parse_create(text: str, catalogue: Frame | None = None) -> Frame:
    """``"loco_poker 3 2 points_to_win=2"`` -> a ``create_table`` spec; each option's value is
    read as its type in ``catalogue`` (``GET /api/games``; :func:`~cardhall.clients.tui.private.option_value`:
    ``password=1234`` stays text), quotes group words (``password="two words"``). ValueError on bad input.

    >>> parse_create("loco_poker password=1234 approve_seats=yes visibility=unlisted")["options"]
    {'password': '1234', 'approve_seats': True, 'visibility': 'unlisted'}
    """
    try:
        words = shlex.split(text)
    except ValueError:  # an unpaired quote: the words as typed
        words = text.split()
    if not words:
        raise ValueError("type: GAME [SEATS [BOTS]] [option=value ...]")
    spec: Frame = {"game": words[0], "options": {}}
    kinds = option_kinds(catalogue, words[0])
    numbers = []
    for w in words[1:]:
        if "=" in w:
            key, _, value = w.partition("=")
            spec["options"][key] = option_value(value, kinds.get(key))
        elif w.isdigit():
            numbers.append(int(w))
        else:
            raise ValueError(f"{w!r} is not a number of seats or bots, nor option=value")
    if numbers:
        spec["seats"] = numbers[0]
    if len(numbers) > 1:
        spec["bots"] = numbers[1]
    return spec


def _one(value: Any) -> str:
    """An option's value in the stakes column: a per-seat list whose values agree as one value."""
    if isinstance(value, list):
        return str(value[0]) if value and all(v == value[0] for v in value) else "/".join(map(str, value))
    return str(value)


def stakes(t: Frame, catalogue: Frame | None = None) -> str:
    """A table's stakes (a ``GET /api/tables`` entry ``t``) from the options its matches are played
    with: the entry's ``options`` over the game's defaults in ``catalogue`` (``GET /api/games``; an
    entry lists only the options its creator gave). The blinds ``small/big`` where the game has a
    ``big_blind`` (plus ``ante N`` when there is one); else the first of the game's numbers or
    choices (``int``, ``choice`` options, catalogue order) that has a value, ``name value``; ``-``
    when there is none. No game is named here: the catalogue says what each one has.

    >>> games = {"games": [{"name": "nl", "options": [{"name": "small_blind", "type": "int", "default": 10},
    ...     {"name": "big_blind", "type": "int", "default": 20}, {"name": "ante", "type": "int", "default": 0}]},
    ...     {"name": "lp", "options": [{"name": "dealer", "type": "seat", "default": None},
    ...     {"name": "points_to_win", "type": "int", "default": 3}]}]}
    >>> stakes({"game": "nl", "options": {"big_blind": 50, "small_blind": 25}}, games), stakes({"game": "nl"}, games)
    ('25/50', '10/20')
    >>> stakes({"game": "lp", "options": {"points_to_win": 2}}, games), stakes({"game": "x", "options": {}}, games)
    ('points to win 2', '-')
    """
    game: Frame = next((g for g in (catalogue or {}).get("games", []) if g.get("name") == t.get("game")), {})
    declared = game.get("options") or []
    o = {**{d["name"]: d.get("default") for d in declared}, **(t.get("options") or {})}
    if o.get("big_blind") is not None:
        blinds = f"{_one(o.get('small_blind'))}/{_one(o['big_blind'])}"
        return blinds + (f" ante {_one(o['ante'])}" if o.get("ante") else "")
    for d in declared:
        if d.get("type") in ("int", "choice") and o.get(d["name"]) is not None:
            return f"{str(d['name']).replace('_', ' ')} {_one(o[d['name']])}"
    return "-"


def yours(saved: Any) -> str:
    """The lobby's mark of a table kept in the identity file
    (:class:`cardhall.clients.tui.identity.SavedTable`, None: not kept), like the browser's "your table".

    >>> from cardhall.clients.tui.identity import SavedTable
    >>> yours(SavedTable("player", 2)), yours(SavedTable("spectator")), yours(None)
    ('your seat 2', 'watched', '')
    """
    if saved is None:
        return ""
    if saved.role == "player":
        return f"your seat {saved.seat}" if saved.seat is not None else "your table"
    return "watched"


def lobby_rows(tables: list[Frame], mine: Mapping[str, Any] | None = None,
               catalogue: Frame | None = None) -> list[tuple[str, list[str]]]:
    """The lobby's rows ``(table id, cells)``: the tables where you hold a seat (``mine``: table id ->
    :class:`~cardhall.clients.tui.identity.SavedTable`) first, then those with a free seat that are
    not over, then the rest. The status cell says ``(password)`` for a table with one and
    ``(unlisted)`` for an unlisted one (1.5, a kept table's ``info``). The stakes cell is :func:`stakes`
    (``catalogue``: ``GET /api/games``), the last cell :func:`yours`.

    >>> lobby_rows([{"id": "a", "game": "alamo", "seats": 2, "taken": 2, "spectators": 0, "status": "running"},
    ...             {"id": "b", "game": "avalanche", "seats": 3, "taken": 1, "spectators": 1, "status": "waiting"}])[0]
    ('b', ['b', 'avalanche', '-', '1/3', '2', '1', 'waiting', ''])
    >>> from cardhall.clients.tui.identity import SavedTable
    >>> [key for key, _ in lobby_rows([{"id": "b", "game": "alamo", "seats": 2, "taken": 1, "spectators": 0,
    ...                                 "status": "waiting"},
    ...                                {"id": "a", "game": "alamo", "seats": 2, "taken": 2, "spectators": 0,
    ...                                 "status": "running"}], {"a": SavedTable("player", 1)})]
    ['a', 'b']
    """
    mine = mine or {}

    def joinable(t: Frame) -> bool:
        return t["taken"] < t["seats"] and t["status"] in ("waiting", "running", "paused")

    def seated(t: Frame) -> bool:
        saved = mine.get(t["id"])
        return saved is not None and saved.role == "player"

    ordered = sorted(tables, key=lambda t: (not seated(t), not joinable(t)))
    return [(t["id"], [str(t["id"]), str(t["game"]), stakes(t, catalogue), f"{t['taken']}/{t['seats']}",
                       str(t["seats"] - t["taken"]), str(t["spectators"]),
                       str(t["status"]) + (" (password)" if t.get("password") else "") + (
                           " (unlisted)" if (t.get("options") or {}).get("visibility") == "unlisted" else ""),
                       yours(mine.get(t["id"]))])
            for t in ordered]


class TableList(DataTable):
    """The lobby's list of tables: Enter joins the selected one, only while the list has the focus
    (``DataTable.RowSelected``; the footer says ``⏎ join``)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("enter", "select_cursor", "join")]


class Lobby(Screen):
    """The tables on the server; create, join or watch one."""

    #: the query of ``GET /api/tables`` the filter line set (empty: every table)
    filters: dict[str, str] = {}
    #: the catalogue (``GET /api/games``) once it is read: the option types of the create input
    catalogue: Frame | None = None

    #: the input has the focus from the first frame (not the list first, then the input: a key typed
    #: in between would go to the list)
    AUTO_FOCUS = "#create"

    BINDINGS = [
        Binding("w", "watch", "watch"), Binding("r", "refresh", "refresh"), Binding("slash", "filter", "filter"),
        Binding("n", "new", "new table"), Binding("question_mark", "help", "game help"),
        Binding("tab", "next_field", "next field"), Binding("escape", "leave_field", "leave field"),
        Binding("ctrl+q", "app.quit", "quit", priority=True),
    ]

    def compose(self) -> ComposeResult:
        yield Header()
        yield TableList(id="tables", cursor_type="row")
        yield Plain("create: GAME [SEATS [BOTS]] [option=value ...]", id="help")  # the games: on_mount
        yield CreateInput(placeholder=create_hint(None), id="create")  # an example from the games: on_mount
        yield FilterInput(placeholder=f"filter (/ from the list, Enter applies): {FILTER_HELP}", id="filter")
        yield Plain("", id="status")
        yield Footer(compact=True)

    @property
    def _typing(self) -> bool:
        return isinstance(self.focused, Input)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The footer shows the keys that work now: the field's Enter (its own binding,
        :mod:`cardhall.clients.tui.fields`) and escape in a field; the list's keys only while the
        list has the focus (a key typed elsewhere never joins or watches a table)."""
        listed = self.focused is not None and self.focused.id == "tables"
        if action == "watch":
            return listed
        if action == "help":
            return listed and self._selected() is not None
        if action in ("refresh", "filter", "new"):
            return not self._typing
        if action == "leave_field":
            return self.focused is not None
        return True

    def action_next_field(self) -> None:
        """Tab: from the input to the list, from the list (or the filter line) to the input; from
        nowhere (after escape) to the list."""
        grid = self.query_one("#tables", DataTable)
        (self.query_one("#create", Input) if self.focused is grid else grid).focus()

    def action_leave_field(self) -> None:
        """Escape: leave the field (or the list); the focus goes nowhere, where no key but the
        footer's acts (tab: the list, n: the create line, /: the filter line)."""
        self.set_focus(None)

    def action_new(self) -> None:
        self.query_one("#create", Input).focus()

    def action_filter(self) -> None:
        self.query_one("#filter", Input).focus()

    async def on_input_submitted(self, message: Input.Submitted) -> None:
        """Enter in the create line or the filter line, with the text as it was then."""
        message.stop()
        if message.input.id == "create":
            await self.create(message.value)
        elif message.input.id == "filter":
            await self.apply_filter(message.value)

    async def on_data_table_row_selected(self, message: DataTable.RowSelected) -> None:
        """Enter on the focused list (or a click on a row): join that table."""
        message.stop()
        if message.row_key.value is not None:
            await self.app.open_table(str(message.row_key.value), "player")  # type: ignore[attr-defined]

    def action_help(self) -> None:
        """``?`` on the list: the selected table's game (:class:`~cardhall.clients.tui.help.HelpScreen`)."""
        table = self._selected()
        game = next((cells[1] for key, cells in getattr(self, "_rows", []) if key == table), None)
        if game is not None:
            self.app.push_screen(HelpScreen(game, self.catalogue, None))

    async def apply_filter(self, typed: str) -> None:
        """Read the filter ``typed``, reload the list with it and return to the list; a bad filter is a message."""
        try:
            self.filters = parse_filter(typed)
        except ValueError as exc:
            self.app.report(str(exc))  # type: ignore[attr-defined]
            return
        shown = " ".join(f"{k}={v}" for k, v in self.filters.items())
        self.query_one("#status", Plain).update(f"showing the tables where {shown}" if shown else "showing every table")
        self.query_one("#tables", DataTable).focus()
        await self.action_refresh()

    def on_descendant_focus(self) -> None:
        self.refresh_bindings()

    def on_screen_resume(self) -> None:
        """Back from a table (or a prompt): the create line has the focus, not the list (a key
        pressed on the way back must not join a table again)."""
        if self.is_mounted and self.focused is not None and self.focused.id == "tables":
            self.query_one("#create", Input).focus()

    async def on_mount(self) -> None:
        table = self.query_one("#tables", DataTable)
        table.add_columns("table", "game", "stakes", "taken", "free", "watching", "status", "you")
        self.query_one("#create", Input).focus()
        app: Any = self.app
        try:
            self.catalogue = await app.client.games()
            app.catalogue = self.catalogue
            self.query_one("#help", Plain).update(games_help(self.catalogue) + "   filter: / from the list")
            self.query_one("#create", Input).placeholder = create_hint(self.catalogue)
        except FAILURES:
            pass  # the lobby refresh below reports the server unreachable
        await self.action_refresh()
        self.set_interval(app.lobby_refresh, self.action_refresh)

    async def action_refresh(self) -> None:
        """Reload the tables, keeping the selected row (by table id) and what is typed; with no
        filter, the kept unlisted tables too (looked up with their invites)."""
        app: Any = self.app
        asked = time.monotonic()
        query = dict(self.filters)
        try:
            tables = await asyncio.to_thread(app.fetch_tables, query) if query else await asyncio.to_thread(
                app.fetch_tables)
        except FAILURES as exc:
            self.query_one("#status", Plain).update(f"lobby unavailable: {exc}")
            return
        if not query:  # a filtered list leaves out tables that are open: nothing to forget from it
            listed = {t["id"] for t in tables if t.get("status") != "closed"}
            app.forget_unlisted(listed, asked)
            tables += await app.kept_unlisted({t["id"] for t in tables}, asked)
        grid = self.query_one("#tables", DataTable)
        rows = lobby_rows(tables, app.your_tables(), self.catalogue)
        if [r for r, _ in rows] == list(getattr(self, "_shown", [])) and rows == getattr(self, "_rows", None):
            return
        selected = self._selected()
        grid.clear()
        for key, cells in rows:  # the server's text as text (a str cell would be read as markup)
            grid.add_row(*(plain(c) for c in cells), key=key)
        self._rows, self._shown = rows, [r for r, _ in rows]
        if selected in self._shown:
            grid.move_cursor(row=self._shown.index(selected), animate=False)
        if not getattr(self, "_offered", False):
            self._offer_return(rows)

    def _offer_return(self, rows: list[tuple[str, list[str]]]) -> None:
        """The first time the list shows a table where you hold a seat (listed first): select it,
        move the focus to the list and say that Enter returns to it (G-5: the seat is kept)."""
        yours_ = [(key, cells) for key, cells in rows if cells[-1].startswith("your")]
        if not yours_:
            return
        self._offered = True
        key, cells = yours_[0]
        grid = self.query_one("#tables", DataTable)
        grid.move_cursor(row=0, animate=False)
        if not self.query_one("#create", Input).value:  # never taken from someone typing
            grid.focus()
        more = f" (and {len(yours_) - 1} more of yours)" if len(yours_) > 1 else ""
        self.query_one("#status", Plain).update(f"{cells[-1]} at {key} ({cells[1]}): Enter returns to it{more}")

    def _selected(self) -> str | None:
        grid = self.query_one("#tables", DataTable)
        if grid.row_count == 0:
            return None
        value = grid.coordinate_to_cell_key(grid.cursor_coordinate).row_key.value
        return str(value) if value is not None else None

    async def action_watch(self) -> None:
        table = self._selected()
        if table:
            await self.app.open_table(table, "spectator")  # type: ignore[attr-defined]

    async def create(self, typed: str) -> None:
        """Create the table ``typed`` (the create line's text when Enter was pressed) and sit down
        at it; or join what it names: an invite link (``join``/``watch`` before it, or alone),
        ``join ID``, ``watch ID``."""
        app: Any = self.app
        field = self.query_one("#create", Input)
        words = typed.split()
        verb = words[0] if words else ""
        if (len(words) == 2 and verb in ("join", "watch")) or (len(words) == 1 and parse_invite(words[0])):
            target = words[-1]
            role = "spectator" if verb == "watch" else "player"
            field.value = ""
            if parse_invite(target):
                await app.open_link(target, role)
            else:
                await app.open_table(target, role)
            return
        try:
            spec = parse_create(typed, getattr(self, "catalogue", None))
            table = await app.client.create_table(spec["game"], spec.get("seats"), spec["options"], spec.get("bots"))
        except FAILURES as exc:
            app.report(f"cannot create: {exc}")
            return
        field.value = ""
        await app.open_table(table, "player")
