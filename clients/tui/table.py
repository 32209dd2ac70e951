"""The terminal client's table screen: one table as a seat or a spectator.

The state as the viewer's seat sees it (a row per player by name, cards,
board, pot), whose turn it is with the clock counting down, the log of what
happened (wrapped to the width), the legal actions, the bet presets, a message
line. The footer lists the keys that work now: ``f`` fold, ``c`` check/call,
``b`` (or ``r``) bet/raise the amount typed (else the minimum), ``a`` all-in,
``1``..``5`` the presets (min, ½ pot, ¾ pot, pot, all-in: they fill the
amount), ``s`` snowfall and ``p`` play (with the text typed), ``space`` continue (solo play),
``m`` rematch, ``tab`` to type, ``t`` to chat, ``?`` the game's rules and help
(:mod:`cardhall.clients.tui.help`). Escape leaves a field (back to the keys) and
does nothing else; ``q`` goes back to the lobby (leaving the table: the seat is
freed between matches, sat out during one; ``ctrl+q`` quits and keeps it, G-5).
Enter in a field is the field's own (:mod:`cardhall.clients.tui.fields`): it
plays, or sends the chat line, with the text as typed or pasted. A spectator
has no action keys and no amount field: the footer lists only what it can do.
A game drawn as data numbers its legal actions: ``1``..``9`` play them.

Which action keys a game has, what its typed text means and what it would do (a preview under
the field as it is typed), its log lines and its words for actions are its terminal parts
(:func:`cardhall.clients.tui.render.parts`, from its registration): nothing here names a game.

The log starts with the table's recent events: right after the ``snapshot``
the screen joins again with ``since`` = the snapshot's ``seq`` less
:data:`HISTORY` (SPEC "Resuming and reconnecting": the server resends the
events after ``since`` that it still holds, then ``ok``), and writes those
events in ``seq`` order, each once (the live ones that arrived meanwhile are
the same events): the ones the snapshot already holds only as log lines.

Private tables and the host (protocol 1.5, :mod:`cardhall.clients.tui.host`): the table's owner
sees a host line (the invite link, whether there is a password, the requests for a seat waiting)
and ``h`` opens the host controls (approve or deny a request, kick, ban, make host, copy the
invite link, close the table); the key shows for the owner only. A player whose request for a seat
waits (``pending``) watches, told so on that line, until the host's answer (or its lapse) says
otherwise on the message line; a player kicked watches, one banned is told so.

Every failure talking to the server becomes a message (:meth:`CardhallApp.report`), never a crash.
"""

from __future__ import annotations

import time
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Footer, Header, Input

from cardhall.clients.client import Client, http_base
from cardhall.clients.tui.actions import Words, action_words, choose, legal_line
from cardhall.clients.tui.chat import CHAT_EVENTS, ChatBox
from cardhall.clients.tui.events import event_line, who
from cardhall.clients.tui.fields import AmountInput
from cardhall.clients.tui.generic import action_from, legal_text, parse_action
from cardhall.clients.tui.help import HelpScreen, table_keys
from cardhall.clients.tui.host import HostScreen, HostState, host_text
from cardhall.clients.tui.lobby import FAILURES
from cardhall.clients.tui.plain import Plain, PlainLog
from cardhall.clients.tui.presets import PRESETS, presets
from cardhall.clients.tui.private import HOST_EVENTS, host_line
from cardhall.clients.tui.render import TuiGame, parts, table_text

Frame = dict[str, Any]
#: what the amount field takes in a game drawn as data
GENERIC_HINT = "TYPE [values], or an amount for 1-9"
#: seconds left on the clock below which the turn line warns
LOW_CLOCK = 5.0
#: how many of the table's events before the snapshot the log asks for on joining (at most what the
#: server still holds, SPEC "Limits": 256 per table)
HISTORY = 60
#: the keys only a seated player has (a spectator's footer leaves them out)
SEATED_ONLY = ("act", "preset", "pick", "type")


