"""A game's rules in the terminal client: its "How to play" page read as Markdown and shown as text.

The catalogue (``GET /api/games``) gives a game with rules a ``rules`` URL path; the same path
with ``.md`` is the page's Markdown source (SPEC "HTTP"), which :func:`fetch_rules` reads.
:func:`rules_text` makes it text for the terminal: headings underlined, fenced blocks indented,
and each ``cards`` block's rows (``label: CARDS`` in protocol card codes) with the card symbols
of :func:`cardhall.clients.tui.text.cards`. Everything else stays as written (Markdown reads as
text); the help screen (:mod:`cardhall.clients.tui.help`) shows it literally, never as markup.

>>> print(rules_text("# How to play Toy\\n\\n## Deal\\n\\n```cards\\nYou: Ah Td\\nThem: ?? Xr\\n```\\n**Bet** or fold."))
How to play Toy
═══════════════
<BLANKLINE>
Deal
────
<BLANKLINE>
  You: A♥ T♦
  Them: ?? 🃏r
Bet or fold.
"""

from __future__ import annotations

import re
import urllib.error
import urllib.request
from urllib.parse import quote

from cardhall.clients.client import http_base
from cardhall.clients.tui.text import card

#: a card code of the protocol, or ``??`` (face down)
CODE = re.compile(r"^(?:[2-9TJQKA][cdhs]|X[rb]|\?\?)$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)")
_HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_STRONG = re.compile(r"\*\*(.+?)\*\*|__(.+?)__")
#: the underline of a level-1 and a level-2 heading
RULE_LINES = {1: "═", 2: "─"}


def _cards_row(line: str) -> str:
    """A ``cards`` row with each card code as its symbols; anything else as written."""
    label, colon, codes = line.partition(":")
    if not colon:
        label, codes = "", label
    shown = " ".join(card(c) if CODE.match(c) else c for c in codes.split())
    return f"  {label.strip()}: {shown}" if label.strip() else f"  {shown}"


def rules_text(markdown: str) -> str:
    """``markdown`` (a rules page's source) as terminal text (see the module docstring)."""
    out: list[str] = []
    fence: tuple[str, str] | None = None  # (the opening marker, the info string) inside a block
    for line in markdown.splitlines():
        opened = _FENCE.match(line)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0][0] and len(opened.group(1)) >= len(fence[0]) \
                    and not opened.group(2):
                fence = None
            elif line.strip():
                out.append(_cards_row(line) if fence[1] == "cards" else "    " + line)
            continue
        if opened:
            fence = (opened.group(1), opened.group(2))
            continue
        heading = _HEADING.match(line)
        if heading:
            text = _STRONG.sub(lambda m: m.group(1) or m.group(2), heading.group(2))
            out.append(text)
            level = len(heading.group(1))
            if level in RULE_LINES:
                out.append(RULE_LINES[level] * len(text))
            continue
        out.append(_STRONG.sub(lambda m: m.group(1) or m.group(2), line))
    return "\n".join(out)


def fetch_rules(server: str, path: str, timeout: float = 5.0) -> str | None:
    """The Markdown of the rules page at the URL path ``path`` (the catalogue's ``rules``) of the
    server whose websocket URL is ``server``: ``GET <path>.md``. None when the server answers 404
    (no such game or no rules); ``OSError`` (``URLError``, another ``HTTPError``) or
    ``UnicodeDecodeError`` when it cannot be read; ``ValueError`` for a ``path`` that is not a
    path on that server (it must start with ``/``). Blocking: run it in a thread."""
    if not path.startswith("/") or path.startswith("//"):
        raise ValueError(f"not a URL path of the server: {path!r}")
    url = http_base(server) + quote(path, safe="/") + ".md"
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:  # noqa: S310 (the server's own http(s) URL)
            body: bytes = r.read()
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return None
        raise
    return body.decode("utf-8")
