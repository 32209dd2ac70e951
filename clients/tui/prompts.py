"""Small modal screens of the terminal client: a table's password (SPEC "Private tables":
``bad_password``) and a yes/no confirmation (the host's close, ban and hand-over)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, Input

from cardhall.clients.tui.fields import PasswordInput
from cardhall.clients.tui.plain import Plain

#: the most characters of a table's password (SPEC "Limits": ``join.password``)
PASSWORD_MAX = 64

DIALOG_CSS = """
ModalScreen { align: center middle; }
ModalScreen > Vertical { width: 80; height: auto; padding: 1 2; border: round $warning; background: $surface; }
"""


class PasswordScreen(ModalScreen[str | None]):
    """Asks for the password of ``table``: Enter dismisses with what is typed (None when blank;
    the field's ``Input.Submitted``, so a pasted password lands whole first), escape with None.
    ``wrong``: the last one tried was refused (said above the field)."""

    DEFAULT_CSS = DIALOG_CSS
    BINDINGS = [Binding("escape", "cancel", "cancel")]

    def __init__(self, table: str, wrong: bool = False) -> None:
        super().__init__()
        self.table = table
        self.wrong = wrong

    def compose(self) -> ComposeResult:
        with Vertical():
            said = "that password is not the table's: try again" if self.wrong else "this table has a password"
            yield Plain(f"{self.table}: {said}", id="prompt")
            yield PasswordInput(placeholder="password (Enter joins, escape cancels)", password=True, id="password",
                                max_length=PASSWORD_MAX)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one("#password", Input).focus()

    def on_input_submitted(self, message: Input.Submitted) -> None:
        message.stop()
        self.dismiss(message.value if message.value else None)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ConfirmScreen(ModalScreen[bool]):
    """Asks ``question``: ``y`` dismisses with True, ``n`` or escape with False."""

    DEFAULT_CSS = DIALOG_CSS
    BINDINGS = [Binding("y", "answer(True)", "yes"), Binding("n", "answer(False)", "no"),
                Binding("escape", "answer(False)", "no", show=False)]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Plain(f"{self.question}  (y / n)", id="question")
        yield Footer(compact=True)

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
