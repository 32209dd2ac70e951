"""Draw a recorded table snapshot with the real client and no live match, and check the drawing.

:class:`Harness` opens one page of a live server (its index page and modules, its catalogue of
games) whose websocket never reaches the server: Playwright answers it (``route_web_socket``) with
a ``welcome`` for the recorded player and answers every ``join`` with ``ok`` (nothing missed), and
a table's ``GET /api/tables/{id}`` (the page's count of watchers) answers with nothing new. Each
snapshot's saved model (``record.py``) is put in localStorage under a table id of its own, so ``#/t/<id>``
makes the page draw exactly the saved table (top bar, table head, host panel, felt, action panel,
side panels) as a reload of that page does once its join has passed. Switching snapshot is a change
of the address's fragment (the app's own hashchange handler draws it), switching size a change of the
viewport: no reload, so the whole matrix takes seconds.

Only the clock is made still: a turn's clock is drawn half run (``turn.frozen``), as a paused
table's is, so its bar and text are the same on every run. Motion is off (prefers-reduced-motion):
the boxes measured are where things come to rest.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.browser.pages import fresh_context

HERE = Path(__file__).resolve().parent
SNAPSHOTS = HERE / "snapshots"
CHECKS_JS = (HERE / "checks.js").read_text()
#: the one player every snapshot is drawn for: each recording's own player id is replaced by it
PLAYER = "p_" + "0" * 16
#: one of the moments record.py keeps (the file name's last part)
MOMENTS = ("turn", "showdown", "waiting", "ended")

#: show table ``id`` as the page does when its address's fragment changes (the app's hashchange
#: handler draws it at once; ``/watch`` when it is shown already, which draws it again the same way
#: for a player), wait until its join has passed (the page draws the saved table as joining again
#: until then), and resolve two animation frames later: what the page does before it paints (the
#: felt fitted to the viewport) is done, as it is before a player sees the drawing
SHOW_JS = """async (id) => {
  const target = `#/t/${id}`;
  history.replaceState(null, "", location.hash === target ? `${target}/watch` : target);
  dispatchEvent(new HashChangeEvent("hashchange"));
  const frame = () => new Promise((resolve) => requestAnimationFrame(resolve));
  while (document.querySelector(".action-panel [data-rejoining]")) await frame();  // the join's ok is on its way
  await frame();
  await frame();
  const head = document.querySelector(".table-page .table-id");
  if (!head || !head.textContent.includes(id)) throw new Error(`table ${id} is not drawn: ${head && head.textContent}`);
}"""


@dataclass(frozen=True)
class Snapshot:
    """One recorded moment: ``game``, ``seats``, ``moment`` (:data:`MOMENTS`), ``name`` (the file's
    stem), ``data`` (the file's JSON: see record.py)."""

    game: str
    seats: int
    moment: str
    name: str
    data: dict[str, Any]


def load_snapshots(folder: Path = SNAPSHOTS) -> list[Snapshot]:
    """Every ``<game>-<seats>-<moment>.json`` of ``folder``, sorted by game, seats, moment."""
    out = []
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text())
        out.append(Snapshot(data["game"], int(data["seats"]), data["moment"], path.stem, data))
    return sorted(out, key=lambda s: (s.game, s.seats, MOMENTS.index(s.moment)))


def stored_value(snapshot: Snapshot, table: str) -> str:
    """The localStorage value that draws ``snapshot`` as table ``table`` (as long as the recorded
    id, so the table head wraps as it did) for :data:`PLAYER`, its clock still at half time."""
    text = json.dumps(snapshot.data["stored"])
    text = text.replace(json.dumps(snapshot.data["table"]), json.dumps(table))
    text = text.replace(json.dumps(snapshot.data["welcome"]["player"]), json.dumps(PLAYER))
    value = json.loads(text)
    turn = value["model"].get("turn")
    if turn and turn.get("clock"):
        turn["frozen"] = turn["at"] + turn["clock"] * 500
    return json.dumps(value)