def _parsed(action: str) -> tuple[str, tuple[object, ...]]:
    """``"act('fold')"`` -> ``("act", ("fold",))``, as textual reads a binding's action."""
    name, _, rest = action.partition("(")
    args = tuple(a.strip().strip("'") for a in rest.rstrip(")").split(",")) if rest.rstrip(")") else ()
    return name, tuple(int(a) if a.isdigit() else a for a in args)


class TableView(Screen):
    """One table, as a seat or a spectator; ``snap`` the ``snapshot`` its ``join`` answered (one
    with ``pending``: this player's request for a seat waits, and it watches meanwhile)."""

    BINDINGS = [
        Binding("f", "act('fold')", "fold"), Binding("c", "act('check_call')", "check/call"),
        Binding("b,r", "act('bet_raise')", "bet/raise"), Binding("a", "act('all_in')", "all-in"),
        *(Binding(str(n), f"preset({n})", label) for n, (label, _) in enumerate(PRESETS, 1)),
        Binding("s", "act('snowfall')", "snowfall"), Binding("p", "act('play')", "play"),
        *(Binding(str(n), f"pick({n})", f"action {n}") for n in range(1, 10)),
        Binding("space", "act('continue')", "continue"), Binding("m", "act('rematch')", "rematch"),
        Binding("tab", "type", "type amount"), Binding("t", "chat", "chat"), Binding("h", "host", "host"),
        Binding("question_mark", "help", "game help"),
        Binding("escape", "keys", "leave field"), Binding("q", "leave", "lobby"),
    ]
    #: the log has the focus from the first moment: keys act at once (a key typed while the screen
    #: mounts would otherwise land in the amount field, the first focusable widget)
    AUTO_FOCUS = "#log"

    def __init__(self, table: str, role: str, snap: Frame) -> None:
        super().__init__()
        self.table = table
        self.role = role
        self.snap: Frame = snap
        self.turn: Frame | None = None
        self.legal: list[Frame] = []
        self.turn_seen = 0.0
        self.events: list[Frame] = []
        self.names: dict[int, str] = {}
        self.parts: TuiGame | None = parts(snap["info"]["game"])  # None: drawn as data
        self.generic = self.parts is None
        self._refresh_due = False
        self.host = HostState()
        self.banned = False

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical():
            yield Plain("", id="info")
            yield Plain("", id="host")
            yield Plain("", id="board")
            yield Plain("", id="turn")
            yield Plain("", id="legal")
            yield PlainLog(id="log", max_lines=200, wrap=True)
            hint = GENERIC_HINT if self.parts is None else self.parts.hint
            yield AmountInput(placeholder=f"{hint}   (tab to type, escape back to keys)", id="amount")
            yield Plain("", id="preview")
            yield Plain("", id="status")
            yield ChatBox(self.client, self.table, id="chat")
        yield Footer(compact=True)

    @property
    def client(self) -> Client:
        return self.app.client  # type: ignore[attr-defined,no-any-return]

    @property
    def page(self) -> str:
        """The server's page (``http://host:port``): invite links start with it."""
        return http_base(self.app.server)  # type: ignore[attr-defined]

    @property
    def owner(self) -> bool:
        """This player owns the table (the host's controls are its)."""
        return self.client.player is not None and self.snap["info"].get("owner") == self.client.player

    @property
    def you(self) -> int | None:
        """The viewer's seat, None when watching."""
        return self.snap.get("you")

    async def on_mount(self) -> None:
        self._show(self.snap)
        if self.owner and self.host.invite:
            self.query_one("#status", Plain).update("h: host controls (approve seats, kick, ban, copy the invite link)")
        self.set_interval(0.2, self._tick)
        self.query_one("#log", PlainLog).focus()  # keys act; tab to type an amount
        self.run_worker(self._follow(), exclusive=True)

    # -- what the footer offers ----------------------------------------------------------------
    @property
    def _typing(self) -> bool:
        return isinstance(self.focused, Input)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """True: the key works now; None: shown dimmed (this game's, not possible now); False: hidden."""
        if action == "keys":
            return self._typing
        if self._typing:
            return False
        if action in SEATED_ONLY and self.you is None:  # watching: no action keys at all
            return False
        if action == "host":
            return self.owner and self.snap["info"]["status"] != "closed"
        kinds = {a["type"] for a in self.legal}
        if action == "act":
            what = str(parameters[0])
            if what == "continue":
                return True if self.turn and self.turn.get("continue") and self.turn["seat"] == self.you else None
            if what == "rematch":
                return True if self.snap["info"]["status"] == "finished" and self.you else False
            if self.parts is None:
                return False
            wanted = {"check_call": {"check", "call"}, "bet_raise": {"bet", "raise"}}.get(what, {what})
            if self.parts.keys is None:  # the game names no keys: those of its legal actions now
                return bool(kinds & wanted)
            if what not in self.parts.keys:
                return False
            return True if kinds & wanted else None
        if action == "preset":
            return bool(self._presets()) and not self.generic
        if action == "pick":
            return self.generic and int(str(parameters[0])) <= len(self.legal)
        return True

    def on_descendant_focus(self) -> None:
        self._refresh_keys()

    def _presets(self) -> list[Any]:
        return presets(self.legal, self.snap.get("state"), self.you) if self.turn and self.turn["seat"] == self.you else []

    # -- the event stream ---------------------------------------------------------------------
    async def _follow(self) -> None:
        recent = await self._recent()
        for frame in recent:
            if not self.is_attached:  # the view was closed: its widgets are gone before this worker is cancelled
                return
            self._take(frame)
        async for frame in self.client.events(self.table):
            if not self.is_attached:
                return
            self._take(frame)
        if self.is_attached:
            self.app.report("the connection to the server is lost: restart cardhall play")  # type: ignore[attr-defined]

    async def _recent(self) -> list[Frame]:
        """The table's last :data:`HISTORY` events up to now, for the log: join again with ``since``
        (SPEC "Resuming and reconnecting"), then take the frames received by then, in ``seq`` order,
        each ``seq`` once (an event that arrived live and again resent: the resent copy, whose
        ``legal`` is the turn's now). A ``snapshot`` in reply (the server no longer holds those
        events) is shown; a failure leaves the log to the live events."""
        since = max(0, int(self.snap.get("seq") or 0) - HISTORY)
        try:
            reply = await self.client.join(self.table, role=self.role, since=since)
        except FAILURES:
            return []
        if reply.get("type") == "snapshot":
            self._show(reply)
        events: dict[int, Frame] = {}
        snapshots: list[Frame] = []
        for _ in range(self.client.inbox.qsize()):
            try:
                frame = await self.client.next_frame(timeout=1.0)
            except (ConnectionError, TimeoutError):
                break
            if frame.get("table") != self.table:
                continue
            if frame.get("type") == "event":
                events[int(frame["seq"])] = frame
            elif frame.get("type") == "snapshot":
                snapshots.append(frame)
        return [events[seq] for seq in sorted(events)] + snapshots[-1:]

    def _take(self, frame: Frame) -> None:
        """One frame of the table: a snapshot redraws it; an event goes to the log (or the chat box)
        and, when newer than the snapshot shown, changes the turn, the names, the host line."""
        if frame["type"] == "snapshot":
            self._show(frame)
            return
        event = frame["event"]
        if int(frame.get("seq") or 0) <= int(self.snap.get("seq") or 0):  # the snapshot holds it: a line only
            self._recall(event)
            return
        if event["type"] in CHAT_EVENTS:  # the chat box's: no change to the table or its turn
            self.query_one(ChatBox).add(event)
            self.host.chat(event)
            return
        self.events.append(event)
        if event["type"] == "seated" and isinstance(event.get("seat"), int):
            self.names[event["seat"]] = str(event.get("name", ""))
        if event["type"] == "closed":  # the table is gone: not kept any more, nothing to host
            self.app.forget_tables([self.table])  # type: ignore[attr-defined]
            self.snap["info"]["status"] = "closed"
            self._host_changed()
        if event["type"] in HOST_EVENTS:
            line = host_line(event, self._name_of, self.client.player)
            self._host_event(event)
        else:
            line = self._event_line(event)
        if line:
            self.query_one("#log", PlainLog).write(line)
        if "turn" in frame:
            self.turn, self.turn_seen = frame["turn"], time.monotonic()
            self.legal = frame.get("legal", [])
            self._legal_changed()
        elif self.turn is not None and event["type"] in ("match_ended", "paused", "closed"):
            self.turn, self.legal = None, []
            self._legal_changed()
        if not self._refresh_due:
            self._refresh_due = True
            self.call_later(self._refresh_state)

    def _recall(self, event: Frame) -> None:
        """An event the snapshot shown already holds (the log's history): its line only."""
        if event["type"] in CHAT_EVENTS:
            self.query_one(ChatBox).add(event)
            return
        if event["type"] in HOST_EVENTS:
            line = host_line(event, self._name_of, self.client.player)
        else:
            line = self._event_line(event)
        if line:
            self.query_one("#log", PlainLog).write(line)

    def _event_line(self, event: Frame) -> str | None:
        """The log's line for one of the table's or the game's events (None: no line)."""
        return event_line(event, self.names, game=None if self.parts is None else self.parts.event)

    def _name_of(self, player: str) -> str:
        """A name for a public player id: its seat's, a request's, a known spectator's."""
        for o in self.snap["info"]["occupants"]:
            if o.get("player") == player:
                return str(o["name"])
        return self.host.requests.get(player, (self.host.watchers.get(player, ""), None))[0] or player

    def _host_event(self, event: Frame) -> None:
        """A host event: the requests change, and one about this player changes how it follows the
        table (approved: as its seat; denied, lapsed, kicked: watching; banned: gone)."""
        happened = self.host.event(event, self.client.player)
        if event["type"] == "owner_changed":  # the refreshed snapshot will say so too; the keys change now
            self.snap["info"]["owner"] = event.get("owner")
        said = {"approved": "the host approved your request: you sit at seat {seat}",
                "denied": "the host turned down your request for a seat: you are watching",
                "lapsed": "your request for a seat lapsed ({reason}): you are watching",
                "kicked": "the host removed you from your seat: you are watching",
                "banned": "the host banned you from this table (q: back to the lobby)",
                "host": "you host this table now (h: host controls)"}.get(happened or "")
        if happened == "approved":
            self.role = "player"
        elif happened in ("denied", "lapsed", "kicked"):
            self.role = "spectator"
        elif happened == "banned":
            self.banned = True
            self.app.forget_tables([self.table])  # type: ignore[attr-defined]
        if said:
            self.app.report(said.format(**event))  # type: ignore[attr-defined]
        self._host_changed()

    def _host_changed(self) -> None:
        """Redraw the host line, the footer's keys, and the host controls when open."""
        text = host_text(self.host, self.table, self.page, self.owner and self.snap["info"]["status"] != "closed")
        line = self.query_one("#host", Plain)
        line.update(text)
        line.display = bool(text)
        self._refresh_keys()
        for screen in self.app.screen_stack:
            if isinstance(screen, HostScreen) and screen.view is self and screen.is_mounted:
                screen.redraw()

    def action_host(self) -> None:
        """Open the host controls (the owner's)."""
        if self.owner:
            self.app.push_screen(HostScreen(self))

    async def _refresh_state(self) -> None:
        self._refresh_due = False
        if self.banned:  # the table answers this player no more
            return
        try:
            snap = await self.client.join(self.table, role=self.role)
        except FAILURES as exc:
            self.app.table_failed(self.table, exc)  # type: ignore[attr-defined]
            self.app.report(str(exc))  # type: ignore[attr-defined]
            return
        self._show(snap)

    # -- drawing ------------------------------------------------------------------------------
    def _show(self, snap: Frame) -> None:
        self.snap = snap
        info = snap["info"]
        you = snap.get("you")
        self.app.table_seen(self.table, self.role, snap)  # type: ignore[attr-defined]  # the seat kept between runs
        self.names = {o["seat"]: o["name"] for o in info["occupants"]}
        self.parts = parts(info["game"])
        self.generic = self.parts is None
        seats = ", ".join(f"{o['seat']} {o['name']}" + (" (bot)" if "bot" in o else "")
                          + ("" if o["connected"] else " (away)") for o in info["occupants"])
        me = f"seat {you} ({who(self.names, you)})" if you else "watching"
        self.query_one("#info", Plain).update(
            f"{info['game']}  table {info['id']}  match {info['match']}  {info['status']}  you: {me}\nseats: {seats}")
        self.query_one("#board", Plain).update(table_text(info["game"], snap.get("state"), you, self.names))
        self.turn = snap.get("turn")
        self.turn_seen = time.monotonic()
        self.legal = snap.get("legal", [])
        self.host.snapshot(snap)
        self.query_one("#amount", Input).display = you is not None  # watching: nothing to type there
        self._host_changed()
        self._legal_changed()

    def _legal_changed(self) -> None:
        """Redraw the legal line, the presets and the preview, and the footer's keys."""
        if self.generic:
            shown = legal_text(self.legal)
        else:
            shown = legal_line(self.legal, self._words)
            sizes = self._presets()
            if sizes:
                shown += "\npresets: " + "  ".join(f"{n} {p.label} {p.amount}" for n, p in enumerate(sizes, 1))
        self.query_one("#legal", Plain).update("legal: " + shown if self.legal else "")
        self._preview()
        self._tick()
        self._refresh_keys()

    def _refresh_keys(self) -> None:
        """Redraw the footer when the keys that work (or show) changed: not on every event."""
        keys = tuple(self.check_action(*_parsed(b.action)) for b in self.BINDINGS if isinstance(b, Binding))
        if keys != getattr(self, "_keys", None):
            self._keys = keys
            self.refresh_bindings()

    @property
    def _words(self) -> Words | None:
        """The game's own words for actions (``TuiGame.words``), or None."""
        return None if self.parts is None else self.parts.words

    def _preview(self) -> None:
        """Under the amount field: what the game says the text typed would do (its ``preview``)."""
        preview = None if self.parts is None else self.parts.preview
        text = preview(self._amount(), self.legal, self.snap.get("state")) if preview is not None else ""
        self.query_one("#preview", Plain).update(text)

    def on_input_changed(self, message: Input.Changed) -> None:
        self._preview()

    def _tick(self) -> None:
        turn, you = self.turn, self.you
        if self.snap["info"]["status"] == "paused":
            text = "the table is paused"
        elif not turn:
            text = "nobody to act"
        else:
            mine = turn["seat"] == you
            who_ = "YOUR TURN" if mine else f"{who(self.names, turn['seat'])} to act"
            if turn.get("continue"):
                text = f"{who_}: press space to continue" if mine else f"{who(self.names, turn['seat'])} to continue"
            elif "clock" in turn:
                left = turn["clock"] - (time.monotonic() - self.turn_seen)
                bank = turn["bank"] + min(0.0, left)
                text = f"{who_}   clock {max(0.0, left):4.1f}s   bank {max(0.0, bank):4.1f}s"
                if mine and max(0.0, left) + max(0.0, bank) < LOW_CLOCK:
                    text += "   HURRY"
            else:
                text = who_
        self.query_one("#turn", Plain).update(text)

    # -- acting -------------------------------------------------------------------------------
    def _amount(self) -> str:
        return self.query_one("#amount", Input).value.strip()

    def choose(self, what: str) -> Frame | None:
        """The action for key ``what`` (see :func:`cardhall.clients.tui.actions.choose`)."""
        return choose(what, self.legal, self._amount(), None if self.parts is None else self.parts.parse)

    async def action_act(self, what: str, typed: str | None = None) -> None:
        """Play the action of key ``what`` with ``typed`` (None: what the amount field holds)."""
        try:
            action = choose(what, self.legal, self._amount() if typed is None else typed,
                            None if self.parts is None else self.parts.parse)
        except ValueError as exc:  # a rank typed that the hand does not hold: say so, play nothing
            self.app.report(str(exc))  # type: ignore[attr-defined]
            return
        if action is None:
            self.app.report(f"{what.replace('_', '/')} is not possible now")  # type: ignore[attr-defined]
            return
        await self._send(action, turn=what != "rematch")

    def action_preset(self, n: int) -> None:
        """Fill the amount with the ``n``-th preset (1: min .. 5: all-in); ``b`` then bets it."""
        sizes = self._presets()
        if 1 <= n <= len(sizes):
            self.query_one("#amount", Input).value = str(sizes[n - 1].amount)
            self.query_one("#status", Plain).update(f"{sizes[n - 1].label}: {sizes[n - 1].kind} {sizes[n - 1].amount}"
                                                    " (b to send, or Enter after tab)")

    async def action_pick(self, n: int) -> None:
        """Play the ``n``-th legal action (from 1), with the amount typed, else its minimum."""
        if not 1 <= n <= len(self.legal):
            self.app.report(f"there is no legal action {n} now")  # type: ignore[attr-defined]
            return
        try:
            action = action_from(self.legal[n - 1], self._amount())
        except ValueError as exc:
            self.app.report(str(exc))  # type: ignore[attr-defined]
            return
        await self._send(action)

    async def _send(self, action: Frame, turn: bool = True) -> None:
        """``act`` with ``action`` (in the open turn when ``turn``); the outcome goes to the message line."""
        try:
            await self.client.act(self.table, action, turn=self.turn["id"] if self.turn and turn else None)
        except FAILURES as exc:
            self.app.report(str(exc))  # type: ignore[attr-defined]
            return
        self.query_one("#status", Plain).update(f"you: {action_words(action, self._words)}")
        self.query_one("#amount", Input).value = ""

    def action_type(self) -> None:
        self.query_one("#amount", Input).focus()

    def action_chat(self) -> None:
        self.query_one(ChatBox).focus_input()

    def action_keys(self) -> None:
        self.query_one("#log", PlainLog).focus()

    async def on_input_submitted(self, message: Input.Submitted) -> None:
        """Enter in the amount field, with what it held then: a game drawn as data plays what is
        typed (``TYPE [values]``); otherwise play (a game with a ``play`` action) or bet/raise that
        amount. Back to the keys after. (The chat line's Enter is the chat box's.)"""
        if message.input.id != "amount":
            return
        message.stop()
        if self.generic:
            try:
                action = parse_action(message.value.strip(), self.legal)
            except ValueError as exc:
                self.app.report(str(exc))  # type: ignore[attr-defined]
            else:
                await self._send(action)
        else:
            kinds = {a["type"] for a in self.legal}
            await self.action_act("play" if "play" in kinds else "bet_raise", message.value.strip())
        self.action_keys()

    def action_help(self) -> None:
        """``?``: the game's rules page (when it has one) and its help from the catalogue
        (:mod:`cardhall.clients.tui.help`), with this table's options and the keys."""
        info = self.snap["info"]
        keys = table_keys(self.you is not None, self.generic)
        self.app.push_screen(HelpScreen(info["game"], getattr(self.app, "catalogue", None), info.get("options"), keys))

    async def action_leave(self) -> None:
        """``q``: leave the table (a seat is freed between matches, sat out during one, G-5) and forget it."""
        try:
            await self.client.leave(self.table)
        except FAILURES:
            pass
        self.app.forget_tables([self.table])  # type: ignore[attr-defined]
        self.app.pop_screen()
