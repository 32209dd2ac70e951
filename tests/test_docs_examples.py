"""Every example the documentation shows is run here or checked, so none goes stale.

What counts as an example, found by reading the files (nothing is listed by hand):

* the fenced code blocks of every ``*.md`` of the repository: each command of a
  ```` ```sh ```` block (continuation lines joined, ``&&``, ``;``, ``&`` and
  ``for ... done`` loops taken apart), each ```` ```python ```` or
  ```` ```toml ```` block;
* the literal blocks (``::``) of the packages' docstrings;
* every inline ``cardhall ...`` command, in backticks in the ``*.md`` files and
  in double backticks in the docstrings;
* the docstrings' ``>>>`` examples: every module that has one runs under
  :mod:`doctest` here.

Each shell command must match one entry of :data:`RULES`, which says how it is
checked: the ``cardhall`` command lines parse with the real parser (nothing
runs), ``python3 dev.py test`` names existing paths and options pytest knows,
``redis-server`` starts with the options shown, ``systemctl`` names the unit
deploy/systemd/ has; a few are run by another test, named in the rule (the
nginx and wheel commands of deploy/README.md). Commands that finish quickly are
run against a real server on loopback: the conformance kit's runner, the client
library's headline example, the README's ``cardhall simulate`` and
``cardhall phh replay``, deploy/README.md's JWT secret, token minting (its one
``python`` block) and the ``hello`` with that token. A command, block or literal block nothing here knows
fails :func:`test_every_shell_command_is_run_or_checked` (or its neighbours)
with where it is, so a new example cannot slip through unchecked.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import doctest
import functools
import importlib
import io
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import textwrap
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from cardhall.clients.cli import build_parser
from cardhall.clients.cli import main as cardhall_main
from tests.conftest import require
from tests.server.conftest import REDIS_SERVER, TEST_SETTINGS, running_server

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("engine", "protocol", "server", "clients")
SHARED_PHH = Path(os.environ.get("CARDHALL_PHH_DIR") or ROOT.parent / "shared" / "phh")
#: folders whose Markdown is not the project's documentation
NOT_DOCS = {".venv", "build", ".git", ".pytest_cache", ".hypothesis", ".mypy_cache", ".ruff_cache", "node_modules"}
#: what stands for a value in an example command, and what a check puts there instead
SHELL_VALUES = {"$(hostname)": "host", '"$KEY"': "key", "$KEY": "key"}


# -- reading the examples ----------------------------------------------------------------------------
def doc_files() -> list[Path]:
    """Every Markdown file of the repository (not the virtual environment's, the build's or caches')."""
    return sorted(p for p in ROOT.rglob("*.md")
                  if not NOT_DOCS & set(p.relative_to(ROOT).parts) and not any(
                      part.endswith(".egg-info") for part in p.relative_to(ROOT).parts))


@dataclass(frozen=True)
class Block:
    """One fenced block: the file (relative to the repository), the line of its opening fence, its
    language and its text."""

    doc: str
    line: int
    lang: str
    text: str


def fenced_blocks(path: Path) -> list[Block]:
    """The fenced code blocks of the Markdown file ``path``, in order."""
    blocks, lines = [], path.read_text().splitlines()
    i = 0
    while i < len(lines):
        m = re.match(r"^(\s*)```(\S*)\s*$", lines[i])
        if m:
            end = next(j for j in range(i + 1, len(lines)) if lines[j].strip().startswith("```"))
            body = textwrap.dedent("\n".join(lines[i + 1:end]))
            blocks.append(Block(str(path.relative_to(ROOT)), i + 1, m.group(2), body))
            i = end
        i += 1
    return blocks


@dataclass(frozen=True)
class Command:
    """One shell command of a block: where it is, its words (quotes removed, comments dropped)."""

    doc: str
    line: int
    words: tuple[str, ...]

    @property
    def text(self) -> str:
        return " ".join(self.words)

    def where(self) -> str:
        return f"{self.doc}:{self.line}: {self.text}"


def shell_commands(block: Block) -> list[Command]:
    """The commands of a ``sh`` block. Continuation lines are joined; ``&&``, ``||``, ``;``, ``&``
    and ``|`` separate commands; ``for VAR in A B C; do ... done`` gives its body once per value,
    ``$VAR`` replaced; :data:`SHELL_VALUES` are filled in."""
    commands: list[Command] = []
    loop: tuple[str, list[str], list[Command]] | None = None
    text = block.text.replace("\\\n", " ")
    numbers = [block.line + 1 + i for i, line in enumerate(block.text.splitlines()) if not line.endswith("\\")]
    for number, line in zip(numbers, text.splitlines(), strict=True):
        for value, filled in SHELL_VALUES.items():
            line = line.replace(value, filled)
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|")
        lexer.whitespace_split = True
        current: list[str] = []
        for word in [*lexer, ";"]:
            if word not in (";", "&", "&&", "||", "|"):
                current.append(word)
                continue
            if not current:
                continue
            if current[0] == "for":
                loop = (current[1], current[3:], [])
            elif current == ["do"]:
                pass
            elif current == ["done"] and loop is not None:
                var, values, body = loop
                commands += [replace(c, words=tuple(w.replace(f"${var}", v) for w in c.words))
                             for v in values for c in body]
                loop = None
            else:
                command = Command(block.doc, number, tuple(current))
                (loop[2] if loop is not None else commands).append(command)
            current = []
    assert loop is None, f"{block.doc}:{block.line}: a for loop without done"
    return commands


def all_blocks() -> list[Block]:
    return [b for path in doc_files() for b in fenced_blocks(path)]


def all_shell_commands() -> list[Command]:
    return [c for b in all_blocks() if b.lang == "sh" for c in shell_commands(b)]


def package_modules() -> dict[str, Path]:
    """``cardhall.x.y`` → its file, for every module of the four package folders."""
    out = {}
    for folder in PACKAGES:
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(["cardhall", *parts])] = path
    return out


