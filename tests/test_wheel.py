"""The wheel as a user gets it: built, installed without extras into a fresh
virtual environment, and every installed command run from outside the repository.

One module-scoped environment serves every check: the wheel is built from a
copy of the files the build reads (pyproject.toml, README.md and the package
folders; a normal isolated build, so the build backend comes from PyPI as for
anyone), then installed with ``pip install WHEEL`` (dependencies from PyPI;
pip's cache makes later runs quick) into a venv of its own. Every command
runs there with the working directory outside the repository and no
``PYTHONPATH``, so nothing can come from the source tree.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tomllib
import urllib.error
import urllib.request
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import pytest

from cardhall.clients.load.probe import free_port
from tests.conftest import require, until

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
VERSION = PYPROJECT["project"]["version"]
#: ``cardhall.engine`` -> ``engine`` ...: the folders the wheel is built from
PACKAGE_DIRS: dict[str, str] = PYPROJECT["tool"]["setuptools"]["package-dir"]
COMMANDS = ("phh", "simulate", "bench", "serve", "play", "bot", "loadtest")
#: the real hand histories (as tests/engine/test_phh_real_hands.py finds them)
SHARED_PHH = Path(os.environ.get("CARDHALL_PHH_DIR") or ROOT.parent / "shared" / "phh")
#: installed modules that need an extra to import, and the extra's library
NEEDS_EXTRA = {"cardhall.protocol.schemas": "jsonschema"}
#: seconds any one step may take (a cold pip cache downloads every dependency)
STEP = 300


@dataclass
class Installed:
    """The built wheel and the venv it is installed in."""

    wheel: Path
    venv: Path
    python: Path
    bin: Path
    site: Path
    work: Path  # a working directory outside the repository
    build_log: str  # what ``pip wheel -v`` printed: the build backend's own output included

    def env(self) -> dict[str, str]:
        """The environment for commands: this venv first on PATH, nothing pointing at the source tree."""
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
        env["PATH"] = f"{self.bin}{os.pathsep}{env.get('PATH', '')}"
        env["VIRTUAL_ENV"] = str(self.venv)
        env.pop("CARDHALL_REDIS_URL", None)
        return env

    def run(self, *args: str, timeout: float = 60, check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run ``args`` (``args[0]`` a name in the venv's bin) from :attr:`work`; returns the finished process."""
        proc = subprocess.run([str(self.bin / args[0]), *args[1:]], cwd=self.work, env=self.env(),
                              capture_output=True, text=True, timeout=timeout)
        if check:
            assert proc.returncode == 0, f"{' '.join(args)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
        return proc


def _copy_sources(dest: Path) -> None:
    """The files the build reads, without caches or build leftovers."""
    dest.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, dest / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "node_modules")
    for folder in PACKAGE_DIRS.values():
        shutil.copytree(ROOT / folder, dest / folder, ignore=ignore)


