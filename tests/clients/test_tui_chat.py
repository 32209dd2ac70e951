"""The terminal client's chat (SPEC "Chat") through textual's pilot against a real server: a
spectator's message shows literally (markup is text), ``t`` then typing and Enter sends one that
the other viewer receives, and a refusal (the rate limit) becomes a line, never a crash; the
game's keys do not fire while typing in the chat line."""

from __future__ import annotations

from cardhall.clients.client import Client
from cardhall.clients.tui.app import CardhallApp
from cardhall.clients.tui.chat import ChatBox
from cardhall.clients.tui.table import TableView
from tests.conftest import until
from tests.server.conftest import running_server

#: seconds for the screen to show what a step leads to (a busy machine is slow)
DEADLINE = 60


async def test_chat_in_the_terminal():
    async with running_server() as live:
        app = CardhallApp(live.url, "ann", codec="json")
        async with app.run_test(size=(120, 50)) as pilot:
            await until(lambda: app.screen.query("#create"), DEADLINE, "the lobby")
            await pilot.click("#create")
            await pilot.press(*"loco_poker 3 1 pause=0 bot_think=0")  # waits for a third player: no game events
            await pilot.press("enter")
            await until(lambda: isinstance(app.screen, TableView) and app.screen.snap is not None, DEADLINE,
                        "the table")
            view = app.screen
            table = view.table
            chat_log = view.query_one("#chat-log")
            bob = await Client(live.url, codec="json").connect()
            await bob.hello("bob")
            await bob.join(table, role="spectator")
            await bob.chat(table, "[b]hi[/b] [@click=app.quit]ann[/]")
            await until(lambda: chat_log.written, DEADLINE, "bob's message")
            assert chat_log.written == ["bob (watching): [b]hi[/b] [@click=app.quit]ann[/]"]

            # t: type in the chat line; f and c are letters there, not fold and call; Enter sends
            await pilot.press("t")
            await pilot.press(*"fc gl")
            assert view.query_one("#chat-input").value == "fc gl"
            await pilot.press("enter")
            got = await bob.next_event(table, where=lambda f: f["event"].get("text") == "fc gl")
            assert got["event"]["text"] == "fc gl" and got["event"]["seat"] == 1 and got["event"]["name"] == "ann"
            await until(lambda: len(chat_log.written) == 2, DEADLINE, "our own message")
            assert chat_log.written[1] == "ann: fc gl" and view.query_one("#chat-input").value == ""

            # too fast: the server's refusal is a line of the chat log
            box = view.query_one(ChatBox)
            for i in range(6):
                view.query_one("#chat-input").value = f"spam {i}"
                await box.send()
            await until(lambda: any(line.startswith("* not sent: too many chat messages") for line in chat_log.written),
                        DEADLINE, "the rate limit's line")
            assert isinstance(app.screen, TableView)
            await bob.close()
