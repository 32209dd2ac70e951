"""``cardhall play``: the terminal client (textual).

Lobby (:mod:`cardhall.clients.tui.lobby`): the tables of ``GET /api/tables``,
refreshed by themselves; the input, focused first, creates a table: ``GAME
[SEATS [BOTS]] [option=value ...]`` (e.g. ``no_limit_holdem 3 2
starting_stacks=500``), which you then join; the help line above it lists the
server's games, seats and options (``GET /api/games``); the stakes column shows
each table's blinds (or its game's first number option), from its options over
the catalogue's defaults. Tab moves to the table list, where Enter joins the
selected table and ``w`` watches it; escape leaves a field for nowhere, where
no key acts on a table. Enter in a field is that field's own
(:mod:`cardhall.clients.tui.fields`): text typed or pasted fast lands whole first.

Table (:mod:`cardhall.clients.tui.table`): the state as your seat sees it,
players by name, whose turn it is with the clock counting down, the log, the
legal actions and the bet presets; the footer lists the keys that work now (a
spectator's none of a player's); the log starts with the table's recent events;
``?`` shows the game's rules and its help from the catalogue; escape leaves a field, ``q``
goes back to the lobby.
It reconnects by itself (``Client(reconnect=True)``) and redraws from a fresh
snapshot after each event.

Private tables (protocol 1.5, SPEC "Private tables"): ``option=value`` in the create input takes
the table options too (``visibility=unlisted password=TEXT approve_seats=yes approve_within=60``;
a ``text`` option stays text, a switch takes yes/no); the owner then finds the invite link on the
table's host line and ``h`` opens the host controls (:mod:`cardhall.clients.tui.host`: approve or
deny requests for a seat, kick, ban, make host, copy the invite link, close the table). An invite
link pasted in the lobby input (``join LINK``, ``watch LINK`` or the link alone), or given as
``join`` (:class:`CardhallApp`), joins its table; a table that needs a password asks for it; one
whose owner approves seats asks for a seat, and the table shows you watching and waiting until
the host answers. The lobby's filter line (``/`` from the table list, Enter applies, empty: all)
narrows the list: ``game=NAME free=N bots=yes|no min_big_blind=N max_big_blind=N``.

A game without a terminal renderer of its own (:mod:`cardhall.clients.tui.render`
picks it from the game's registration) is drawn as data
(:mod:`cardhall.clients.tui.generic`): its view as ``key: value`` lines, its
events as such lines in the log, its legal actions numbered; the digit keys
``1``..``9`` play that legal action (an amount typed in the input, else its
minimum), and Enter in the input plays what is typed, ``TYPE [values]``
(e.g. ``bet 3``).

Identity (:mod:`cardhall.clients.tui.identity`): with an
:class:`~cardhall.clients.tui.identity.IdentityStore` (``cardhall play`` gives
it one: ``identity.json`` in the user's config folder, ``XDG_CONFIG_HOME`` on
Linux), the client keeps per server its player's token, id and name and the
tables it joined. On start it says ``hello`` with the kept token (a token the
server no longer knows: a new player, and the file follows); the lobby lists
the tables where it holds a seat first, marked ``your seat N``, and Enter on
one joins it as a player: the server gives the seat back, mid-match too (G-5).
Joining, leaving (``q``) and a table's closing update the file; quitting
(ctrl+q) keeps the seats. ``fresh`` (``--fresh``) forgets the kept player of
that server and starts a new one. A name given for a kept player that differs
from its name renames it where the server can (protocol 1.4 ``rename``); else
the kept name stays, and the message line says so.

An unlisted table (protocol 1.5, SPEC "Private tables") is in no lobby listing,
so its invite is kept with it (``SavedTable.invite``: the one the join carried,
from an invite link, or the owner's ``info.invite``); the lobby looks such a
table up with it (:meth:`CardhallApp.kept_unlisted`, ``GET /api/tables/{id}``
with ``X-Table-Invite``), lists it among yours, and Enter joins it with the
invite. The invite is shown nowhere but the owner's host line.

Signed in by the server's operator (``auth``, ``cardhall play --auth-file FILE``;
protocol/SPEC.md "Identity"): the first ``hello`` carries that JWT instead of
the kept token, and the welcome's resume token is kept per server as a guest's
is, so a later start without the JWT resumes that player (the tables kept for
another player are forgotten). A refused JWT (``bad_auth``) or a server that
admits only players its operator identifies (``auth_required``) ends the client
with exit status 1 and the reason (:func:`refusal`).

Whatever the server sends (names, table ids, game and action names, error
messages, events) is shown as text, never read as markup
(:mod:`cardhall.clients.tui.plain`); whatever goes wrong talking to it (an
``error`` reply, a dropped connection) is a message (:meth:`CardhallApp.report`),
never a crash.
"""