class Harness:
    """One page that draws any of ``snapshots`` at any viewport size (see the module's docstring)."""

    def __init__(self, snapshots: list[Snapshot]) -> None:
        self.snapshots = snapshots
        self.ids: dict[str, str] = {}
        self.context: Any = None
        self.page: Any = None
        self.cdp: Any = None
        self.errors: list[str] = []

    def table_id(self, snapshot: Snapshot) -> str:
        """The table id ``snapshot`` is drawn under."""
        return self.ids[snapshot.name]

    async def open(self, browser: Any, base: str) -> None:
        """Open the page on the server at ``base`` (http URL) with every snapshot stored."""
        self.context = await fresh_context(browser, viewport={"width": 1280, "height": 800}, reduced_motion="reduce")
        welcome = self.snapshots[0].data["welcome"] if self.snapshots else {"name": "player", "protocol": 1, "minor": 0}

        def on_message(ws: Any, message: str | bytes) -> None:
            frame = json.loads(message)
            if frame.get("type") == "hello":
                ws.send(json.dumps({"type": "welcome", "re": frame["id"], "player": PLAYER, "name": welcome["name"],
                                    "token": "harness", "protocol": welcome["protocol"], "minor": welcome["minor"]}))
            elif frame.get("type") == "ping":
                ws.send(json.dumps({"type": "pong", "re": frame["id"]}))
            elif frame.get("type") == "join":
                # joined again with nothing missed since the saved model (SPEC "Resuming and reconnecting"):
                # the page draws the table it saved, as a player sees it once the join has passed
                ws.send(json.dumps({"type": "ok", "re": frame["id"]}))

        await self.context.route_web_socket("**/ws", lambda ws: ws.on_message(lambda m: on_message(ws, m)))
        # the tables are not on the server: its look at the number of watchers finds nothing new
        await self.context.route("**/api/tables/*", lambda route: route.fulfill(status=200, json={}))
        self.page = await self.context.new_page()
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        self.page.on("console", lambda msg: self.errors.append(msg.text) if msg.type == "error" else None)
        await self.page.goto(base + "/healthz")
        stored = {}
        for i, snap in enumerate(self.snapshots):
            recorded = snap.data["table"]
            table = f"{recorded[:2]}{i:0{len(recorded) - 2}x}"
            self.ids[snap.name] = table
            stored["cardhall.table." + table] = stored_value(snap, table)
        stored["cardhall.name"] = welcome["name"]
        await self.page.evaluate("(items) => { for (const [k, v] of Object.entries(items)) localStorage.setItem(k, v); }", stored)
        first = self.table_id(self.snapshots[0]) if self.snapshots else "none"
        await self.page.goto(f"{base}/#/t/{first}")
        await self.page.wait_for_selector("#conn-status[data-state=online]")
        if self.snapshots:
            await self.page.wait_for_selector(".table-page .felt")

    async def screenshot(self, path: str) -> None:
        """Save what the viewport shows now as a PNG at ``path`` (Chromium's fast encoder: a failing case
        of the matrix keeps one, and there can be hundreds)."""
        if self.cdp is None:
            self.cdp = await self.context.new_cdp_session(self.page)
        shot = await self.cdp.send("Page.captureScreenshot", {"format": "png", "optimizeForSpeed": True})
        Path(path).write_bytes(base64.b64decode(shot["data"]))

    async def close(self) -> None:
        """Close the page and its context."""
        if self.context is not None:
            await self.context.close()

    async def size(self, width: int, height: int) -> None:
        """Make the viewport ``width`` x ``height`` CSS px (the next :meth:`show` draws at that size)."""
        await self.page.set_viewport_size({"width": width, "height": height})

    async def show(self, snapshot: Snapshot) -> None:
        """Draw ``snapshot`` (afresh, at the current viewport size)."""
        await self.page.evaluate(SHOW_JS, self.table_id(snapshot))

    async def check(self, moment: str) -> dict[str, Any]:
        """Check the page as drawn now (``checks.js``): {problems: [str], clocks: int, badges: int}."""
        result: dict[str, Any] = await self.page.evaluate(CHECKS_JS, {"moment": moment})
        return result

    async def show_and_check(self, snapshot: Snapshot) -> dict[str, Any]:
        """:meth:`show` then :meth:`check`, in one round trip to the page."""
        script = f"async (a) => {{ await ({SHOW_JS})(a.id); return ({CHECKS_JS})(a); }}"
        result: dict[str, Any] = await self.page.evaluate(script, {"id": self.table_id(snapshot), "moment": snapshot.moment})
        return result