def docstrings(path: Path) -> list[tuple[int, str]]:
    """``(line, text)`` of every docstring of the module at ``path`` (module, classes, functions)."""
    tree = ast.parse(path.read_text())
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            doc = ast.get_docstring(node, clean=True)
            if doc:
                out.append((node.body[0].lineno, doc))
    return out


def literal_blocks(doc: str) -> list[str]:
    """The reST literal blocks (a paragraph ending in ``::``, then an indented block) of ``doc``."""
    blocks = []
    for m in re.finditer(r"::\n\n((?:(?:[ \t]+\S.*)?\n)+)", doc + "\n"):
        blocks.append(textwrap.dedent(m.group(1)).strip("\n"))
    return blocks


# -- checks --------------------------------------------------------------------------------------------
@functools.cache
def cardhall_parser():
    return build_parser()


def parse_cardhall(words: list[str], where: str):
    """``cardhall WORDS`` parsed by the real parser (nothing runs); a usage error fails with its message."""
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            return cardhall_parser().parse_args(words)
    except SystemExit as exc:
        if exc.code == 0 and "--help" in words:
            return None
        raise AssertionError(f"{where}\n  does not parse: {err.getvalue().strip()}") from None


def subcommand_parsers(parser=None, prefix: tuple[str, ...] = ()) -> dict[tuple[str, ...], object]:
    """``("bench", "server")`` → that subcommand's parser, for every subcommand and nested one."""
    import argparse

    parser = parser or cardhall_parser()
    out: dict[tuple[str, ...], object] = {prefix: parser}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out.update(subcommand_parsers(sub, (*prefix, name)))
    return out


def check_cardhall(command: Command, words: list[str]) -> None:
    parse_cardhall(words, command.where())


def check_cardhall_command(command: Command) -> None:
    """``cardhall ...``, ``.venv/bin/cardhall ...``, ``/opt/cardhall/bin/cardhall ...``."""
    check_cardhall(command, list(command.words[1:]))


