#!/usr/bin/env python3
"""Developer entry point: needs nothing but Python 3.11+.

    python3 dev.py serve [cardhall serve options]   run the service (in-memory store)
    python3 dev.py test [pytest options]            run the test suite (in parallel: test_workers)
    python3 dev.py cardhall ARGS...                  any other cardhall subcommand

Each command first creates ``.venv`` and installs the project with its test
extras when that is missing, or when ``pyproject.toml`` or the set of the
package's files changed since. The install is editable in setuptools' strict
mode: ``.venv`` sees a tree of links to the repository's real files (under
``build/``), so edits show at once, type checkers and other static tools read
the real files, and only an added or removed file needs the re-install that
this script does by itself. ``test`` keeps compiled bytecode under
``.venv/pycache`` (``PYTHONPYCACHEPREFIX``, even where ``PYTHONDONTWRITEBYTECODE``
is set), so the suite's many Python processes do not each compile every module.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
STAMP = VENV / ".cardhall-installed"


#: the repository's folders that are subpackages of ``cardhall`` (pyproject.toml)
PACKAGE_DIRS = ("engine", "protocol", "server", "clients")


def _install_digest() -> str:
    """pyproject.toml and the names of the package's files: what the link tree depends on."""
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes())
    for folder in PACKAGE_DIRS:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(str(path.relative_to(ROOT)).encode() + b"\0")
    return digest.hexdigest()


def ensure_env() -> None:
    """Create the virtual environment and install the project when needed."""
    if not (BIN / "python").exists():
        print("dev.py: creating .venv", file=sys.stderr)
        venv.EnvBuilder(with_pip=True).create(VENV)
    digest = _install_digest()
    if STAMP.exists() and STAMP.read_text() == digest:
        return
    print("dev.py: installing cardhall and its test dependencies into .venv", file=sys.stderr)
    pip = [str(BIN / "python"), "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    subprocess.run(pip + ["--upgrade", "pip"], check=True)
    subprocess.run(pip + ["--config-settings", "editable_mode=strict", "-e", f"{ROOT}[test]"], check=True)
    STAMP.write_text(digest)


def _run(argv: list[str], cwd: Path | None = None) -> int:
    """Become ``argv`` (exec): signals such as SIGTERM reach the program itself,
    not a parent that would die and leave it running. Windows has no exec that
    keeps the process, so there it runs as a child and its status is returned."""
    if cwd is not None:
        os.chdir(cwd)
    if os.name == "nt":
        return subprocess.call(argv)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(argv[0], argv)
    return 127  # not reached


def test_workers(args: list[str]) -> list[str]:
    """The pytest-xdist options ``test`` adds to the pytest ``args`` given: ``-n W --dist loadfile``
    (each test file in one worker, so a module's server is started once), W one more than the
    machine's cores, at most 8 (the suite's tests mostly wait on servers and browsers: one more
    worker keeps every core busy); none when the caller chose (``-n``, ``-p no:xdist``) or needs
    one process (``-s``, ``--capture``, ``--pdb``, ``--trace``).

    >>> test_workers(["tests/engine", "-x"])[2:], test_workers(["-s"]), test_workers(["-n", "1"])
    (['--dist', 'loadfile'], [], [])
    """
    for i, arg in enumerate(args):
        if arg in {"-s", "--pdb", "--trace"} or arg.startswith(("-n", "--numprocesses", "--capture", "-pno:xdist")):
            return []
        if arg == "-p" and args[i + 1:i + 2] == ["no:xdist"]:
            return []
    return ["-n", str(min(8, (os.cpu_count() or 1) + 1)), "--dist", "loadfile"]


def main(argv: list[str]) -> int:
    if not argv or argv[0] in {"-h", "--help", "help"}:
        print(__doc__)
        return 0
    command, rest = argv[0], argv[1:]
    ensure_env()
    if command == "setup":
        return 0
    if command == "test":  # pytest from the repository (its rootdir and configuration)
        # The suite starts a few hundred Python processes (servers, CLI commands, a wheel's venv):
        # each reuses the bytecode the first one compiled, kept under .venv, not beside the sources.
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        os.environ.setdefault("PYTHONPYCACHEPREFIX", str(VENV / "pycache"))
        return _run([str(BIN / "python"), "-m", "pytest", *test_workers(rest), *rest], cwd=ROOT)
    if command == "serve":
        return _run([str(BIN / "cardhall"), "serve", *rest])
    if command == "cardhall":  # paths in ARGS are the caller's: stay in the caller's directory
        return _run([str(BIN / "cardhall"), *rest])
    print(f"dev.py: unknown command {command!r}\n{__doc__}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
