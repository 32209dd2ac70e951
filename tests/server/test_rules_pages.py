"""Each game's "How to play" page (``GameSpec.rules``, ``server/rules.py``) from a live server.

* For every registered game (the built-in ones, :data:`tests.games.GAMES`, and the test-only High
  Card): ``GET /rules/<game>`` is a whole HTML page with its title, every ``##`` section of the
  Markdown as a heading, a card row (``code.cards-codes``, what ``/web/js/rules.js`` draws) for
  each row of each ``cards`` block, the site's stylesheet, a link back to the lobby and no script
  but the page's own module; ``GET /rules/<game>.md`` is the file itself; the catalogue names the
  page (``rules``) and the link resolves.
* A rules file with raw HTML (a ``<script>``, an ``onerror``, a ``javascript:`` link, markup in
  a card row) comes out as text, never as markup.
* An unknown game and a game without rules are 404 with a line saying which; a registration
  naming a missing or non-Markdown file is refused.
* The answers carry ``Cache-Control: no-cache`` and an ``ETag`` a conditional request gets 304 with.
* Every row of every ``cards`` block of the rules files holds card codes only.
"""

from __future__ import annotations

import dataclasses
import html
import re
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
import pytest_asyncio
from markdown_it import MarkdownIt

from cardhall.engine import plugins
from cardhall.protocol.schemas import FrameValidator
from tests.games import GAMES
from tests.server.conftest import LiveServer, running_server
from tests.toygame.engine import HighCard

ROOT = Path(__file__).resolve().parents[2]
TOY = "high_card"
#: a card code of the protocol, or ``??`` (face down)
CODE = re.compile(r"^(?:[2-9TJQKA][cdhs]|X[rb]|\?\?)$")
#: the only script a rules page has: its own module
PAGE_SCRIPT = '<script type="module" src="/web/js/rules.js"></script>'


HOSTILE = "hostile_rules"
NO_RULES = "no_rules"


class HostileRules(HighCard):
    """High Card under another name, whose rules file holds raw HTML (:func:`_hostile_rules`)."""

    game = HOSTILE


class NoRules(HighCard):
    """High Card under another name, without rules."""

    game = NO_RULES


def _hostile_rules(folder: Path) -> Path:
    """A rules file holding raw HTML, a script link and markup in a card row."""
    rules = folder / "hostile.md"
    rules.write_text(
        "# How to play <b>Hostile</b>\n\n"
        "## Scripts <script>alert('h2')</script>\n\n"
        "<script>alert('block')</script>\n\n"
        "Inline <img src=x onerror=\"alert('img')\"> and [a link](javascript:alert('link')).\n\n"
        "```cards\n"
        "<b>label</b>: Ah \"><script>alert('row')</script>\n"
        "```\n", encoding="utf-8")
    return rules


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[LiveServer]:
    """A live server for the module's tests, started with High Card registered (as the ``toy``
    fixture of tests/toygame/conftest.py registers it, for the module here: the catalogue is
    built as the server starts) and two more games made of it: one whose rules file is hostile
    (:func:`_hostile_rules`), one without rules."""
    (toy,) = plugins.load_module("tests.toygame")
    hostile = dataclasses.replace(toy, name=HOSTILE, engine=HostileRules, schema=None, web_renderer=None,
                                  rules=_hostile_rules(tmp_path_factory.mktemp("rules")), source="tests.server")
    bare = dataclasses.replace(toy, name=NO_RULES, engine=NoRules, schema=None, web_renderer=None, rules=None,
                               source="tests.server")
    with plugins.registered(toy, hostile, bare):
        async with running_server() as srv:
            yield srv


@pytest.fixture(params=[*GAMES, TOY])
def game(request: pytest.FixtureRequest, server: LiveServer) -> str:
    """A registered game's name: each built-in one, and High Card."""
    return str(request.param)