def strip_environment(words: tuple[str, ...]) -> tuple[dict[str, str], list[str]]:
    """Leading ``NAME=value`` words (a command's environment) and the rest."""
    env, rest = {}, list(words)
    while rest and re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S*", rest[0]):
        name, _, value = rest.pop(0).partition("=")
        env[name] = value
    return env, rest


def check_dev_py(command: Command) -> None:
    """``python3 dev.py serve|cardhall|test ARGS`` (optionally after ``NAME=value`` words): dev.py has
    the subcommand, and ARGS are what ``cardhall serve``, ``cardhall`` or pytest accept."""
    env, words = strip_environment(command.words)
    assert words[:2] == ["python3", "dev.py"], command.where()
    sub, rest = words[2], words[3:]
    assert f'command == "{sub}"' in (ROOT / "dev.py").read_text(), f"{command.where()}\n  dev.py has no {sub!r}"
    if sub == "serve":
        check_cardhall(command, ["serve", *rest])
    elif sub == "cardhall":
        check_cardhall(command, rest)
    else:
        check_pytest_args(command, rest)
    for module in filter(None, env.get("CARDHALL_GAMES", "").split(",")):
        assert importlib.util.find_spec(module) is not None, f"{command.where()}\n  no module {module}"


@functools.cache
def pytest_options() -> frozenset[str]:
    """The option strings ``pytest --help`` lists, with this repository's own (tests/conftest.py)."""
    out = subprocess.run([sys.executable, "-m", "pytest", "--help", "-p", "no:cacheprovider"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60, check=True).stdout
    return frozenset(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", out))


def check_pytest_args(command: Command, args: list[str]) -> None:
    for arg in args:
        if arg.startswith("-"):
            assert arg.split("=")[0] in pytest_options(), f"{command.where()}\n  pytest has no option {arg}"
        else:
            assert (ROOT / arg.split("::")[0]).exists(), f"{command.where()}\n  no such path {arg}"


def check_conformance_runner(command: Command) -> None:
    """``python -m cardhall.protocol.conformance.run ARGS``: ARGS parse (the runner's parser); the command
    itself runs in :func:`test_the_conformance_kit_command_runs`."""
    from cardhall.protocol.conformance import run

    source = Path(run.__file__).read_text()
    for flag in [w for w in command.words[3:] if w.startswith("--")]:
        assert f'"{flag}"' in source, f"{command.where()}\n  the runner has no {flag}"


def check_systemctl(command: Command) -> None:
    """``systemctl VERB [--now] cardhall@N...``: the units are instances of deploy/systemd's template."""
    verb, *rest = command.words[1:]
    assert verb in {"enable", "disable", "start", "stop", "restart", "reload", "status"}, command.where()
    units = [w for w in rest if not w.startswith("-")]
    assert units and all(re.fullmatch(r"cardhall@\d+", u) for u in units), command.where()
    assert (ROOT / "deploy" / "systemd" / "cardhall@.service").is_file()
    assert set(rest) - set(units) <= {"--now"}, command.where()


def check_elsewhere(test: str, marker: str) -> Callable[[Command], None]:
    """A check that says ``test`` (``path::function``) runs the command: the function exists there and
    its file holds ``marker`` (what it runs, as it finds it in the document)."""

    def check(command: Command) -> None:
        path, _, function = test.partition("::")
        text = (ROOT / path).read_text()
        assert f"def {function}(" in text and marker in text, f"{command.where()}\n  {test} does not run it"

    return check


NGINX_TEST = "tests/cluster/test_deploy_files.py::test_the_readme_fills_the_nginx_file_as_the_harness_does"
WHEEL_TEST = "tests/test_wheel.py::installed"
JWT_TEST = "tests/test_docs_examples.py::test_the_jwt_example_mints_a_token_the_server_takes"
COLYSEUS_TEST = "tests/bench/test_colyseus_smoke.py::test_the_comparison_plays_both_servers_without_leaks"
STEPS_TEST = "tests/bench/test_inprocess_smoke.py::test_it_measures_a_window_of_play_with_every_viewer_served"


@dataclass(frozen=True)
class Rule:
    """Commands of ``doc`` (any document when empty) whose text matches ``pattern`` are checked by
    ``check`` (None: the command is run by the test named in ``why``)."""

    pattern: str
    check: Callable[[Command], None] | None
    why: str
    doc: str = ""

    def matches(self, command: Command) -> bool:
        return (not self.doc or command.doc == self.doc) and re.fullmatch(self.pattern, command.text) is not None


RULES = [
    Rule(r"(?:\.venv/bin/|/opt/cardhall/bin/)?cardhall( .*)?", check_cardhall_command, "parsed by cardhall's parser"),
    Rule(r"(?:[A-Z_]+=\S* )*python3 dev\.py (?:serve|cardhall|test)( .*)?", check_dev_py,
         "dev.py's subcommand; its arguments parsed by cardhall's parser or known to pytest"),
    Rule(r"python -m cardhall\.protocol\.conformance\.run .*", check_conformance_runner,
         "run: test_the_conformance_kit_command_runs"),
    Rule(r"redis-server .*", None, "run: test_redis_commands_start_redis"),
    Rule(r"systemctl .*", check_systemctl, "names instances of deploy/systemd/cardhall@.service"),
    Rule(r"sleep \d+|\.\.\.", lambda c: None, "shell: a pause, or the document's 'and so on'"),
    Rule(r"python3 -c .* > /etc/cardhall/jwt\.key", check_elsewhere(JWT_TEST, "/etc/cardhall/jwt.key"),
         f"run: {JWT_TEST}", "deploy/README.md"),
    Rule(r"mkdir -p /etc/cardhall /var/lib/cardhall-nginx|sed .* deploy/nginx/cardhall\.conf > /etc/cardhall/nginx\.conf"
         r"|nginx (-t )?-p /var/lib/cardhall-nginx -c /etc/cardhall/nginx\.conf",
         check_elsewhere(NGINX_TEST, "mkdir -p /etc/cardhall /var/lib/cardhall-nginx"), f"run: {NGINX_TEST}",
         "deploy/README.md"),
    Rule(r"python3 -m pip wheel --no-deps -w dist \.|python3 -m venv /opt/cardhall"
         r"|/opt/cardhall/bin/pip install dist/cardhall-\*\.whl",
         check_elsewhere(WHEEL_TEST, '_pip("wheel", "--no-deps"'), f"run: {WHEEL_TEST}", "deploy/README.md"),
    Rule(r"node bench/colyseus/bench\.js( .*)?", check_elsewhere(COLYSEUS_TEST, '"bench.js"'), f"run: {COLYSEUS_TEST}",
         "docs/LOAD.md"),
    Rule(r"\.venv/bin/python bench/inprocess/steps\.py( .*)?", check_elsewhere(STEPS_TEST, '"steps.py"'),
         f"run: {STEPS_TEST}", "docs/LOAD.md"),
]


def check_toml(block: Block) -> None:
    """A ``toml`` block: it parses, and an entry-point table is the group the game registry reads."""
    from cardhall.engine.plugins import ENTRY_POINT_GROUP

    data = tomllib.loads(block.text)
    groups = data.get("project", {}).get("entry-points", {})
    assert groups, f"{block.doc}:{block.line}: a toml block that is not an entry-point table"
    for group, points in groups.items():
        assert group == ENTRY_POINT_GROUP, f"{block.doc}:{block.line}: group {group!r}, not {ENTRY_POINT_GROUP!r}"
        for target in points.values():
            assert re.fullmatch(r"[\w.]+(:[\w.]+)?", target), f"{block.doc}:{block.line}: entry point {target!r}"


#: the docstrings' literal blocks, by module: how each is checked ("toml", or "run" by a test here)
LITERAL_BLOCKS = {
    "cardhall.clients.client": "run",   # test_the_client_library_headline_example_plays_a_match
    "cardhall.engine.plugins": "toml",  # an entry-point table, as the README's
}


# -- the inventory -------------------------------------------------------------------------------------
def test_the_examples_are_found():
    """The reader sees what is there (a reader that finds nothing would pass everything)."""
    commands = all_shell_commands()
    docs = {c.doc for c in commands}
    assert {"README.md", "deploy/README.md", "docs/LOAD.md", "protocol/conformance/README.md"} <= docs
    assert any(c.words[:3] == ("python3", "dev.py", "serve") for c in commands)
    looped = [c for c in commands if c.doc == "deploy/README.md" and "--node-id" in c.words]
    assert [c.words[c.words.index("--port") + 1] for c in looped] == ["8081", "8082", "8083"]
    assert any(b.lang == "toml" for b in all_blocks())


def test_every_shell_command_is_run_or_checked():
    unknown, failed = [], []
    for command in all_shell_commands():
        rule = next((r for r in RULES if r.matches(command)), None)
        if rule is None:
            unknown.append(command.where())
            continue
        if rule.check is not None:
            try:
                rule.check(command)
            except AssertionError as exc:
                failed.append(str(exc))
    assert not unknown, ("commands in the docs that nothing runs or checks (add a rule to RULES in "
                         "tests/test_docs_examples.py):\n" + "\n".join(unknown))
    assert not failed, "\n".join(failed)


def test_every_block_is_a_kind_that_is_checked():
    """``sh`` blocks are taken apart above, ``toml`` ones checked and ``json`` ones parsed here, ``text``
    ones are output, not run, ``cards`` ones (the rules pages) checked where the pages are served; a block in any other language (``python`` included) or none needs its
    own test before it may appear."""
    others = []
    for block in all_blocks():
        if block.lang == "toml":
            check_toml(block)
        elif block.lang == "json":
            json.loads(block.text)
        elif block == jwt_minting_block():
            pass  # run by test_the_jwt_example_mints_a_token_the_server_takes
        elif block.lang == "cards":
            pass  # a rules page's cards: tests/server/test_rules_pages.py checks every row's card codes
        elif block.lang not in ("sh", "text"):
            others.append(f"{block.doc}:{block.line}: a ```{block.lang} block")
    assert not others, "blocks nothing here runs or checks:\n" + "\n".join(others)


def test_every_docstring_literal_block_is_run_or_checked():
    seen = {}
    for module, path in package_modules().items():
        for _, doc in docstrings(path):
            for block in literal_blocks(doc):
                seen[module] = block
    assert set(seen) == set(LITERAL_BLOCKS), (
        f"docstring literal blocks in {sorted(set(seen) - set(LITERAL_BLOCKS))} are neither run nor checked; "
        f"listed but gone: {sorted(set(LITERAL_BLOCKS) - set(seen))}")
    for module, kind in LITERAL_BLOCKS.items():
        if kind == "toml":
            check_toml(Block(module, 0, "toml", seen[module]))


def inline_commands() -> list[tuple[str, str]]:
    """``(where, command)`` of every inline ``cardhall ...``: in backticks in the Markdown files, in double
    backticks in the packages' docstrings."""
    out = []
    for path in doc_files():
        for m in re.finditer(r"(?<!`)`((?:\.venv/bin/)?cardhall [a-z][^`]*)`(?!`)", path.read_text()):
            out.append((str(path.relative_to(ROOT)), m.group(1)))
    for module, path in package_modules().items():
        for _, doc in docstrings(path):
            for m in re.finditer(r"``((?:\.venv/bin/)?cardhall [a-z][^`]*)``", doc):
                out.append((module, m.group(1)))
    return out


def test_every_inline_cardhall_command_names_real_subcommands_and_flags():
    """An inline command may leave out required arguments and show placeholders (``URL``, ``[--seat
    N]``, ``PATH...``): its subcommand words must exist and each ``--flag`` must be one of that
    subcommand's options."""
    parsers = subcommand_parsers()
    found, wrong = 0, []
    for where, text in inline_commands():
        words = text.replace("[", " ").replace("]", " ").split()[1:]
        path: tuple[str, ...] = ()
        while words and (*path, words[0]) in parsers:
            path = (*path, words.pop(0))
        has_subcommands = any(len(p) > len(path) and p[:len(path)] == path for p in parsers)
        if not path or (words and has_subcommands and re.fullmatch(r"[a-z]+", words[0])):
            wrong.append(f"{where}: `{text}`: no such subcommand")
            continue
        options = parsers[path]._option_string_actions
        for word in words:
            flag = word.split("=")[0].rstrip(",.;:)")
            if flag.startswith("--") and flag not in options:
                wrong.append(f"{where}: `{text}`: cardhall {' '.join(path)} has no {flag}")
        found += 1
    assert found > 30 and not wrong, "\n".join(wrong)


# -- doctests --------------------------------------------------------------------------------------------
DOCTEST_MODULES = sorted(m for m, p in package_modules().items() if ">>>" in p.read_text())


@pytest.mark.parametrize("module", DOCTEST_MODULES)
def test_doctests(module):
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS, report=True)
    assert result.failed == 0, f"{result.failed} of {module}'s doctests failed (printed above)"


# -- run against a real server ---------------------------------------------------------------------------
async def _run(argv: list[str], timeout: float = 60, **kwargs) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(*argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT,
                                                **kwargs)
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


def headline_example() -> str:
    """The code block of ``cardhall.clients.client``'s docstring."""
    from cardhall.clients import client

    (block,) = literal_blocks(client.__doc__ or "")
    return block


async def test_the_client_library_headline_example_plays_a_match():
    """The example as it is written, its default URL replaced by a live server's: it finishes (solo
    play waits for its ``continue``s) and prints the match's result."""
    code = headline_example()
    assert 'url="ws://127.0.0.1:8000/ws"' in code
    async with running_server() as srv:
        status, out, err = await _run([sys.executable, "-c", code.replace("ws://127.0.0.1:8000/ws", srv.url)])
    assert status == 0, err
    result = ast.literal_eval(out.strip().splitlines()[-1])
    assert result["winners"] and result["hands"] >= 1, out


async def test_the_conformance_kit_command_runs():
    """protocol/conformance/README.md's command, URL and key filled in: every case passes."""
    (command,) = [c for c in all_shell_commands() if c.words[:3] == ("python", "-m", "cardhall.protocol.conformance.run")]
    words = list(command.words)
    async with running_server(replace(TEST_SETTINGS, operator_key="docs-key")) as srv:
        argv = [w.replace("ws://127.0.0.1:8000/ws", srv.url) for w in words]
        argv[argv.index("--operator-key") + 1] = "docs-key"
        status, out, err = await _run([sys.executable, *argv[1:]], timeout=120)
    assert status == 0, out[-3000:] + err[-3000:]
    assert re.search(r"(\d+) of \1 passed", out), out[-2000:]


def readme_table_command(name: str) -> str:
    """The README's command table entry starting ``cardhall NAME``."""
    text = (ROOT / "README.md").read_text()
    m = re.search(rf"^\| `(cardhall {re.escape(name)}[^`]*)` \|", text, re.M)
    assert m, f"the README's table has no `cardhall {name}`"
    return m.group(1)


def test_the_readme_simulate_command_runs(capsys):
    command = readme_table_command("simulate")
    filled = command.replace(" G ", " loco_poker ").replace(" N ", " 3 ").replace(" M", " 2")
    assert cardhall_main([*filled.split()[1:], "--seed", "docs"]) == 0
    out = capsys.readouterr().out
    assert "2 matches, 0 with violations or unfinished" in out


def test_the_readme_phh_replay_command_runs(capsys):
    require(SHARED_PHH.is_dir(), f"the shared hand histories are not at {SHARED_PHH} (set CARDHALL_PHH_DIR)")
    command = readme_table_command("phh replay")
    example = re.search(r"e\.g\. `\.\./shared/phh/(\w+)`", (ROOT / "README.md").read_text())
    assert command == "cardhall phh replay PATH..." and example, command
    assert cardhall_main(["phh", "replay", str(SHARED_PHH / example.group(1))]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) > 10 and all(line.startswith("match ") for line in lines[:-1]), lines[-3:]


async def test_redis_commands_start_redis():
    """Each ``redis-server`` command of the docs starts a Redis with its options (its ``--dir`` moved to a
    temporary directory, no TCP port: a Unix socket of its own), which then answers PING."""
    commands = [c for c in all_shell_commands() if c.words[0] == "redis-server"]
    assert commands
    require(REDIS_SERVER is not None, "redis-server is not installed (set CARDHALL_REDIS_SERVER)")
    assert REDIS_SERVER is not None
    for command in commands:
        with tempfile.TemporaryDirectory() as tmp:
            args = list(command.words[1:])
            if "--dir" in args:
                args[args.index("--dir") + 1] = tmp
            sock = f"{tmp}/redis.sock"
            proc = await asyncio.create_subprocess_exec(
                REDIS_SERVER, *args, "--port", "0", "--unixsocket", sock, "--save", "", cwd=tmp,
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            try:
                assert proc.stdout is not None
                async with asyncio.timeout(20):
                    seen = b""
                    while b"ready to accept connections" not in seen.lower():
                        line = await proc.stdout.readline()
                        assert line, f"{command.where()}\n  redis-server stopped: {seen.decode()[-2000:]}"
                        seen += line
                reader, writer = await asyncio.open_unix_connection(sock)
                writer.write(b"PING\r\n")
                assert await asyncio.wait_for(reader.readline(), 10) == b"+PONG\r\n"
                writer.close()
            finally:
                proc.terminate()
                await proc.wait()


def jwt_minting_block() -> Block:
    """deploy/README.md's one ``python`` block: minting a token for ``cardhall serve --jwt-key``."""
    (block,) = [b for b in fenced_blocks(ROOT / "deploy" / "README.md") if b.lang == "python"]
    assert "jwt.encode(" in block.text, block
    return block


async def test_the_jwt_example_mints_a_token_the_server_takes(tmp_path):
    """deploy/README.md, "Putting cardhall behind your accounts": its secret command and its minting
    block run as written (the key file's path moved to a temporary one), and a server started with
    the section's ``cardhall serve`` options takes the token: ``welcome`` with the account's player."""
    from cardhall.server.auth import public_id

    key = str(tmp_path / "jwt.key")
    commands = [c for c in all_shell_commands() if c.doc == "deploy/README.md" and "/etc/cardhall/jwt.key" in c.text]
    (secret,) = [c for c in commands if c.words[0] == "python3"]
    (serve,) = [c for c in commands if c.words[0].endswith("/cardhall")]
    code_at = secret.words.index("-c") + 1
    status, out, err = await _run([sys.executable, "-c", secret.words[code_at]])
    assert status == 0 and secret.words[code_at + 1:] == (">", "/etc/cardhall/jwt.key"), err
    (tmp_path / "jwt.key").write_text(out)
    args = parse_cardhall(list(serve.words[1:]), serve.where())
    code = jwt_minting_block().text.replace("/etc/cardhall/jwt.key", key)
    status, out, err = await _run([sys.executable, "-c", code])
    assert status == 0, err
    token = out.strip()
    settings = replace(TEST_SETTINGS, jwt_key=key, jwt_issuer=args.jwt_issuer, jwt_audience=args.jwt_audience)
    async with running_server(settings) as srv:
        from cardhall.clients.client import Client

        async with Client(srv.url) as client:
            welcome = await client.request({"type": "hello", "auth": token})
    assert (welcome["player"], welcome["name"]) == (public_id("https://accounts.example", "user-4711"), "Ann")
