"""``cardhall play``: the terminal client (textual).

Lobby: the tables of ``GET /api/tables`` (``r`` refreshes), ``enter`` joins the
selected table as a player, ``w`` watches it, and the input at the bottom
creates a table: ``GAME [SEATS [BOTS]] [option=value ...]`` (e.g.
``no_limit_holdem 3 2 starting_stacks=500``), which you then join; the help
line above it lists the server's games, seats and options (``GET /api/games``).

Table: the state as your seat sees it (cards, board, stacks or card counts,
pot, points), whose turn it is with the clock counting down, the last actions,
the legal actions, the result. Keys: ``f`` fold, ``c`` check or call, ``b``
bet/raise (the amount typed in the input, else the minimum), ``a`` all-in,
``s`` snowfall, ``p`` play (Avalanche: type ``RANK [COUNT]`` in the input, e.g.
``9 2`` or ``10``; default one card of your lowest rank; a rank you do not hold is
refused with a message), ``space`` continue (solo
play), ``m`` rematch, ``escape`` leave to the lobby. It reconnects by itself
(``Client(reconnect=True)``) and redraws from a fresh snapshot after each event.

A game without a terminal renderer of its own (:mod:`cardhall.clients.tui.render`
picks it from the game's registration) is drawn as data
(:mod:`cardhall.clients.tui.generic`): its view as ``key: value`` lines, its
events as such lines in the log, its legal actions numbered; the digit keys
``1``..``9`` play that legal action (an amount typed in the input, else its
minimum), and Enter in the input plays what is typed, ``TYPE [values]``
(e.g. ``bet 3``).

Whatever the server sends (names, table ids, game and action names, error
messages, events) is shown as text, never read as markup
(:mod:`cardhall.clients.tui.plain`).
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Input

from cardhall.clients.client import Client, ServerError, fetch_json, http_base
from cardhall.clients.tui.generic import action_from, legal_text, parse_action
from cardhall.clients.tui.plain import Plain, PlainLog, plain, visible
from cardhall.clients.tui.render import event_line, has_renderer, table_text

Frame = dict[str, Any]
RANKS = "23456789TJQKAX"


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


def parse_create(text: str) -> Frame:
    """``"loco_poker 3 2 points_to_win=2"`` -> a ``create_table`` spec. ValueError on bad input."""
    words = text.split()
    if not words:
        raise ValueError("type: GAME [SEATS [BOTS]] [option=value ...]")
    spec: Frame = {"game": words[0], "options": {}}
    numbers = []
    for w in words[1:]:
        if "=" in w:
            key, _, value = w.partition("=")
            try:
                spec["options"][key] = json.loads(value)
            except json.JSONDecodeError:
                spec["options"][key] = value
        else:
            numbers.append(int(w))
    if numbers:
        spec["seats"] = numbers[0]
    if len(numbers) > 1:
        spec["bots"] = numbers[1]
    return spec


def parse_play(text: str, groups: dict[str, int]) -> Frame:
    """An Avalanche ``play`` action from the typed ``RANK [COUNT]`` (``"9 2"``, ``"10"`` or ``"t"``
    for a ten) and the legal action's ``groups`` (rank -> cards of that rank held).

    Nothing typed: one card of the lowest rank held. A rank that is unknown or not held, or a
    count that is not a number, raises ValueError with the message to show: nothing is guessed.
    The server checks the rest (counts too large or a play that does not beat the pile).

    >>> parse_play("10 2", {"T": 2, "4": 1})
    {'type': 'play', 'rank': 'T', 'count': 2}
    >>> parse_play("", {"T": 2, "4": 1})
    {'type': 'play', 'rank': '4', 'count': 1}
    """
    words = text.upper().split()
    if not words:
        return {"type": "play", "rank": min(groups, key=RANKS.index), "count": 1}
    rank = "T" if words[0] == "10" else words[0]
    held = " ".join(sorted(groups, key=RANKS.index))
    if len(rank) != 1 or rank not in RANKS:
        raise ValueError(f"unknown rank {words[0]!r}: type one of {held} (10 or T for a ten)")
    if rank not in groups:
        raise ValueError(f"no {words[0]} in your hand: you can play {held}")
    if len(words) > 1 and not words[1].isdigit():
        raise ValueError(f"the count must be a number, not {words[1]!r}")
    return {"type": "play", "rank": rank, "count": int(words[1]) if len(words) > 1 else 1}


class Lobby(Screen):
    """The tables on the server; create, join or watch one."""

    BINDINGS = [Binding("r", "refresh", "refresh"), Binding("w", "watch", "watch"),
                Binding("enter", "join", "join", show=True)]

    def compose(self) -> ComposeResult:
        yield Header()
        yield DataTable(id="tables", cursor_type="row")
        yield Plain("create: GAME [SEATS [BOTS]] [option=value ...]", id="help")  # the games: on_mount
        yield Input(placeholder="no_limit_holdem 2 1", id="create")
        yield Plain("", id="status")
        yield Footer()

    async def on_mount(self) -> None:
        table = self.query_one("#tables", DataTable)
        table.add_columns("table", "game", "seats", "taken", "watching", "status")
        app: CardhallApp = self.app  # type: ignore[assignment]
        try:
            self.query_one("#help", Plain).update(games_help(await app.client.games()))
        except OSError:
            pass  # the lobby refresh below reports the server unreachable
        await self.action_refresh()

    async def action_refresh(self) -> None:
        app: CardhallApp = self.app  # type: ignore[assignment]
        try:
            tables = await asyncio.to_thread(app.fetch_tables)
        except OSError as exc:
            self.query_one("#status", Plain).update(f"lobby unavailable: {exc}")
            return
        grid = self.query_one("#tables", DataTable)
        grid.clear()
        for t in tables:  # the server's text as text (a str cell would be read as markup)
            grid.add_row(*(plain(t[k]) for k in ("id", "game", "seats", "taken", "spectators", "status")),
                         key=t["id"])

    def _selected(self) -> str | None:
        grid = self.query_one("#tables", DataTable)
        if grid.row_count == 0:
            return None
        return grid.coordinate_to_cell_key(grid.cursor_coordinate).row_key.value

    async def action_join(self) -> None:
        table = self._selected()
        if table:
            await self.app.open_table(table, "player")  # type: ignore[attr-defined]

    async def action_watch(self) -> None:
        table = self._selected()
        if table:
            await self.app.open_table(table, "spectator")  # type: ignore[attr-defined]

    async def on_data_table_row_selected(self, message: DataTable.RowSelected) -> None:
        await self.app.open_table(message.row_key.value, "player")  # type: ignore[attr-defined]

    async def on_input_submitted(self, message: Input.Submitted) -> None:
        app: CardhallApp = self.app  # type: ignore[assignment]
        try:
            spec = parse_create(message.value)
            table = await app.client.create_table(spec["game"], spec.get("seats"), spec["options"], spec.get("bots"))
        except (ValueError, ServerError) as exc:
            self.query_one("#status", Plain).update(f"cannot create: {exc}")
            return
        message.input.value = ""
        await app.open_table(table, "player")


class TableView(Screen):
    """One table, as a seat or a spectator."""

    BINDINGS = [
        Binding("f", "act('fold')", "fold"), Binding("c", "act('check_call')", "check/call"),
        Binding("b", "act('bet_raise')", "bet/raise"), Binding("a", "act('all_in')", "all-in"),
        Binding("s", "act('snowfall')", "snowfall"), Binding("p", "act('play')", "play"),
        Binding("space", "act('continue')", "continue"), Binding("m", "act('rematch')", "rematch"),
        Binding("escape", "leave", "lobby"),
        *(Binding(str(n), f"pick({n})", f"legal action {n}", show=False) for n in range(1, 10)),
    ]

    def __init__(self, table: str, role: str) -> None:
        super().__init__()
        self.table = table
        self.role = role
        self.snap: Frame | None = None
        self.turn: Frame | None = None
        self.legal: list[Frame] = []
        self.turn_seen = 0.0
        self.events: list[Frame] = []
        self.generic = False  # the game has no terminal renderer of its own: drawn as data
        self._refresh_due = False

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical():
            yield Plain("", id="info")
            yield Plain("", id="board")
            yield Plain("", id="turn")
            yield Plain("", id="legal")
            yield PlainLog(id="log", max_lines=200)
            yield Input(placeholder="amount, or for Avalanche: RANK [COUNT]", id="amount")
            yield Plain("", id="status")
        yield Footer()

    @property
    def client(self) -> Client:
        return self.app.client  # type: ignore[attr-defined,no-any-return]

    async def on_mount(self) -> None:
        snap = await self.client.join(self.table, role=self.role)
        self._show(snap)
        self.set_interval(0.2, self._tick)
        self.query_one("#log", PlainLog).focus()  # keys act; click the input to type an amount
        self.run_worker(self._follow(), exclusive=True)

    async def _follow(self) -> None:
        async for frame in self.client.events(self.table):
            if frame["type"] == "snapshot":
                self._show(frame)
                continue
            self.events.append(frame["event"])
            line = event_line(frame["event"], generic=self.generic)
            if line:
                self.query_one("#log", PlainLog).write(line)
            if "turn" in frame:
                self.turn, self.turn_seen = frame["turn"], time.monotonic()
                self.legal = frame.get("legal", [])
            elif self.turn is not None and frame["event"]["type"] in ("match_ended", "paused", "closed"):
                self.turn, self.legal = None, []
            if not self._refresh_due:
                self._refresh_due = True
                self.call_later(self._refresh_state)

    async def _refresh_state(self) -> None:
        self._refresh_due = False
        try:
            snap = await self.client.join(self.table, role=self.role)
        except (TimeoutError, ServerError, ConnectionError) as exc:
            self.query_one("#status", Plain).update(str(exc))
            return
        self._show(snap)

    def _show(self, snap: Frame) -> None:
        self.snap = snap
        info = snap["info"]
        you = snap.get("you")
        names = {o["seat"]: o["name"] for o in info["occupants"]}
        self.generic = not has_renderer(info["game"])
        seats = ", ".join(f"{o['seat']} {o['name']}" + (" (bot)" if "bot" in o else "")
                          + ("" if o["connected"] else " (away)") for o in info["occupants"])
        self.query_one("#info", Plain).update(
            f"{info['game']}  table {info['id']}  match {info['match']}  {info['status']}  "
            f"you: {'seat ' + str(you) if you else 'watching'}\nseats: {seats}")
        self.query_one("#board", Plain).update(table_text(info["game"], snap.get("state"), you, names))
        self.turn = snap.get("turn")
        self.turn_seen = time.monotonic()
        self.legal = snap.get("legal", [])
        self._tick()

    def _tick(self) -> None:
        turn = self.turn
        you = self.snap.get("you") if self.snap else None
        if not turn:
            text = "nobody to act"
        else:
            mine = turn["seat"] == you
            who = "YOUR TURN" if mine else f"seat {turn['seat']} to act"
            if turn.get("continue"):
                text = f"{who}: press space to continue" if mine else f"seat {turn['seat']} to continue"
            elif "clock" in turn:
                left = turn["clock"] - (time.monotonic() - self.turn_seen)
                bank = turn["bank"] + min(0.0, left)
                text = f"{who}   clock {max(0.0, left):4.1f}s   bank {max(0.0, bank):4.1f}s"
            else:
                text = who
        self.query_one("#turn", Plain).update(text)
        shown = legal_text(self.legal) if self.generic else "  ".join(_legal_text(a) for a in self.legal)
        self.query_one("#legal", Plain).update("legal: " + shown if self.legal else "")

    def _amount(self) -> str:
        return self.query_one("#amount", Input).value.strip()

    def choose(self, what: str) -> Frame | None:
        """The action for key ``what`` from the legal actions, or None; ValueError (with the
        message to show) when the typed Avalanche play names a rank not held (:func:`parse_play`)."""
        legal = {a["type"]: a for a in self.legal}
        if what in ("continue", "rematch"):
            return {"type": what}
        if what == "check_call":
            kind = "check" if "check" in legal else "call" if "call" in legal else None
            return {"type": kind} if kind else None
        if what == "bet_raise":
            kind = "bet" if "bet" in legal else "raise" if "raise" in legal else None
            if kind is None:
                return None
            text = self._amount()
            return {"type": kind, "amount": int(text) if text.isdigit() else legal[kind]["min"]}
        if what == "play" and "play" in legal:
            return parse_play(self._amount(), legal["play"]["groups"])
        return {"type": what} if what in legal else None

    async def action_act(self, what: str) -> None:
        status = self.query_one("#status", Plain)
        try:
            action = self.choose(what)
        except ValueError as exc:  # a rank typed that the hand does not hold: say so, play nothing
            status.update(str(exc))
            return
        if action is None:
            status.update(f"{what.replace('_', '/')} is not possible now")
            return
        await self._send(action, turn=what != "rematch")

    async def action_pick(self, n: int) -> None:
        """Play the ``n``-th legal action (from 1), with the amount typed, else its minimum."""
        status = self.query_one("#status", Plain)
        if not 1 <= n <= len(self.legal):
            status.update(f"there is no legal action {n} now")
            return
        try:
            action = action_from(self.legal[n - 1], self._amount())
        except ValueError as exc:
            status.update(str(exc))
            return
        await self._send(action)

    async def _send(self, action: Frame, turn: bool = True) -> None:
        """``act`` with ``action`` (in the open turn when ``turn``); the outcome goes to the status line."""
        status = self.query_one("#status", Plain)
        try:
            await self.client.act(self.table, action, turn=self.turn["id"] if self.turn and turn else None)
            status.update(f"sent {action}")
            self.query_one("#amount", Input).value = ""
        except ServerError as exc:
            status.update(f"{exc.code}: {exc.message}")

    async def on_input_submitted(self, message: Input.Submitted) -> None:
        """Enter in the input: a game drawn as data plays what is typed (``TYPE [values]``);
        otherwise play (Avalanche) or bet/raise the amount typed."""
        if self.generic:
            try:
                action = parse_action(self._amount(), self.legal)
            except ValueError as exc:
                self.query_one("#status", Plain).update(str(exc))
            else:
                await self._send(action)
        else:
            kinds = {a["type"] for a in self.legal}
            await self.action_act("play" if "play" in kinds else "bet_raise")
        self.query_one("#log", PlainLog).focus()

    async def action_leave(self) -> None:
        try:
            await self.client.leave(self.table)
        except (ServerError, ConnectionError):
            pass
        self.app.pop_screen()


def _legal_text(a: Frame) -> str:
    if "groups" in a:
        return "play [" + " ".join(f"{r}×{n}" for r, n in a["groups"].items()) + "]"
    if a.get("min") is not None and a["type"] != "call" and a.get("min") != a.get("max"):
        return f"{a['type']} {a['min']}..{a['max']}"
    if a.get("min") is not None:
        return f"{a['type']} {a['min']}"
    return a["type"]


class CardhallApp(App):
    """The terminal client. ``server``: the websocket URL; ``name``: shown at tables."""

    TITLE = "cardhall"
    CSS = "#board { padding: 1 2; border: round $accent; } #turn { text-style: bold; } #log { height: 10; }"

    def __init__(self, server: str = "ws://127.0.0.1:8000/ws", name: str = "player", codec: str = "msgpack") -> None:
        super().__init__()
        self.server = server
        self.player_name = name
        self.client = Client(server, codec=codec, reconnect=True)

    def fetch_tables(self) -> list[Frame]:
        """``GET /api/tables`` (blocking; run in a thread)."""
        return fetch_json(http_base(self.server) + "/api/tables", timeout=5)

    async def on_mount(self) -> None:
        await self.client.connect()
        try:
            welcome = await self.client.hello(self.player_name)
        except ServerError as exc:  # a name the server refuses (SPEC "Names"): say why and stop
            self.exit(return_code=2, message=plain(f"cardhall play: {exc.message}"))
            return
        self.sub_title = f"{visible(welcome['name'])} @ {self.server}"  # the name as the server keeps it
        await self.push_screen(Lobby())

    async def open_table(self, table: str, role: str) -> None:
        await self.push_screen(TableView(table, role))

    async def on_unmount(self) -> None:
        await self.client.close()
