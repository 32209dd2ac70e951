"""How to play: each game's rules page, from the Markdown file its registration names.

A game's :attr:`cardhall.engine.plugins.GameSpec.rules` is a CommonMark file (first line
``# How to play <Title>``, ``##`` sections, card faces in fenced blocks whose info string is
``cards``: one ``label: CARDS`` row a line, protocol card codes, ``??`` face down). This
module serves it:

* ``GET /rules/<game>``: the file rendered to a whole HTML page (the site's stylesheet, a
  link back to the lobby). Raw HTML in the file is escaped, never passed through
  (``MarkdownIt("commonmark", {"html": False})``), and links keep markdown-it's check (no
  ``javascript:``). Each ``cards`` block becomes ``<div class="rules-cards">`` with one
  ``<p class="cards-row">`` a row: the label, then ``<code class="cards-codes"
  data-cards="Ah Td">Ah Td</code>``, which ``/web/js/rules.js`` replaces with the browser
  client's card faces (``cards.js``); without scripts the codes stay readable.
* ``GET /rules/<game>.md``: the Markdown source (``text/markdown; charset=utf-8``), what the
  terminal client shows.

An unknown game, or a game without rules, is 404 with a line of text saying which. Both answer
``Cache-Control: no-cache`` with an ``ETag`` (a conditional request with it gets 304), as the
game's renderer files and the client's static files do. The catalogue (``GET /api/games``)
gives each game's page as ``rules`` (:func:`rules_url`).

>>> page = render_page("# How to play Toy\\n\\n## Deal\\n\\n<script>x</script>\\n\\n```cards\\nYou: Ah ??\\n```\\n", "Toy")
>>> '<h2 id="deal">Deal</h2>' in page, "<script>x" in page, "&lt;script&gt;x&lt;/script&gt;" in page
(True, False, True)
>>> '<code class="cards-codes" data-cards="Ah ??">Ah ??</code>' in page
True
>>> page_title("# How to play *Toy*\\n"), page_title("no heading")
('How to play Toy', None)
"""

from __future__ import annotations

import hashlib
import html
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from cardhall.engine import plugins
from cardhall.engine.plugins import GameSpec

#: the URL path of a game's rules page: ``RULES_PATH + name`` (``+ ".md"``: its source)
RULES_PATH = "/rules/"
HTML_TYPE = "text/html; charset=utf-8"
MARKDOWN_TYPE = "text/markdown; charset=utf-8"
#: the info string of a fenced block of card faces
CARDS_INFO = "cards"
#: the headers every answer of a rules page carries beside its ETag (as the renderer files')
CACHE = {"cache-control": "no-cache"}

PAGE = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>{title} · cardhall</title>
  <link rel="icon" href="data:,">
  <link rel="stylesheet" href="/web/css/style.css">
  <script type="module" src="/web/js/rules.js"></script>
</head>
<body class="rules-body">
  <a class="skip" href="#main">Skip to content</a>
  <header class="topbar">
    <a href="/#/" class="brand" aria-label="cardhall lobby">cardhall</a>
    <nav class="crumbs" aria-label="Where you are"><a href="/#/" id="back-to-lobby">Lobby</a> › <span aria-current="page">{title}</span></nav>
  </header>
  <main id="main" class="rules-page" tabindex="-1">
{body}  </main>
</body>
</html>
"""


def rules_url(spec: GameSpec) -> str | None:
    """The URL path of ``spec``'s rules page (``/rules/<name>``), or None when it has none."""
    return None if spec.rules is None else RULES_PATH + spec.name


def _cards_block(content: str) -> str:
    """A ``cards`` block's rows as HTML: ``label: CARDS`` -> a labelled row of codes (a line
    without a colon is a row of codes alone); every piece escaped."""
    rows = []
    for line in content.splitlines():
        if not line.strip():
            continue
        label, colon, codes = line.partition(":")
        if not colon:
            label, codes = "", label
        codes = " ".join(codes.split())
        shown = html.escape(codes)
        label_html = f'<span class="cards-label">{html.escape(label.strip())}</span> ' if label.strip() else ""
        rows.append(f'<p class="cards-row">{label_html}<code class="cards-codes" data-cards="{shown}">{shown}</code></p>\n')
    return '<div class="rules-cards">\n' + "".join(rows) + "</div>\n"


