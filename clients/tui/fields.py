"""The terminal client's text fields: an :class:`~textual.widgets.Input` whose Enter says what it does.

Enter in a field is the field's own ``submit`` (textual posts ``Input.Submitted`` with the
``value`` as typed): the screen acts on that message, never on a screen binding for Enter that
reads ``Input.value``. Why: textual checks a *priority* binding when the key reaches the app,
before the keys typed or pasted just ahead of it are applied by the focused field (they wait in
that field's queue), so such a binding read the field stale (``'blind_l' is not a number of
seats``). ``Input.Submitted`` comes after every key before the Enter, in order, and carries the
value then. Each field's class names its Enter for the footer (``⏎ create table``), since the
footer shows the focused field's bindings first.

Escape is no field's: the screens bind it (leave the field) without priority, so it too comes
after what was typed before it.
"""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.widgets import Input


class CreateInput(Input):
    """The lobby's create line: Enter creates (or joins the invite link typed)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("enter", "submit", "create table")]


class FilterInput(Input):
    """The lobby's filter line: Enter applies the filter."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("enter", "submit", "apply filter")]


class AmountInput(Input):
    """The table's amount (or typed action) field: Enter plays it."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("enter", "submit", "send")]


class PasswordInput(Input):
    """A private table's password: Enter joins with it."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("enter", "submit", "join")]