def _sections(markdown: str) -> tuple[str, list[str], list[list[str]]]:
    """(the level-1 heading, the ``##`` headings, each ``cards`` block's rows) of a rules file,
    as CommonMark reads it."""
    tokens = MarkdownIt("commonmark").parse(markdown)
    title, sections, blocks = "", [], []
    for i, token in enumerate(tokens):
        if token.type == "heading_open":
            text = "".join(c.content for c in tokens[i + 1].children or [] if c.type in ("text", "code_inline"))
            if token.tag == "h1" and not title:
                title = text
            elif token.tag == "h2":
                sections.append(text)
        elif token.type == "fence" and token.info.strip() == "cards":
            blocks.append([line for line in token.content.splitlines() if line.strip()])
    return title, sections, blocks


def _text(fragment: str) -> str:
    """The text of an HTML fragment (tags dropped, entities read)."""
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


@pytest.mark.asyncio(loop_scope="module")
async def test_every_games_rules_page_has_its_title_sections_and_cards(server: LiveServer, game: str) -> None:
    source = plugins.spec(game).rules
    assert source is not None and source.is_file(), f"{game} has no rules file"
    markdown = source.read_text(encoding="utf-8")
    title, sections, blocks = _sections(markdown)
    assert title == f"How to play {title.removeprefix('How to play ')}" and sections and blocks, (game, title)
    async with httpx.AsyncClient(base_url=server.http) as http:
        r = await http.get(f"/rules/{game}")
        catalogue = (await http.get("/api/games")).json()
    assert r.status_code == 200 and r.headers["content-type"] == "text/html; charset=utf-8", r.text[:200]
    page = r.text
    assert page.startswith("<!doctype html>") and page.rstrip().endswith("</html>")
    assert f"<title>{html.escape(title)} · cardhall</title>" in page
    assert [_text(h) for h in re.findall(r"<h1[^>]*>(.*?)</h1>", page, re.S)] == [title]
    assert [_text(h) for h in re.findall(r"<h2[^>]*>(.*?)</h2>", page, re.S)] == sections
    assert '<link rel="stylesheet" href="/web/css/style.css">' in page and 'href="/#/"' in page
    assert page.count("<script") == 1 and PAGE_SCRIPT in page, "a script other than the page's own"
    drawn = re.findall(r'<div class="rules-cards">(.*?)</div>', page, re.S)
    assert len(drawn) == len(blocks), game
    for rows, block in zip(blocks, drawn):
        codes = re.findall(r'<code class="cards-codes" data-cards="([^"]*)">([^<]*)</code>', block)
        assert [html.unescape(a) for a, _ in codes] == [" ".join(row.partition(":")[2].split()) for row in rows]
        assert all(a == b for a, b in codes)  # readable without the script: the codes as text
    entry = next(g for g in catalogue["games"] if g["name"] == game)
    assert entry["rules"] == f"/rules/{game}"
    FrameValidator().check_catalogue(catalogue)


@pytest.mark.asyncio(loop_scope="module")
async def test_the_markdown_source_is_served_as_is(server: LiveServer, game: str) -> None:
    rules = plugins.spec(game).rules
    assert rules is not None
    async with httpx.AsyncClient(base_url=server.http) as http:
        r = await http.get(f"/rules/{game}.md")
    assert r.status_code == 200 and r.headers["content-type"] == "text/markdown; charset=utf-8"
    assert r.content == rules.read_bytes()


@pytest.mark.asyncio(loop_scope="module")
async def test_raw_html_in_a_rules_file_comes_out_as_text(server: LiveServer) -> None:
    hostile = plugins.spec(HOSTILE).rules
    assert hostile is not None
    async with httpx.AsyncClient(base_url=server.http) as http:
        page = (await http.get(f"/rules/{HOSTILE}")).text
        source = await http.get(f"/rules/{HOSTILE}.md")
    assert page.count("<script") == 1 and PAGE_SCRIPT in page
    for alert in ("h2", "block", "row"):
        assert f"&lt;script&gt;alert('{alert}')&lt;/script&gt;" in page.replace("&#x27;", "'"), alert
    assert "<img" not in page and "&lt;img src=x onerror=" in page
    assert 'href="javascript:' not in page and "<b>" not in page
    assert "<title>How to play &lt;b&gt;Hostile&lt;/b&gt; · cardhall</title>" in page  # its markup as text
    assert 'data-cards="Ah &quot;&gt;&lt;script&gt;' in page.replace("&#x27;", "'")
    assert source.text == hostile.read_text()


