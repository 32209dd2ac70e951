"""Names are data, never markup or control: what ``hello`` refuses and keeps
(server/names.py, SPEC "Limits"), and the terminal client showing hostile
names literally, through a real server and textual's pilot."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from rich.style import Style

from cardhall.clients.client import Client, ServerError
from cardhall.clients.tui.app import CardhallApp, Lobby, TableView
from tests.server.conftest import LiveServer, running_server

#: (name, a part of the refusal's message): one of each class the server refuses
REFUSED = [
    ("", "1 to 40 characters"),
    ("x" * 41, "at most 40"),
    ("😀" * 31, "120 bytes"),
    ("ann\x00", "U+0000"),
    ("ann\nbob", "U+000A"),
    ("\x1b[31mred", "U+001B"),
    ("abc\u202egnp.exe", "U+202E (RIGHT-TO-LEFT OVERRIDE)"),
    ("ann\u2066x", "U+2066"),
    ("\u200b", "U+200B (ZERO WIDTH SPACE)"),
    ("a\u200db", "U+200D"),
    ("\ufeffann", "U+FEFF"),
    ("ann\u2028", "U+2028"),
    ("   ", "blank"),
    ("\u2800\u2800", "blank"),
    ("bob\u1160", "U+1160 (HANGUL JUNGSEONG FILLER)"),
    ("e" + "\u0301" * 6, "combining marks"),
    ("bot 2", "server bot"),
    ("Bot_12", "server bot"),
    ("b0t-3", "server bot"),
    ("ＢＯＴ２", "server bot"),
    ("bot²", "server bot"),
    ("ВОТ 4", "server bot"),  # Cyrillic capitals
]
#: (sent, kept): fine names, normalised (NFC, spaces)
ACCEPTED = [
    ("Zoë", "Zoë"),
    ("Zoe\u0308", "Zoë"),  # NFC
    ("  ann   lee ", "ann lee"),
    ("ann\u00a0lee", "ann lee"),
    ("李小龍", "李小龍"),
    ("👩\u200d💻 dev 🂡", "👩\u200d💻 dev 🂡"),
    ("[/]", "[/]"),
    ("[@click=app.quit]bob[/]", "[@click=app.quit]bob[/]"),
    ("bot", "bot"),
    ("robot 2", "robot 2"),
]


async def _hello(live: LiveServer, name: Any) -> dict[str, Any]:
    async with Client(live.url, codec="json") as c:
        return await c.request({"type": "hello", "name": name})


async def test_hello_refuses_each_bad_name_with_a_clear_bad_request(live: LiveServer) -> None:
    accepted, unclear = [], []
    async with Client(live.url, codec="json", record=True) as c:
        for name, said in REFUSED:
            try:
                welcome = await c.request({"type": "hello", "name": name})
            except ServerError as err:
                frame = err.frame
                assert frame["code"] == "bad_request" and isinstance(frame["re"], int), frame  # answers that request
                if said not in frame["message"]:
                    unclear.append((name, frame["message"]))
            else:
                accepted.append((name, welcome["name"]))
        assert not accepted, f"names the server took: {accepted}"
        assert not unclear, f"refusals that do not say why: {unclear}"
        assert (await c.ping())["type"] == "pong"  # the connection goes on
        welcome = await c.hello("fine")  # and may still say hello
        assert welcome["name"] == "fine"


async def test_hello_keeps_fine_names_normalised(live: LiveServer) -> None:
    for sent, kept in ACCEPTED:
        welcome = await _hello(live, sent)
        assert welcome["type"] == "welcome" and welcome["name"] == kept, (sent, welcome)


def _clickable(app: CardhallApp) -> list[tuple[str, str]]:
    """Every (widget id, text) drawn on the screen with an action or link attached."""
    found = []
    for widget in app.screen.query("*"):
        for y in range(widget.size.height):
            for segment in widget.render_line(y):
                style = segment.style
                if isinstance(style, Style) and (style.link or any(k.startswith("@") for k in style.meta)):
                    found.append((str(widget.id), segment.text))
    return found


async def test_the_terminal_client_shows_hostile_names_as_text() -> None:
    """A player named ``[@click=app.quit]bob[/]`` sits down, the terminal client's
    own player is ``[/]``: the table opens, both names appear literally, and
    nothing on the screen is clickable."""
    async with running_server() as live:
        bob = await live.client("[@click=app.quit]bob[/]")
        table = await bob.create_table("loco_poker", seats=3, bots=1,
                                       options={"pause": 0, "bot_think": 0, "action_clock": 5})
        await bob.join(table, seat=1)
        app = CardhallApp(live.url, "[/]", codec="json")
        async with app.run_test(size=(120, 50)) as pilot:
            for _ in range(100):
                if isinstance(app.screen, Lobby):
                    break
                await pilot.pause(0.02)
            await app.open_table(table, "player")
            view = app.screen
            for _ in range(200):
                if isinstance(view, TableView) and view.snap is not None and view.snap["info"]["status"] == "running":
                    break
                await pilot.pause(0.02)
                view = app.screen
            assert isinstance(view, TableView) and view.snap is not None and view.snap["you"] == 2
            await pilot.pause(0.1)
            info = str(view.query_one("#info").render())
            assert "1 [@click=app.quit]bob[/]" in info and "2 [/]" in info, info
            assert not _clickable(app)
            await pilot.click("#info")  # where a markup link would be: nothing happens
            await pilot.pause(0.05)
            assert app.is_running and isinstance(app.screen, TableView)
        await bob.close()


async def test_the_terminal_client_says_why_the_server_refused_its_name() -> None:
    """``cardhall play --name "bot [/] 2"``: the server refuses the name; the client
    stops with the reason (as text: it holds ``[/]``) instead of a traceback."""
    async with running_server() as live:
        app = CardhallApp(live.url, "bot [/] 2", codec="json")
        async with app.run_test(size=(120, 50)) as pilot:
            for _ in range(100):
                if not app.is_running:
                    break
                await pilot.pause(0.02)
        assert app.return_code == 2  # stopped with the reason, never reached the lobby


def test_the_browser_client_never_parses_server_text_as_html() -> None:
    """clients/web builds its page with text nodes and attributes only (``dom.js``'s ``h``):
    nothing in it writes HTML from strings."""
    web = Path(__file__).resolve().parents[2] / "clients" / "web"
    sinks = re.compile(r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|createContextualFragment|DOMParser|srcdoc")
    found = [(p.name, m.group()) for p in sorted(web.rglob("*.js")) for m in sinks.finditer(p.read_text())]
    assert found == []