def _pip(*args: str) -> str:
    """Run pip ``args``; its output (stdout, then stderr). Fails the test when pip fails."""
    proc = subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", *args],
                          capture_output=True, text=True, timeout=STEP)
    assert proc.returncode == 0, f"pip {' '.join(args)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """Build the wheel, create a venv, install the wheel without extras."""
    base = tmp_path_factory.mktemp("wheel")
    src, dist, venv, work = base / "src", base / "dist", base / "venv", base / "work"
    _copy_sources(src)
    build_log = _pip("wheel", "--no-deps", "-v", "-w", str(dist), str(src))  # -v: the backend's warnings shown
    (wheel,) = dist.glob("cardhall-*.whl")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=STEP)
    bin_dir = venv / ("Scripts" if os.name == "nt" else "bin")
    python = bin_dir / "python"
    _pip("--python", str(python), "install", "-q", str(wheel))
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    work.mkdir()
    return Installed(wheel, venv, python, bin_dir, site, work, build_log)


def _wheel_names(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as z:
        return z.namelist()


def test_the_wheel_installs_only_the_cardhall_package(installed: Installed):
    names = _wheel_names(installed.wheel)
    top = {PurePosixPath(n).parts[0] for n in names}
    assert top == {"cardhall", f"cardhall-{VERSION}.dist-info"}
    assert "cardhall/__init__.py" not in names  # a namespace package
    # what pip put in site-packages beyond the dependencies' own files
    probe = (
        "import importlib.metadata as m, json, pathlib\n"
        "theirs = set()\n"
        "for d in m.distributions():\n"
        "    if d.metadata['Name'] != 'cardhall':\n"
        "        theirs |= {pathlib.PurePath(f).parts[0] for f in d.files or ()}\n"
        "print(json.dumps(sorted(theirs)))\n"
    )
    theirs = set(json.loads(subprocess.run([str(installed.python), "-c", probe], capture_output=True, text=True,
                                           check=True, cwd=installed.work).stdout))
    entries = {p.name for p in installed.site.iterdir()} - {"__pycache__"}
    assert entries - theirs == top
    assert not {"engine", "server", "protocol", "clients"} & entries


def test_the_build_prints_no_setuptools_warning(installed: Installed):
    """Every file is placed as pyproject.toml says, none by setuptools' guesswork: no
    "Package would be ignored" (a data folder swept in as a package) nor deprecation."""
    warned = [line.strip() for line in installed.build_log.splitlines()
              if re.search(r"would be ignored|SetuptoolsDeprecationWarning|BuildBackendWarning|SetuptoolsWarning", line)]
    assert "Created wheel for cardhall" in installed.build_log, installed.build_log[-3000:]
    assert warned == [], "\n".join(warned)


def test_the_wheel_holds_the_package_data(installed: Installed):
    names = set(_wheel_names(installed.wheel))
    for package, folder in PACKAGE_DIRS.items():  # every module of every package
        prefix = package.replace(".", "/")
        modules = {f"{prefix}/{p.relative_to(ROOT / folder).as_posix()}" for p in (ROOT / folder).rglob("*.py")
                   if "__pycache__" not in p.parts and (p.parent / "__init__.py").exists()}
        assert modules - names == set()
    web = {"cardhall/clients/web/" + p.relative_to(ROOT / "clients" / "web").as_posix()
           for p in (ROOT / "clients" / "web").rglob("*") if p.is_file()}
    schemas = {f"cardhall/protocol/schemas/{p.name}" for p in (ROOT / "protocol" / "schemas").glob("*.json")}
    examples = {f"cardhall/protocol/examples/{p.name}" for p in (ROOT / "protocol" / "examples").glob("*.json")}
    assert "cardhall/clients/web/index.html" in web and len(schemas) >= 6 and examples
    assert web - names == set(), "web client files missing from the wheel"
    assert schemas - names == set(), "schemas missing from the wheel"
    assert examples - names == set(), "recorded examples missing from the wheel"
    assert "cardhall/protocol/SPEC.md" in names
    rules = {f"cardhall/engine/games/rules/{p.name}" for p in (ROOT / "engine" / "games" / "rules").glob("*.md")}
    assert "cardhall/engine/games/rules/no_limit_holdem.md" in rules  # each built-in game's rules page
    assert rules - names == set(), "rules pages missing from the wheel"
    assert "cardhall/clients/commands/phh-expected-shared.toml" in names  # cardhall phh replay's expectations


def test_every_installed_module_imports_without_extras(installed: Installed):
    probe = (
        "import importlib, json, pkgutil, cardhall\n"
        "failed, count = {}, 0\n"
        "for info in pkgutil.walk_packages(cardhall.__path__, 'cardhall.'):\n"
        "    count += 1\n"
        "    try:\n"
        "        importlib.import_module(info.name)\n"
        "    except ImportError as exc:\n"
        "        failed[info.name] = exc.name\n"
        "print(json.dumps({'failed': failed, 'count': count, 'path': list(cardhall.__path__)}))\n"
    )
    out = json.loads(subprocess.run([str(installed.python), "-c", probe], capture_output=True, text=True,
                                    check=True, cwd=installed.work, env=installed.env()).stdout)
    assert out["path"] == [str(installed.site / "cardhall")]
    assert out["count"] > 40
    assert out["failed"] == NEEDS_EXTRA


def test_cardhall_help_lists_every_command(installed: Installed):
    out = installed.run("cardhall", "--help").stdout
    for command in COMMANDS:
        assert f"    {command} " in out or f"    {command}\n" in out, f"{command} missing from cardhall --help:\n{out}"


def test_bench_engine_without_pokerkit_says_so_in_one_line(installed: Installed):
    proc = installed.run("cardhall", "bench", "engine", "--games", "no_limit_holdem", "--hands", "1", check=False)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "pokerkit is not installed" in lines[0] and "cardhall[bench]" in lines[0], proc.stderr


def test_phh_replay_of_real_hands(installed: Installed):
    require(SHARED_PHH.is_dir(), f"the shared hand histories are not at {SHARED_PHH} (set CARDHALL_PHH_DIR)")
    proc = installed.run("cardhall", "phh", "replay", "--json", str(SHARED_PHH / "wsop"))
    hands = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(hands) >= 10 and {h["status"] for h in hands} == {"match"}
    # the whole folder: its README's differences named expected by the expectations the wheel ships
    proc = installed.run("cardhall", "phh", "replay", str(SHARED_PHH), timeout=120)
    assert proc.stdout.splitlines()[-1].endswith(" expected differences, 0 unexpected, 1 unchecked, 0 illegal, 0 error")
    assert "phh-expected-shared.toml" in proc.stderr and str(installed.site) in proc.stderr, proc.stderr


# -- against a running server ------------------------------------------------------------
def _get(url: str, timeout: float = 5.0) -> tuple[int, str, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:  # noqa: S310 (loopback)
            return r.status, r.headers.get("content-type", ""), r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers.get("content-type", ""), exc.read()


def _post_json(url: str, body: dict[str, object]) -> tuple[int, dict[str, object]]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as r:  # noqa: S310 (loopback)
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


@dataclass
class Served:
    """A ``cardhall serve`` process of the installed venv."""

    proc: subprocess.Popen[bytes]
    port: int
    log: Path

    @property
    def http(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"


def _serve(installed: Installed, name: str, *args: str) -> Served:
    """Start ``cardhall serve ARGS`` on a free loopback port; return once ``/healthz`` says ok."""
    port = free_port()
    log = installed.work / f"{name}.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([str(installed.bin / "cardhall"), "serve", "--port", str(port), *args], cwd=installed.work,
                                env=installed.env(), stdout=out, stderr=subprocess.STDOUT)
    served = Served(proc, port, log)

    def healthy() -> bool:
        assert proc.poll() is None, f"cardhall serve exited {proc.returncode}"
        try:
            status, _, body = _get(served.http + "/healthz", 1)
        except OSError:  # not listening yet
            return False
        return status == 200 and json.loads(body)["status"] == "ok"

    try:
        asyncio.run(until(healthy, 120, "cardhall serve answering /healthz with ok"))
    except AssertionError as exc:
        proc.kill()
        pytest.fail(f"{exc}:\n{log.read_text()}")
    return served


@pytest.fixture(scope="module")
def server(installed: Installed) -> Iterator[Served]:
    # bots at full speed: the tables these tests create over HTTP have no owner, so the public
    # server's bot think floor would pace them
    served = _serve(installed, "server", "--bot-think-floor", "0")
    yield served
    served.proc.terminate()
    served.proc.wait(20)


def test_serve_answers_and_exits_cleanly_on_sigterm(installed: Installed):
    served = _serve(installed, "sigterm")
    try:
        status, kind, page = _get(served.http + "/")
        assert status == 200 and kind.startswith("text/html") and b"<html" in page
        status, kind, script = _get(served.http + "/web/js/app.js")
        assert status == 200 and "javascript" in kind and script
        status, _, body = _get(served.http + "/api/games")
        assert status == 200 and {g["name"] for g in json.loads(body)["games"]} >= {"no_limit_holdem", "loco_poker"}
        status, kind, page = _get(served.http + "/rules/no_limit_holdem")  # the rules page, read from the wheel's file
        assert status == 200 and kind.startswith("text/html") and b"<h1" in page and b"rules-cards" in page
    finally:
        served.proc.send_signal(signal.SIGTERM)
        code = served.proc.wait(20)
    log = served.log.read_text()
    # uvicorn shuts down gracefully, then raises the signal again so the exit
    # status tells it (-SIGTERM: what service managers count as a clean stop)
    assert code in (0, -signal.SIGTERM), log
    assert "Application shutdown complete" in log and "Finished server process" in log, log
    assert "Traceback" not in log


def test_bot_plays_a_match_at_a_table_created_over_http(installed: Installed, server: Served):
    status, created = _post_json(server.http + "/api/tables", {
        "game": "loco_poker", "seats": 2, "bots": 1, "options": {"pause": 0, "bot_think": 0, "points_to_win": 2}})
    assert status == 201, created
    table = str(created["table"])
    proc = installed.run("cardhall", "bot", "--server", server.ws, "--table", table, "--seat", "1", timeout=120)
    assert "seat 1 (loco_poker" in proc.stdout and "match 1: winners" in proc.stdout, proc.stdout
    status, _, body = _get(f"{server.http}/api/tables/{table}/hands")
    assert status == 200 and body.strip(), "the finished match has no hand history"


def test_loadtest_runs_against_the_server(installed: Installed, server: Served):
    proc = installed.run("cardhall", "loadtest", "--server", server.ws, "--tables", "2", "--seats", "2",
                         "--players", "1", "--spectators", "1", "--think", "0.02", "--warmup", "0.5",
                         "--duration", "2", "--json", timeout=120)
    out = json.loads(proc.stdout)
    assert out["connections"] == out["connections_opened"] == 4
    assert out["actions_per_s"] > 0 and out["events_per_s"] > 0
    assert out["seq_gaps"] == 0


def test_client_library_says_hello_from_the_installed_venv(installed: Installed, server: Served):
    script = (
        "import asyncio, json, sys\n"
        "import cardhall.clients.client as client_module\n"
        "from cardhall.clients.client import Client\n"
        "async def main():\n"
        f"    async with Client({server.ws!r}, codec='json') as c:\n"
        "        welcome = await c.hello('wheel')\n"
        "        await c.ping()\n"
        "        games = await c.games()\n"
        "    return welcome, games\n"
        "welcome, games = asyncio.run(main())\n"
        "print(json.dumps({'player': welcome['player'], 'name': welcome['name'], 'games': len(games['games']),\n"
        "                  'file': client_module.__file__, 'jsonschema': 'jsonschema' in sys.modules}))\n"
    )
    proc = installed.run("python", "-c", script, timeout=30)
    out = json.loads(proc.stdout)
    assert out["name"] == "wheel" and out["player"] and out["games"] >= 5
    assert Path(out["file"]).is_relative_to(installed.site)
    assert out["jsonschema"] is False