@pytest.mark.asyncio(loop_scope="module")
async def test_unknown_games_and_games_without_rules_are_404(server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=server.http) as http:
        catalogue = (await http.get("/api/games")).json()
        answers = {path: await http.get(path) for path in (
            f"/rules/{NO_RULES}", f"/rules/{NO_RULES}.md", "/rules/nothing_here", "/rules/nothing_here.md",
            "/rules/NoLimit", "/rules/")}
    entry = next(g for g in catalogue["games"] if g["name"] == NO_RULES)
    assert "rules" not in entry
    FrameValidator().check_catalogue(catalogue)
    for path, r in answers.items():
        assert r.status_code == 404, path
    assert answers["/rules/no_rules"].text == "the game no_rules has no rules page"
    assert answers["/rules/no_rules.md"].text == "the game no_rules has no rules page"
    assert answers["/rules/nothing_here"].text == "no such game: nothing_here"
    assert answers["/rules/nothing_here.md"].text == "no such game: nothing_here"


@pytest.mark.asyncio(loop_scope="module")
async def test_every_catalogue_rules_link_resolves(server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=server.http) as http:
        catalogue = (await http.get("/api/games")).json()
        games = catalogue["games"]
        assert {g["name"] for g in games if "rules" in g} >= {*GAMES, TOY}
        for g in games:
            if "rules" in g:
                page, source = await http.get(g["rules"]), await http.get(g["rules"] + ".md")
                assert page.status_code == 200 and "text/html" in page.headers["content-type"], g["rules"]
                assert source.status_code == 200 and "text/markdown" in source.headers["content-type"], g["rules"]
    FrameValidator().check_catalogue(catalogue)


@pytest.mark.asyncio(loop_scope="module")
async def test_cache_headers_and_conditional_requests(server: LiveServer) -> None:
    game = GAMES[0]
    async with httpx.AsyncClient(base_url=server.http) as http:
        for path in (f"/rules/{game}", f"/rules/{game}.md"):
            first = await http.get(path)
            assert first.headers["cache-control"] == "no-cache" and first.headers["etag"].startswith('"'), path
            again = await http.get(path, headers={"if-none-match": first.headers["etag"]})
            assert again.status_code == 304 and again.content == b"", path
            other = await http.get(path, headers={"if-none-match": '"something-else"'})
            assert other.status_code == 200 and other.content == first.content, path
        page, source = await http.get(f"/rules/{game}"), await http.get(f"/rules/{game}.md")
    assert page.headers["etag"] != source.headers["etag"]


def test_a_registration_names_an_existing_markdown_file(tmp_path: Path) -> None:
    (spec,) = plugins.load_module("tests.toygame")
    text = tmp_path / "rules.txt"
    text.write_text("# How to play High Card\n")
    for bad in (tmp_path / "missing.md", text, tmp_path):
        with pytest.raises(plugins.RegistrationError, match=r"game 'high_card': rules .*: not a \.md file"):
            dataclasses.replace(spec, rules=bad).check()
    for name in GAMES:
        rules = plugins.spec(name).rules
        assert rules == plugins.builtin_rules(name) and rules.parent == ROOT / "engine" / "games" / "rules"


def test_every_cards_block_of_the_rules_files_holds_card_codes() -> None:
    """The ``cards`` blocks of the rules files (tests/test_docs_examples.py leaves them to this
    test): each row is ``label: CARDS``, every card a protocol card code or ``??``."""
    files = sorted((ROOT / "engine" / "games" / "rules").glob("*.md")) + [ROOT / "tests" / "toygame" / "rules.md"]
    assert len(files) == len(GAMES) + 1, files
    for path in files:
        _, _, blocks = _sections(path.read_text(encoding="utf-8"))
        assert blocks, f"{path.name}: no cards block"
        for row in (row for block in blocks for row in block):
            label, colon, codes = row.partition(":")
            assert colon and label.strip() and codes.split(), f"{path.name}: {row!r} is not 'label: CARDS'"
            assert all(CODE.match(c) for c in codes.split()), f"{path.name}: {row!r} holds a word that is no card"