def _fence(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    """markdown-it's fence rule: a ``cards`` block as :func:`_cards_block`, any other as usual."""
    token = tokens[idx]
    if token.info.strip().split(maxsplit=1)[:1] == [CARDS_INFO]:
        return _cards_block(token.content)
    return str(self.fence(tokens, idx, options, env))


def _inline_text(inline: Token) -> str:
    """The text of an inline token (a heading's words), its markup dropped."""
    return "".join(c.content for c in inline.children or [] if c.type in ("text", "code_inline"))


def slug(text: str) -> str:
    """A heading's anchor as GitHub makes it (``[Time and absence](#time-and-absence)`` links to
    it): lower case, punctuation dropped, spaces as hyphens.

    >>> slug("Time and absence"), slug("Who wins?"), slug("The table's options")
    ('time-and-absence', 'who-wins', 'the-tables-options')
    """
    kept = "".join(c for c in text.strip().lower() if c.isalnum() or c in " -_")
    return kept.replace(" ", "-")


def _heading_open(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    """markdown-it's heading rule with an ``id`` (:func:`slug`; ``-1``, ``-2`` ... for a repeat)."""
    anchor = slug(_inline_text(tokens[idx + 1]) if idx + 1 < len(tokens) else "")
    if anchor:
        seen = env.setdefault("anchors", {})
        count = seen.get(anchor, 0)
        seen[anchor] = count + 1
        tokens[idx].attrSet("id", anchor if count == 0 else f"{anchor}-{count}")
    return str(self.renderToken(tokens, idx, options, env))


def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False})
    md.add_render_rule("fence", _fence)
    md.add_render_rule("heading_open", _heading_open)
    return md


_MD = _markdown()


def page_title(markdown: str) -> str | None:
    """The text of the first level-1 heading of ``markdown`` (inline markup dropped), or None."""
    tokens = _MD.parse(markdown)
    for i, token in enumerate(tokens[:-1]):
        if token.type == "heading_open" and token.tag == "h1":
            return _inline_text(tokens[i + 1]).strip() or None
    return None


def render_page(markdown: str, title: str) -> str:
    """The whole HTML page of ``markdown`` (a rules file); ``title`` names the page when the
    file has no level-1 heading. Everything from the file is escaped."""
    body = _MD.render(markdown, {})
    return PAGE.format(title=html.escape(page_title(markdown) or f"How to play {title}"), body=body)


@lru_cache(maxsize=64)
def _rendered(path: Path, version: tuple[int, int], title: str, markdown: bool) -> tuple[bytes, str]:
    """(body, ETag) of the rules file ``path`` as it is at ``version`` (its mtime and size):
    the page, or the source when ``markdown``."""
    text = path.read_text(encoding="utf-8")
    body = (text if markdown else render_page(text, title)).encode()
    return body, '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


def rules_response(game: str, markdown: bool, if_none_match: str | None = None) -> Response:
    """The answer to ``GET /rules/<game>`` (``markdown``: ``/rules/<game>.md``): 200 with the page
    or the source, 304 when ``if_none_match`` holds its ETag, 404 (text) for an unknown game, a
    game without rules or a rules file that cannot be read."""
    spec = plugins.games().get(game)
    if spec is None:
        return PlainTextResponse(f"no such game: {game}", 404)
    if spec.rules is None:
        return PlainTextResponse(f"the game {game} has no rules page", 404)
    try:
        stat = spec.rules.stat()
        title = spec.engine_class().title
        body, etag = _rendered(spec.rules, (stat.st_mtime_ns, stat.st_size), title, markdown)
    except (OSError, UnicodeDecodeError, ImportError, AttributeError):
        return PlainTextResponse(f"the rules of {game} cannot be read", 404)
    headers = {**CACHE, "etag": etag}
    if if_none_match and etag in [t.strip() for t in if_none_match.split(",")]:
        return Response(status_code=304, headers=headers)
    return Response(body, media_type=MARKDOWN_TYPE if markdown else HTML_TYPE, headers=headers)


async def _serve(request: Request) -> Response:
    name = request.path_params["game"]
    markdown = name.endswith(".md")
    return rules_response(name.removesuffix(".md") if markdown else name, markdown,
                          request.headers.get("if-none-match"))


def rules_routes() -> list[Route]:
    """``GET /rules/{game}`` and ``GET /rules/{game}.md``: the registered games' rules pages."""
    return [Route(RULES_PATH + "{game}", _serve, methods=["GET"])]
