"""The host's side of a table in the terminal client (protocol 1.5; SPEC "Private tables",
"The host's controls").

:class:`HostState` follows what the table screen learns: the invite (in the owner's ``join``
snapshot, ``info.invite``, refreshed from every snapshot), whether the table has a password, the
requests for a seat (``info.requests`` when the snapshot carries it, else the ``seat_requested``
events seen, each removed when approved, denied, lapsed, kicked or banned), the spectators known
from their chat (the ``from`` of a ``chat`` event without a seat), and this player's own request
(``pending``).

:class:`HostScreen` (``h`` at the table, for its owner only) lists the requests, the seated
people and the known spectators; on the selected one ``a`` approves and ``d`` denies a request,
``k`` kicks, ``b`` bans, ``o`` makes a seated person the host; ``y`` copies the invite link
(``App.copy_to_clipboard``: OSC 52, so it reaches the clipboard of the terminal's machine), ``c``
closes the table; banning, handing over and closing ask first (:class:`ConfirmScreen`). The footer
shows only the keys that work on the selected row; the server's refusals go to the message line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Footer

from cardhall.clients.tui.lobby import FAILURES
from cardhall.clients.tui.plain import Plain, plain
from cardhall.clients.tui.private import invite_link
from cardhall.clients.tui.prompts import DIALOG_CSS, ConfirmScreen

if TYPE_CHECKING:
    from cardhall.clients.tui.table import TableView

Data = dict[str, Any]


@dataclass
class HostState:
    """What the table screen knows of the table's privacy and requests (see the module docstring).
    ``requests``: player id -> (name, seat asked for or None); ``watchers``: player id -> name."""

    invite: str | None = None
    password: bool = False
    pending: bool = False
    requests: dict[str, tuple[str, int | None]] = field(default_factory=dict)
    watchers: dict[str, str] = field(default_factory=dict)

    def snapshot(self, snap: Data) -> None:
        """Take what a snapshot says: the invite (the owner's), the password flag, ``pending`` of a
        reply to a join, and the requests when ``info.requests`` is there (absent: those of the events)."""
        info = snap["info"]
        if info.get("invite"):
            self.invite = str(info["invite"])
        self.password = bool(info.get("password"))
        if "re" in snap:
            self.pending = bool(snap.get("pending"))
        if isinstance(info.get("requests"), list):
            self.requests = {str(r["player"]): (str(r.get("name", "")), r.get("seat")) for r in info["requests"]}

    def chat(self, event: Data) -> None:
        """A chat message: a sender without a seat is a known spectator."""
        sender = event.get("from")
        if isinstance(sender, str) and event.get("seat") is None:
            self.watchers[sender] = str(event.get("name", ""))

    def event(self, event: Data, me: str | None) -> str | None:
        """Apply a host event (:data:`~cardhall.clients.tui.private.HOST_EVENTS`); what happened
        to this player (``me``): ``approved``, ``denied``, ``lapsed``, ``kicked``, ``banned``, ``host``
        (it owns the table now), or None."""
        t, player = event.get("type"), event.get("player")
        mine = player is not None and player == me
        if t == "seat_requested":
            self.requests[str(player)] = (str(event.get("name", "")), None)
            self.watchers[str(player)] = str(event.get("name", ""))
            return None
        if t in ("seat_approved", "seat_denied", "seat_request_lapsed", "kicked", "banned"):
            self.requests.pop(str(player), None)
            if t == "banned":
                self.watchers.pop(str(player), None)
            if mine:
                self.pending = False
                return {"seat_approved": "approved", "seat_denied": "denied", "seat_request_lapsed": "lapsed"}.get(
                    str(t), str(t))
            return None
        if t == "owner_changed":
            if event.get("owner") == me:
                return "host"
            self.invite = None  # only the owner's snapshot carries it
        return None


def host_text(state: HostState, table: str, page: str, owner: bool) -> str:
    """The table screen's host line: the owner's invite link, password and requests; a requester's
    wait; empty otherwise.

    >>> host_text(HostState(invite="I", requests={"p_2": ("bob", None)}), "t_1", "http://h:1", True)
    'you host this table   invite http://h:1/#table=t_1&invite=I   no password   requests: bob   (h: host controls)'
    """
    if owner:
        parts = ["you host this table"]
        if state.invite:
            parts.append("invite " + invite_link(page, table, state.invite))
        parts.append("password set" if state.password else "no password")
        if state.requests:
            parts.append("requests: " + ", ".join(name for name, _ in state.requests.values()))
        return "   ".join(parts) + "   (h: host controls)"
    if state.pending:
        return "waiting for the host to approve your seat (you watch meanwhile; q withdraws)"
    return ""


class HostScreen(ModalScreen[None]):
    """The owner's controls of the table of ``view`` (a :class:`TableView`)."""

    DEFAULT_CSS = DIALOG_CSS + "HostScreen > Vertical { width: 110; } #people { height: auto; max-height: 14; }"
    BINDINGS = [
        Binding("a", "control('approve')", "approve"), Binding("d", "control('deny')", "deny"),
        Binding("k", "control('kick')", "kick"), Binding("b", "control('ban')", "ban"),
        Binding("o", "control('transfer')", "make host"), Binding("y", "copy", "copy invite"),
        Binding("c", "control('close')", "close table"), Binding("escape", "back", "back"),
    ]

    #: the controls each kind of row takes
    TAKES = {"request": ("approve", "deny", "kick", "ban"), "seat": ("kick", "ban", "transfer"),
             "watching": ("kick", "ban")}
    #: the controls that ask first
    ASK = {"ban": "Ban {name} from this table?", "transfer": "Make {name} the host of this table?",
           "close": "Close this table for everyone?"}

    def __init__(self, view: TableView) -> None:
        super().__init__()
        self.view = view
        self._rows: list[tuple[str, str, list[str]]] = []  # (kind, player, cells)
        self._leaving = False

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Plain("", id="host-title")
            yield DataTable(id="people", cursor_type="row")
            yield Plain("", id="status")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.redraw()
        self.query_one("#people", DataTable).focus()

    def redraw(self) -> None:
        """Draw the rows again from the table screen's state; leave when this player no longer owns it."""
        view = self.view
        if not view.owner or view.snap["info"]["status"] == "closed":
            if self.app.screen is self and not self._leaving:  # a question on top: once it is answered
                self._leaving = True
                self.dismiss(None)
            return
        state, me = view.host, view.client.player
        title = host_text(state, view.table, view.page, True).removesuffix("   (h: host controls)")
        self.query_one("#host-title", Plain).update(title)
        rows: list[tuple[str, str, list[str]]] = []
        for player, (name, seat) in state.requests.items():
            rows.append(("request", player, ["asks for a seat", name, str(seat) if seat else "any"]))
        seated = set()
        for o in view.snap["info"]["occupants"]:
            if o.get("player") and o["player"] != me:
                seated.add(o["player"])
                rows.append(("seat", o["player"], ["seated", str(o["name"]), str(o["seat"])]))
        for player, name in state.watchers.items():
            if player not in seated and player not in state.requests and player != me:
                rows.append(("watching", player, ["watching", name, "-"]))
        grid = self.query_one("#people", DataTable)
        if not grid.columns:
            grid.add_columns("who", "name", "seat")
        elif rows == self._rows:
            return
        selected = self.selected()
        grid.clear()
        for kind, player, cells in rows:
            grid.add_row(*(plain(c) for c in cells), key=f"{kind}:{player}")
        keys = [f"{kind}:{player}" for kind, player, _ in rows]
        if selected is not None and f"{selected[0]}:{selected[1]}" in keys:
            grid.move_cursor(row=keys.index(f"{selected[0]}:{selected[1]}"), animate=False)
        self._rows = rows
        self.refresh_bindings()

    def selected(self) -> tuple[str, str] | None:
        """``(kind, player)`` of the selected row: kind ``request``, ``seat`` or ``watching``."""
        grid = self.query_one("#people", DataTable)
        if grid.row_count == 0:
            return None
        key = grid.coordinate_to_cell_key(grid.cursor_coordinate).row_key.value
        kind, _, player = str(key).partition(":")
        return kind, player

    def on_data_table_row_highlighted(self) -> None:
        self.refresh_bindings()

    def on_screen_resume(self) -> None:
        """Back on top (a question answered): draw what changed meanwhile."""
        self.redraw()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The footer shows a control only where it works: on the selected row's kind; copying only
        with an invite known."""
        if action == "copy":
            return self.view.host.invite is not None
        if action == "control":
            what = str(parameters[0])
            if what == "close":
                return True
            selected = self.selected() if self.is_mounted else None
            return selected is not None and what in self.TAKES.get(selected[0], ())
        return True

    def action_copy(self) -> None:
        """Copy the invite link (OSC 52) and say it, with the link as text."""
        state = self.view.host
        if state.invite is None:
            return
        link = invite_link(self.view.page, self.view.table, state.invite)
        self.app.copy_to_clipboard(link)
        self.query_one("#status", Plain).update(f"copied the invite link: {link}")

    def action_back(self) -> None:
        self.dismiss(None)

    async def action_control(self, what: str) -> None:
        """Send control ``what`` (asking first where :data:`ASK` says) about the selected row's player."""
        selected = self.selected()
        player = selected[1] if selected is not None and what != "close" else None
        if what != "close" and (selected is None or what not in self.TAKES.get(selected[0], ())):
            return
        name = next((cells[1] for kind, p, cells in self._rows if p == player), player or "")
        question = self.ASK.get(what)
        if question is None:
            await self.send(what, player, name)
            return

        async def answered(yes: bool | None) -> None:
            if yes:
                await self.send(what, player, name)

        self.app.push_screen(ConfirmScreen(question.format(name=name)), answered)

    async def send(self, what: str, player: str | None, name: str) -> None:
        """The table control ``what`` (with ``player``); the outcome on the message line."""
        action: Data = {"type": what} if player is None else {"type": what, "player": player}
        try:
            await self.view.client.act(self.view.table, action)
        except FAILURES as exc:
            self.app.report(f"cannot {what}: {exc}")  # type: ignore[attr-defined]
            return
        done = {"approve": f"approved {name}", "deny": f"denied {name} a seat", "kick": f"kicked {name}",
                "ban": f"banned {name}", "transfer": f"{name} hosts the table now", "close": "closed the table"}
        if self.is_attached:
            self.query_one("#status", Plain).update(done[what])
