"""The terminal client's table chat (SPEC "Chat"): the messages and a line to type one.

:class:`ChatBox` is a log of the table's ``chat`` events (names and text
literal, never markup: :class:`~cardhall.clients.tui.plain.PlainLog`) and an
input; Enter there sends ``chat`` (the line's ``Input.Submitted``, with the text as typed, goes
to :meth:`ChatBox.send`: :mod:`cardhall.clients.tui.fields` says why not a screen binding). The owner's
``spectator_chat`` switch shows as a line. A refusal (too long, too fast,
spectators' chat off) becomes a line in the log, never a crash.

>>> chat_line({"type": "chat", "seat": None, "name": "[b]eve[/b]", "text": "hi", "from": "p_2"})
'[b]eve[/b] (watching): hi'
>>> chat_line({"type": "spectator_chat", "on": False})
"* the owner turned spectators' chat off"
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import Input

from cardhall.clients.client import Client, ServerError
from cardhall.clients.tui.plain import PlainLog

Frame = dict[str, Any]
#: the table events the chat box shows (they leave the turn as it is)
CHAT_EVENTS = frozenset({"chat", "spectator_chat"})
#: the longest message the server takes, in characters
MAX_CHARS = 200


def chat_line(event: Frame) -> str:
    """One log line for a ``chat`` or ``spectator_chat`` event (text, for a PlainLog)."""
    if event["type"] == "spectator_chat":
        return "* the owner " + ("allowed spectators' chat" if event.get("on") else "turned spectators' chat off")
    who = str(event.get("name", "?")) + (" (watching)" if event.get("seat") is None else "")
    return f"{who}: {event.get('text', '')}"


class ChatInput(Input):
    """The line a chat message is typed in: Enter sends it."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("enter", "submit", "send")]


class ChatBox(Vertical):
    """The chat log and its input for table ``table``, talking through ``client``."""

    DEFAULT_CSS = """
    ChatBox { height: auto; }
    ChatBox #chat-log { height: 5; border-top: solid $primary-darken-2; }
    """

    def __init__(self, client: Client, table: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.client = client
        self.table = table

    def compose(self) -> ComposeResult:
        yield PlainLog(id="chat-log", max_lines=200, wrap=True)
        yield ChatInput(placeholder=f"chat (t to type, Enter sends, at most {MAX_CHARS} characters)",
                        id="chat-input", max_length=MAX_CHARS)

    def add(self, event: Frame) -> None:
        """Show a ``chat`` or ``spectator_chat`` event."""
        self.query_one("#chat-log", PlainLog).write(chat_line(event))

    def focus_input(self) -> None:
        """Put the cursor in the chat line."""
        self.query_one("#chat-input", ChatInput).focus()

    async def on_input_submitted(self, message: Input.Submitted) -> None:
        """Enter in the chat line: send what it held then."""
        if isinstance(message.input, ChatInput):
            message.stop()
            await self.send(message.value)

    async def send(self, typed: str | None = None) -> None:
        """Send ``typed`` (None: what the line holds; nothing when blank); a refusal becomes a log line."""
        field = self.query_one("#chat-input", ChatInput)
        text = (field.value if typed is None else typed).strip()
        if not text:
            return
        try:
            await self.client.chat(self.table, text)
        except ServerError as exc:
            self.query_one("#chat-log", PlainLog).write(f"* not sent: {exc.message}")
            return
        except (ConnectionError, OSError, TimeoutError) as exc:
            self.query_one("#chat-log", PlainLog).write(f"* not sent: {exc}")
            return
        field.value = ""
