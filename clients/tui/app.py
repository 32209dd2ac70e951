"""``cardhall play``: the terminal client (textual).

Lobby (:mod:`cardhall.clients.tui.lobby`): the tables of ``GET /api/tables``,
refreshed by themselves; the input, focused first, creates a table: ``GAME
[SEATS [BOTS]] [option=value ...]`` (e.g. ``no_limit_holdem 3 2
starting_stacks=500``), which you then join; the help line above it lists the
server's games, seats and options (``GET /api/games``). Tab moves to the
table list, where Enter joins the selected table and ``w`` watches it.

Table (:mod:`cardhall.clients.tui.table`): the state as your seat sees it,
players by name, whose turn it is with the clock counting down, the log, the
legal actions and the bet presets; the footer lists the keys that work now.
It reconnects by itself (``Client(reconnect=True)``) and redraws from a fresh
snapshot after each event.

A game without a terminal renderer of its own (:mod:`cardhall.clients.tui.render`
picks it from the game's registration) is drawn as data
(:mod:`cardhall.clients.tui.generic`): its view as ``key: value`` lines, its
events as such lines in the log, its legal actions numbered; the digit keys
``1``..``9`` play that legal action (an amount typed in the input, else its
minimum), and Enter in the input plays what is typed, ``TYPE [values]``
(e.g. ``bet 3``).

Whatever the server sends (names, table ids, game and action names, error
messages, events) is shown as text, never read as markup
(:mod:`cardhall.clients.tui.plain`); whatever goes wrong talking to it (an
``error`` reply, a dropped connection) is a message (:meth:`CardhallApp.report`),
never a crash.
"""

from __future__ import annotations

from typing import Any

from textual.app import App

from cardhall.clients.client import Client, ServerError, fetch_json, http_base
from cardhall.clients.tui.actions import parse_play
from cardhall.clients.tui.lobby import FAILURES, Lobby, games_help, parse_create
from cardhall.clients.tui.plain import Plain, plain, visible
from cardhall.clients.tui.table import TableView

__all__ = ["CardhallApp", "Lobby", "TableView", "games_help", "parse_create", "parse_play"]

Frame = dict[str, Any]


class CardhallApp(App):
    """The terminal client. ``server``: the websocket URL; ``name``: shown at tables;
    ``lobby_refresh``: seconds between the lobby's reloads."""

    TITLE = "cardhall"
    CSS = """
    #board { padding: 1 2; border: round $accent; }
    #turn { text-style: bold; }
    #log { height: 10; border: round $panel; }
    #log:focus, #tables:focus { border: round $success; }
    #status { color: $warning; }
    #preview { color: $text-muted; }
    """

    def __init__(self, server: str = "ws://127.0.0.1:8000/ws", name: str = "player", codec: str = "msgpack",
                 lobby_refresh: float = 3.0) -> None:
        super().__init__()
        self.server = server
        self.player_name = name
        self.lobby_refresh = lobby_refresh
        self.client = Client(server, codec=codec, reconnect=True)

    def fetch_tables(self) -> list[Frame]:
        """``GET /api/tables`` (blocking; run in a thread)."""
        return fetch_json(http_base(self.server) + "/api/tables", timeout=5)

    def report(self, text: str) -> None:
        """Say ``text`` (what went wrong) on the current screen's message line and as a notification."""
        try:
            self.screen.query_one("#status", Plain).update(text)
        except Exception:  # a screen without a message line: the notification says it
            pass
        self.notify(visible(text), severity="warning", markup=False)

    async def on_mount(self) -> None:
        try:
            await self.client.connect()
            welcome = await self.client.hello(self.player_name)
        except ServerError as exc:  # a name the server refuses (SPEC "Names"): say why and stop
            self.exit(return_code=2, message=plain(f"cardhall play: {exc.message}"))
            return
        except (OSError, TimeoutError) as exc:
            self.exit(return_code=1, message=plain(f"cardhall play: cannot reach {self.server}: {exc}"))
            return
        self.sub_title = f"{visible(welcome['name'])} @ {self.server}"  # the name as the server keeps it
        await self.push_screen(Lobby())

    async def open_table(self, table: str, role: str) -> None:
        """Join ``table`` as ``role`` (``player`` or ``spectator``) and show it; a refusal
        (``table_full``, ...) or a dropped connection is a message and the lobby stays."""
        try:
            snap = await self.client.join(table, role=role)
        except FAILURES as exc:
            self.report(f"cannot {'join' if role == 'player' else 'watch'} {table}: {exc}")
            return
        await self.push_screen(TableView(table, role, snap))

    async def on_unmount(self) -> None:
        await self.client.close()
