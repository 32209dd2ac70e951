"""Server text shown as text, never as markup: the terminal client's widgets for it.

Everything the server sends (player names, table ids, game and action names,
error messages, events) is data. Textual reads a ``str`` given to a
``Static`` or a ``DataTable`` cell as Rich console markup, so a player named
``[/]`` would crash the screen (``MarkupError``) and ``[@click=app.quit]bob[/]``
would draw a clickable "bob". The widgets here take strings literally, as
:class:`rich.text.Text`, after :func:`visible` has made control and invisible
format characters visible (a server that does not refuse them, protocol/SPEC.md
"Limits", must not move the cursor or reorder text on the terminal).

>>> visible("ann\\x1b[31m\\u202e")
'ann␛[31m�'
>>> plain("[/]").plain, plain("[@click=app.quit]bob[/]").spans
('[/]', [])
"""

from __future__ import annotations

import unicodedata
from typing import Any, Self

from rich.console import RenderableType
from rich.text import Text
from textual.widgets import RichLog, Static

#: U+2400.. CONTROL PICTURES stand for C0 controls and DEL
_PICTURES = {**{i: 0x2400 + i for i in range(0x20)}, 0x7F: 0x2421}
_JOINER = "\u200d"  # kept: it builds emoji (the server allows it only there)


def visible(text: str) -> str:
    """``text`` with each control character (category ``Cc``; newline kept)
    drawn as its control picture (``␛`` for ESC) or U+FFFD, and each other
    invisible format, separator or surrogate character (``Cf`` but ZERO WIDTH
    JOINER, ``Zl``, ``Zp``, ``Cs``: bidi overrides, zero-width spaces) as U+FFFD."""
    out = []
    for ch in text:
        if ch == "\n" or ch == _JOINER:
            out.append(ch)
            continue
        cat = unicodedata.category(ch)
        if cat == "Cc":
            out.append(chr(_PICTURES.get(ord(ch), 0xFFFD)))
        elif cat in ("Cf", "Zl", "Zp", "Cs"):
            out.append("\ufffd")
        else:
            out.append(ch)
    return "".join(out)


def plain(value: Any) -> Text:
    """``value`` (any object: ``str()`` of it) as literal text, made :func:`visible`."""
    return Text(visible(str(value)))


class Plain(Static):
    """A ``Static`` whose strings are text, never markup (:func:`plain`)."""

    def __init__(self, content: str = "", **kwargs: Any) -> None:
        super().__init__(plain(content), markup=False, **kwargs)

    def update(self, content: Any = "", *, layout: bool = True) -> None:
        """Show ``content``: a string literally (:func:`plain`), anything else as given."""
        super().update(plain(content) if isinstance(content, str) else content, layout=layout)


class PlainLog(RichLog):
    """A ``RichLog`` whose strings are lines of text, never markup (:func:`plain`).
    :attr:`written` keeps the last ``max_lines`` strings written, whole (``lines`` holds
    them as drawn: wrapped to the width when ``wrap``)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(markup=False, highlight=False, **kwargs)
        self.written: list[str] = []

    def write(self, content: RenderableType | object, width: int | None = None, expand: bool = False,
              shrink: bool = True, scroll_end: bool | None = None, animate: bool = False) -> Self:
        """``RichLog.write``, a string written literally (:func:`plain`)."""
        if isinstance(content, str):
            self.written = [*self.written[-(self.max_lines or 1000) + 1:], content]
            content = plain(content)
        return super().write(content, width, expand, shrink, scroll_end, animate)
