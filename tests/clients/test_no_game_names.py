"""Shared client code names no game: a game's client parts are found through its registration
(``GameSpec``: ``web_renderer``, ``tui_renderer``, its bots and engine), never by its name.

The registry says which games there are (the built-in ones and the test-only High Card) and
which files are a game's own (the files its spec points to). Every other file under
``clients/`` is read as code, without its comments and docstrings (Python through
:mod:`tokenize` and :mod:`ast`; JavaScript and HTML without their comments), and must not
contain a registered game's name or an obvious stem of one (:data:`STEMS`), in any case.
:data:`EXCEPTIONS` lists the files allowed to, each with its reason.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import inspect
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest

from cardhall.engine import plugins

ROOT = Path(__file__).resolve().parents[2]
CLIENTS = ROOT / "clients"
#: the words that name a built-in game without being its registered name
STEMS = ("holdem", "hold'em", "loco")
#: the suffixes read as code, and the URL path the server serves ``clients/web`` at
SCANNED = (".py", ".js", ".html")
WEB_MOUNT = "/web/"
#: files under clients/ allowed to name games (path from the repository root -> why)
EXCEPTIONS = {
    "clients/bench/engine.py": "compares the Hold'em engines with pokerkit, which plays Hold'em only",
    "clients/bench/replay_bench.py": "times PHH replays (a Hold'em format) beside pokerkit's",
    "clients/bench/bots.py": "its bot-only tables are no-limit Hold'em, the figures' reference load",
    "clients/bench/server.py": "prefers no-limit Hold'em, the game its published figures were measured on",
    "clients/bench/cluster.py": "its --game help names the benchmark's default game",
    "clients/load/run.py": "the load's default game, the one its published figures were measured on",
    "clients/commands/loadtest.py": "the load test's default game (--game), as clients/load/run.py's",
}


@pytest.fixture(scope="module")
def registry() -> Iterator[dict[str, plugins.GameSpec]]:
    """Every registered game, the test-only High Card included (registered for these tests)."""
    with contextlib.ExitStack() as stack:
        toy = plugins.load_module("tests.toygame")
        if not all(spec.name in plugins.games() for spec in toy):
            stack.enter_context(plugins.registered(*toy))
        yield dict(plugins.games())


# -- which files are a game's own ------------------------------------------------------------------
def _module_file(ref: str) -> Path | None:
    """The source file of the module a ``"module:attribute"`` reference names."""
    found = importlib.util.find_spec(ref.partition(":")[0])
    return Path(found.origin).resolve() if found is not None and found.origin else None


def _class_file(cls: object) -> Path | None:
    try:
        source = inspect.getsourcefile(cls)  # type: ignore[arg-type]
    except TypeError:
        return None
    return Path(source).resolve() if source else None


def own_files(spec: plugins.GameSpec) -> set[Path]:
    """The files ``spec`` points to: its web renderer (a URL path under ``/web/`` is a file of
    ``clients/web``), the modules of its terminal parts, its bots and its engine."""
    files: set[Path | None] = set()
    web = spec.web_renderer
    if isinstance(web, Path):
        files.add(web.resolve())
    elif isinstance(web, str) and web.startswith(WEB_MOUNT):
        files.add((CLIENTS / "web" / web.removeprefix(WEB_MOUNT)).resolve())
    if spec.tui_renderer:
        files.add(_module_file(spec.tui_renderer))
    for ref in [spec.engine, *spec.bots.values()]:
        files.add(_module_file(ref) if isinstance(ref, str) else _class_file(ref))
    return {f for f in files if f is not None}


# -- code without comments -------------------------------------------------------------------------
def python_code(text: str) -> list[tuple[int, str]]:
    """(line number, the code on it) of Python source: comments and docstrings (any string that is
    a statement of its own) left out."""
    spans = [(n.lineno, n.col_offset, n.end_lineno or n.lineno, n.end_col_offset or 0)
             for n in ast.walk(ast.parse(text))
             if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)]

    def docstring(start: tuple[int, int]) -> bool:
        return any((l0, c0) <= start < (l1, c1) for l0, c0, l1, c1 in spans)

    lines: dict[int, list[str]] = {}
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT or (token.type == tokenize.STRING and docstring(token.start)):
            continue
        lines.setdefault(token.start[0], []).append(token.string.replace("\n", " "))
    return sorted((n, " ".join(parts)) for n, parts in lines.items())


#: JavaScript: what may come before a regular expression literal (else ``/`` divides)
_REGEX_AFTER = set("(,=:[!&|?{};+-*%<>~^")
_REGEX_KEYWORDS = {"return", "typeof", "case", "in", "of", "delete", "void", "throw", "new", "yield", "await"}
_BEFORE = re.compile(r"([\w$]+|\S)\s*$")


def _regex_here(text: str, i: int) -> bool:
    """Whether the ``/`` at ``i`` begins a regular expression (not a division): by what precedes it."""
    before = _BEFORE.search(text, max(0, i - 40), i)
    if before is None:
        return True
    word = before.group(1)
    return word in _REGEX_KEYWORDS if (word[0].isalnum() or word[0] in "_$") else word in _REGEX_AFTER


def js_code(text: str) -> str:
    """JavaScript source with its comments blanked (newlines kept, so lines keep their numbers);
    strings, template literals (and their ``${}``) and regular expressions are code."""
    out: list[str] = []
    i, n = 0, len(text)
    braces: list[int] = []  # for each open ``${``: the depth of ``{`` inside it

    def blank(chunk: str) -> str:
        return "".join(c if c == "\n" else " " for c in chunk)

    def string_end(j: int, quote: str) -> int:
        while j < n and text[j] != quote:
            if text[j] == "\\":
                j += 1
            elif quote == "`" and text.startswith("${", j):
                return j
            j += 1
        return j

    def string_to(start: int, end: int) -> int:
        """Keep the string from ``start`` to its closing quote at ``end``, or to a ``${`` there
        (then inside the template's code); the index after what was kept."""
        stop = end + (2 if text.startswith("${", end) else 1)
        if stop == end + 2:
            braces.append(0)
        out.append(text[start:stop])
        return stop

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(blank(text[i:end]))
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(blank(text[i:end]))
            i = end
        elif c in "'\"`":
            i = string_to(i, string_end(i + 1, c))
        elif c == "}" and braces and braces[-1] == 0:  # the end of a ``${``: back in the template
            braces.pop()
            i = string_to(i, string_end(i + 1, "`"))
        elif c == "/" and _regex_here(text, i):
            j, klass = i + 1, False
            while j < n and text[j] != "\n" and (klass or text[j] != "/"):
                if text[j] == "\\":
                    j += 1
                elif text[j] in "[]":
                    klass = text[j] == "["
                j += 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            if braces and c in "{}":
                braces[-1] += 1 if c == "{" else -1
            out.append(c)
            i += 1
    return "".join(out)


def html_code(text: str) -> str:
    """HTML with its comments blanked (newlines kept)."""
    return re.sub(r"<!--.*?-->", lambda m: "".join(c if c == "\n" else " " for c in m.group()), text, flags=re.S)


def code_lines(text: str, suffix: str) -> list[tuple[int, str]]:
    """(line number, code) of a file's text, by its suffix (``.py``, ``.js``, ``.html``)."""
    if suffix == ".py":
        return python_code(text)
    code = js_code(text) if suffix == ".js" else html_code(text)
    return [(number, line) for number, line in enumerate(code.splitlines(), 1) if line.strip()]


def names_pattern(names: list[str]) -> re.Pattern[str]:
    """Any of ``names`` or :data:`STEMS`, in any case."""
    words = sorted({*names, *STEMS}, key=len, reverse=True)
    return re.compile("|".join(re.escape(w) for w in words), re.IGNORECASE)


def offenders(text: str, suffix: str, pattern: re.Pattern[str]) -> list[tuple[int, str]]:
    """(line number, code) of each line of code in ``text`` that names a game."""
    return [(number, line.strip()) for number, line in code_lines(text, suffix) if pattern.search(line)]


def shared_files(registry: dict[str, plugins.GameSpec]) -> list[Path]:
    """The files under clients/ read as code that are no game's own."""
    own = {f for spec in registry.values() for f in own_files(spec)}
    return sorted(p for p in CLIENTS.rglob("*") if p.suffix in SCANNED and p.is_file()
                  and "__pycache__" not in p.parts and p.resolve() not in own)


# -- the tests ---------------------------------------------------------------------------------------
def test_shared_client_code_names_no_game(registry):
    pattern = names_pattern(list(registry))
    found, stale = [], []
    for path in shared_files(registry):
        where = path.relative_to(ROOT).as_posix()
        hits = offenders(path.read_text(encoding="utf-8"), path.suffix, pattern)
        if where in EXCEPTIONS:
            stale += [] if hits else [where]
            continue
        found += [f"{where}:{number}: {line[:120]}" for number, line in hits]
    assert not found, "shared client code names a game (find its part through the game's registration):\n" + \
        "\n".join(found)
    assert not stale, f"these exceptions name no game any more: remove them from EXCEPTIONS: {stale}"


def test_the_games_own_files_are_found(registry):
    """Every file a spec points to exists (a URL path maps to its file); each built-in game's own
    client files are its two renderers' (so they are not read as shared code)."""
    for name, spec in registry.items():
        ours = own_files(spec)
        assert ours and all(f.is_file() for f in ours), (name, ours)
        if spec.source.startswith(plugins.BUILTIN_PACKAGE):
            assert len({f for f in ours if f.is_relative_to(CLIENTS.resolve())}) == 2, (name, ours)
    assert all((ROOT / where).is_file() for where in EXCEPTIONS), EXCEPTIONS


BUILT_IN = sorted(plugins.games())


@pytest.mark.parametrize("name", BUILT_IN)
@pytest.mark.parametrize(("suffix", "text", "lines"), [
    (".py", 'GAME = "{name}"\n', [1]),
    (".py", '"""Draws {name}."""\n\n# {name} too\nx = 1  # {name}\n', []),
    (".py", 'def f():\n    """{name}\n    again."""\n    return f"{{x}} {name}"\n', [4]),
    (".py", "class {cap}View:\n    pass\n", [1]),
    (".js", 'const g = "{name}";\n', [1]),
    (".js", "// {name}\n/* a\n{name} */ const x = 1;\n", []),
    (".js", "const s = `a ${{x + 1}} {name}`;\nconst r = /\\/\\/ {name}/;\n", [1, 2]),
    (".js", "const u = 'http://x'; // {name}\nlet {name}Hand = 2 / 3; // {name}\n", [2]),
    (".html", "<!-- {name} -->\n<p>{name}</p>\n", [2]),
])
def test_the_scanner_finds_a_name_in_code_only(name, suffix, text, lines):
    """A game's name in code is caught, in any case; in a comment or a docstring it is not."""
    text = text.format(name=name, cap=name.title().replace("_", ""))
    assert [number for number, _ in offenders(text, suffix, names_pattern(BUILT_IN))] == lines
