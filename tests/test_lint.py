"""The code's habits, checked with every test run: ruff over the whole
repository and mypy over the packages that are held to it (``[tool.ruff]``
and ``[tool.mypy]`` in pyproject.toml say which rules and which packages).

mypy reads the real files through the names the code imports them by
(``cardhall.engine``, ...): a tree of links named like the installed
package is made in a temporary folder (the same shape as the link tree that
``dev.py``'s strict editable install makes), so it works whether the
package is installed editable, strict or not at all.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.conftest import require

ROOT = Path(__file__).resolve().parent.parent
#: the repository's folders that are the subpackages of ``cardhall``
PACKAGE_DIRS = ("engine", "protocol", "server", "clients")


def _tool(name: str) -> str:
    """The tool ``name`` installed beside this Python (the test extra has it)."""
    path = Path(sys.executable).with_name(name)
    found = str(path) if path.exists() else shutil.which(name)
    require(found is not None, f"{name} is not installed (pip install -e '.[test]')")
    assert found is not None
    return found


def test_ruff_finds_nothing():
    result = subprocess.run([_tool("ruff"), "check", "--no-cache", "--output-format", "concise", str(ROOT)],
                            capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]


def test_mypy_finds_nothing(tmp_path):
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    packages = config["packages"]
    # the whole server is held to it (not some of its subpackages), with what it imports of the clients
    assert {"cardhall.engine", "cardhall.server", "cardhall.protocol"} <= set(packages), packages
    assert "cardhall.clients" in config.get("modules", []) + packages, config
    silent = [o for o in config.get("overrides", []) if o.get("follow_imports") in ("silent", "skip")]
    quiet = [m for o in silent for m in ([o["module"]] if isinstance(o["module"], str) else o["module"])]
    assert not [m for m in quiet if m.startswith("cardhall.server")], quiet
    tree = tmp_path / "cardhall"
    tree.mkdir()
    for folder in PACKAGE_DIRS:
        (tree / folder).symlink_to(ROOT / folder, target_is_directory=True)
    args = [_tool("mypy"), "--config-file", str(ROOT / "pyproject.toml"), "--no-incremental",
            "--python-executable", sys.executable]  # checks the config's ``packages``
    env = {**os.environ, "MYPYPATH": str(tmp_path)}
    result = subprocess.run(args, capture_output=True, text=True, cwd=tmp_path, env=env)
    if result.returncode != 0:
        pytest.fail("mypy:\n" + result.stdout[-6000:] + result.stderr[-2000:], pytrace=False)