from __future__ import annotations

import asyncio
import json
import time
import urllib.error
import urllib.request
from dataclasses import replace
from typing import Any
from urllib.parse import quote, urlencode

from textual.app import App

from cardhall.clients.client import Client, ServerError, fetch_json, http_base
from cardhall.clients.tui.identity import Identity, IdentityStore, SavedTable
from cardhall.clients.tui.lobby import FAILURES, Lobby, games_help, parse_create
from cardhall.clients.tui.plain import Plain, plain, visible
from cardhall.clients.tui.private import parse_invite
from cardhall.clients.tui.prompts import PasswordScreen
from cardhall.clients.tui.table import TableView

__all__ = ["CardhallApp", "Lobby", "TableView", "games_help", "parse_create"]

Frame = dict[str, Any]
#: the errors that say a table is gone for good: it is forgotten (SPEC "Errors")
GONE = ("unknown_table", "table_closed")
#: the protocol's minor version that has ``rename`` (SPEC "Versioning", 1.4)
RENAME_MINOR = 4
#: the refusals of ``hello`` for who is asking (SPEC "Identity"): exit status 1, not 2 (a name)
AUTH_REFUSALS = ("bad_auth", "auth_required")
#: at most this many kept unlisted tables looked up per lobby refresh (a ``GET /api/tables/{id}`` each)
UNLISTED_LOOKUPS = 20


def kept_invite(info: Frame, invite: str | None, held: SavedTable | None) -> str | None:
    """The invite to keep for a table whose ``info`` a snapshot carries: for an unlisted table only
    (SPEC "Private tables": a public one is found in the lobby), the owner's ``info.invite``, else
    ``invite`` (the one the join carried), else the one ``held`` already.

    >>> unlisted = {"options": {"visibility": "unlisted"}}
    >>> kept_invite({**unlisted, "invite": "own"}, "link", None), kept_invite(unlisted, "link", None)
    ('own', 'link')
    >>> kept_invite(unlisted, None, SavedTable("player", 1, invite="old")), kept_invite({"options": {}}, "link", None)
    ('old', None)
    """
    if (info.get("options") or {}).get("visibility") != "unlisted":
        return None
    return info.get("invite") or invite or (held.invite if held is not None else None)


def refusal(exc: ServerError, signed_in: bool) -> str:
    """The line ``cardhall play`` ends with when ``hello`` is refused with ``exc``
    (``bad_auth`` or ``auth_required``, SPEC "Identity"); ``signed_in``: the hello
    carried a JWT (``--auth-file``).

    >>> print(refusal(ServerError({"code": "bad_auth", "reason": "expired", "message": "the auth token is refused: "
    ...     "it has expired (exp)"}), True))
    cardhall play: the auth token is refused: it has expired (exp); reason: expired (get a new token from the server's operator)
    """
    if exc.code == "bad_auth":
        reason = exc.frame.get("reason") or "unknown"
        return f"cardhall play: {exc.message}; reason: {reason} (get a new token from the server's operator)"
    hint = "the token given was not enough" if signed_in else "give the token its site issues you with --auth-file FILE"
    return f"cardhall play: this server admits only players signed in through its operator's site: {hint} ({exc.message})"


class CardhallApp(App):
    """The terminal client. ``server``: the websocket URL; ``name``: shown at tables (None: the
    kept player's name, else ``player``); ``lobby_refresh``: seconds between the lobby's reloads;
    ``identity``: where the player is kept between runs (None: nowhere, a new player each run);
    ``fresh``: forget the kept player of ``server`` first; ``auth``: a JWT from the server's
    operator (SPEC "Identity"): the first hello is that account's player, not the kept one; ``join``:
    an invite link (or ``table=ID&invite=INVITE``) to join once the lobby shows (protocol 1.5)."""

    TITLE = "cardhall"
    CSS = """
    #board { padding: 1 2; border: round $accent; }
    #turn { text-style: bold; }
    #log { height: 10; border: round $panel; }
    #log:focus, #tables:focus { border: round $success; }
    #status { color: $warning; }
    #preview { color: $text-muted; }
    """

    def __init__(self, server: str = "ws://127.0.0.1:8000/ws", name: str | None = "player", codec: str = "msgpack",
                 lobby_refresh: float = 3.0, identity: IdentityStore | None = None, fresh: bool = False,
                 auth: str | None = None, join: str | None = None) -> None:
        super().__init__()
        self.server = server
        self.auth = auth
        self.player_name = name
        self.lobby_refresh = lobby_refresh
        self.identity = identity
        self.fresh = fresh
        self.join_link = join
        #: the player as kept for this server (saved by :meth:`_save` when ``identity`` is given)
        self.me = Identity()
        self._remembered: dict[str, float] = {}  # table -> time.monotonic() when last remembered
        #: the game catalogue (``GET /api/games``) once the lobby has read it: stakes, options, help
        self.catalogue: Frame | None = None
        self.client = Client(server, codec=codec, reconnect=True)

    def fetch_tables(self, query: dict[str, str] | None = None) -> list[Frame]:
        """``GET /api/tables`` with the lobby's filters ``query`` (its parameters, SPEC "HTTP";
        blocking: run it in a thread)."""
        suffix = "?" + urlencode(query) if query else ""
        return fetch_json(http_base(self.server) + "/api/tables" + suffix, timeout=5)

    def fetch_table(self, table: str, invite: str) -> Frame | None:
        """``GET /api/tables/{table}`` with ``invite`` in ``X-Table-Invite`` (SPEC "HTTP", "Private
        tables"): the table's ``info``, None when the server answers 404 (no such table, or not
        with this invite). Blocking: run it in a thread. ``OSError`` (``URLError``, ``HTTPError``
        other than 404; neither names the invite) or ``ValueError`` when it cannot be read."""
        request = urllib.request.Request(http_base(self.server) + "/api/tables/" + quote(table, safe=""),
                                         headers={"X-Table-Invite": invite})
        try:
            with urllib.request.urlopen(request, timeout=5) as r:  # noqa: S310 (the server's own http(s) URL)
                info: Frame = json.loads(r.read())
        except urllib.error.HTTPError as exc:
            if exc.code == 404:
                return None
            raise
        return info

    def report(self, text: str) -> None:
        """Say ``text`` (what went wrong) on the current screen's message line and as a notification."""
        try:
            self.screen.query_one("#status", Plain).update(text)
        except Exception:  # a screen without a message line: the notification says it
            pass
        self.notify(visible(text), severity="warning", markup=False)

    async def on_mount(self) -> None:
        notices: list[str] = []
        self._load(notices)
        try:
            await self.client.connect()
            welcome = await self._hello(notices)
        except ServerError as exc:
            if exc.code in AUTH_REFUSALS:  # who is asking (SPEC "Identity"): an outside refusal, status 1
                self.exit(return_code=1, message=plain(refusal(exc, self.auth is not None)))
            else:  # a name the server refuses (SPEC "Names"): say why and stop
                self.exit(return_code=2, message=plain(f"cardhall play: {exc.message}"))
            return
        except (OSError, TimeoutError) as exc:
            self.exit(return_code=1, message=plain(f"cardhall play: cannot reach {self.server}: {exc}"))
            return
        if self.me.player is not None and welcome["player"] != self.me.player:  # signed in as another: not its tables
            self.me.tables = {}
        self.me.token, self.me.player, self.me.name = welcome["token"], welcome["player"], welcome["name"]
        self._save()
        self.sub_title = f"{visible(self.me.name)} @ {self.server}"  # the name as the server keeps it
        await self.push_screen(Lobby())
        for notice in notices:
            self.report(notice)
        if self.join_link:
            await self.open_link(self.join_link)

    async def open_link(self, text: str, role: str = "player") -> bool:
        """Join the table of an invite link ``text`` (:func:`~cardhall.clients.tui.private.parse_invite`)
        as ``role``; False (and a message) when ``text`` is not one."""
        found = parse_invite(text)
        if found is None:
            self.report(f"not an invite link: {text} (expected <page>/#table=ID&invite=INVITE)")
            return False
        await self.open_table(found[0], role, invite=found[1])
        return True

    def _load(self, notices: list[str]) -> None:
        """Read the kept player of this server (after forgetting it, with ``fresh``)."""
        if self.identity is None:
            return
        if self.fresh:
            try:
                self.identity.forget(self.server)
            except OSError as exc:
                notices.append(f"cannot forget the kept player in {self.identity.path}: {exc}")
        self.me = self.identity.load(self.server)
        if self.identity.problem:
            notices.append(self.identity.problem)

    async def _hello(self, notices: list[str]) -> Frame:
        """``hello`` as the operator's account (``auth``), else as the kept player (its token),
        else as a new one; ServerError when refused."""
        if self.auth is not None:
            welcome = await self.client.hello(self.player_name or self.me.name or "player", auth=self.auth)
            if self.player_name and welcome["name"] != self.player_name:
                welcome = await self._rename(welcome, self.player_name, notices)
            return welcome
        if self.me.token:
            try:
                welcome = await self.client.hello(self.player_name or self.me.name or "player", token=self.me.token)
            except ServerError as exc:
                if exc.code != "unknown_token":
                    raise
                notices.append("the server no longer knows the kept player: you are a new player")
                self.me = Identity()
            else:
                if self.player_name and welcome["name"] != self.player_name:
                    welcome = await self._rename(welcome, self.player_name, notices)
                return welcome
        return await self.client.hello(self.player_name or "player")

    async def _rename(self, welcome: Frame, name: str, notices: list[str]) -> Frame:
        """Rename the kept player to ``name`` where the server can (protocol 1.4 ``rename``,
        whose ``ok`` carries the name kept), else say that it keeps its name."""
        rename = getattr(self.client, "rename", None)
        if rename is None or welcome.get("minor", 0) < RENAME_MINOR:
            notices.append(f"you are {welcome['name']}, as before (this server cannot rename: --fresh for a new player)")
            return welcome
        try:
            reply = await rename(name)
        except FAILURES as exc:
            notices.append(f"cannot rename to {name}: {exc}")
            return welcome
        kept = reply if isinstance(reply, str) else name  # Client.rename: the name as the server keeps it
        return {**welcome, "name": kept}

    # -- the tables kept (cardhall.clients.tui.identity) ---------------------------------------
    def your_tables(self) -> dict[str, SavedTable]:
        """Table id -> :class:`SavedTable`: the tables this player joined and did not leave."""
        return self.me.tables

    def table_seen(self, table: str, role: str, snap: Frame, invite: str | None = None) -> None:
        """Keep ``table`` as joined in ``role`` from its ``snapshot``: the seat held, the game and, for
        an unlisted table, its invite (:func:`kept_invite`; ``invite``: the one the join carried); a
        player's table where it holds no seat any more (freed, G-7) or a closed one is forgotten."""
        seat = snap.get("you")
        if snap["info"]["status"] == "closed" or (role == "player" and seat is None):
            self.forget_tables([table])
            return
        self._remembered[table] = time.monotonic()
        held = self.me.tables.get(table)
        secret = kept_invite(snap["info"], invite, held)
        if seat is None and held is not None and held.role == "player":
            kept = replace(held, invite=secret)  # watching where this player holds a seat: the seat stays kept
        else:
            kept = SavedTable("player" if seat is not None else role, seat, snap["info"]["game"], secret)
        if self.me.tables.get(table) != kept:
            self.me.tables[table] = kept
            self._save()

    def forget_tables(self, tables: list[str]) -> None:
        """Forget ``tables`` (left, closed, unknown to the server)."""
        gone = [t for t in tables if t in self.me.tables]
        for t in gone:
            del self.me.tables[t]
        if gone:
            self._save()

    def forget_unlisted(self, listed: set[str], asked: float) -> None:
        """Forget the kept tables the lobby (``GET /api/tables`` asked at ``asked``,
        ``time.monotonic()``) no longer lists: closed since. A table kept after the list was
        asked for stays (the list may not have it yet), and so does one kept with an invite (an
        unlisted table, never listed: :meth:`kept_unlisted` looks it up)."""
        self.forget_tables([t for t, s in self.me.tables.items()
                            if t not in listed and s.invite is None and self._remembered.get(t, -1.0) < asked])

    async def kept_unlisted(self, listed: set[str], asked: float) -> list[Frame]:
        """The ``info`` of the kept tables with an invite that ``listed`` (the lobby's ids) leaves
        out, at most :data:`UNLISTED_LOOKUPS` of them, each looked up with its invite
        (:meth:`fetch_table`, concurrently); one the server does not know (404) or that is closed is
        forgotten, unless kept again after ``asked`` (``time.monotonic()``); one that cannot be
        looked up now is left out and kept."""
        wanted = [(t, s.invite) for t, s in self.me.tables.items() if s.invite is not None and t not in listed]
        wanted = wanted[:UNLISTED_LOOKUPS]
        found = await asyncio.gather(*(asyncio.to_thread(self.fetch_table, t, invite) for t, invite in wanted),
                                     return_exceptions=True)
        shown: list[Frame] = []
        gone: list[str] = []
        for (table, _), info in zip(wanted, found, strict=True):
            if isinstance(info, BaseException):
                if not isinstance(info, FAILURES):
                    raise info
                continue
            if info is None or info.get("status") == "closed":
                if self._remembered.get(table, -1.0) < asked:
                    gone.append(table)
                continue
            shown.append(info)
        self.forget_tables(gone)
        return shown

    def _save(self) -> None:
        if self.identity is None:
            return
        try:
            self.identity.save(self.server, self.me)
        except OSError as exc:
            self.report(f"cannot keep the player in {self.identity.path}: {exc}")

    # -- tables --------------------------------------------------------------------------------
    async def open_table(self, table: str, role: str, invite: str | None = None, password: str | None = None,
                         ask: bool = False) -> None:
        """Join ``table`` as ``role`` (``player`` or ``spectator``) and show it; a refusal
        (``table_full``, ...) or a dropped connection is a message and the lobby stays. Joining a
        table where this player holds a seat as ``player`` gives the seat back (G-5).

        A private table (protocol 1.5, SPEC "Private tables"): ``invite`` is sent with the join
        (None: the one kept with the table, if any: how the lobby joins a kept unlisted table);
        ``bad_password`` asks for the password (:class:`PasswordScreen`) and joins again with it;
        ``approval_required`` joins again asking the owner for a seat (``ask``), and the table
        shows this player watching and waiting for the answer."""
        if invite is None and table in self.me.tables:
            invite = self.me.tables[table].invite
        try:
            snap = await self.client.join(table, role=role, invite=invite, password=password, ask=ask)
        except FAILURES as exc:
            code = exc.code if isinstance(exc, ServerError) else None
            if code == "approval_required" and role == "player" and not ask:
                await self.open_table(table, role, invite, password, ask=True)
                return
            if code == "bad_password":
                async def entered(typed: str | None) -> None:
                    if typed is not None:
                        await self.open_table(table, role, invite, typed, ask)

                self.push_screen(PasswordScreen(table, wrong=password is not None), entered)
                return
            if code in GONE:
                self.forget_tables([table])
            self.report(f"cannot {'join' if role == 'player' else 'watch'} {table}: {exc}")
            return
        if snap.get("pending"):  # the owner's answer is awaited: watch meanwhile
            role = "spectator"
        self.table_seen(table, role, snap, invite)
        await self.push_screen(TableView(table, role, snap))

    def table_failed(self, table: str, exc: BaseException) -> None:
        """A request about ``table`` failed with ``exc``: forget the table when it is gone."""
        if isinstance(exc, ServerError) and exc.code in GONE:
            self.forget_tables([table])

    async def on_unmount(self) -> None:
        await self.client.close()
