"""The repository's layout agrees with what setuptools installs and with what the code imports.

* ``[tool.setuptools] packages`` in pyproject.toml names exactly the folders
  with an ``__init__.py`` under the package folders (``engine/`` is
  ``cardhall.engine``, per ``[tool.setuptools.package-dir]``), and no folder
  holds Python modules without one (it would be left out of the wheel);
* no Python file imports the bare top-level names ``engine``, ``server``,
  ``protocol``, ``clients`` (the installed package is ``cardhall``): every
  ``import``/``from`` statement anywhere in a file (inside functions and
  ``TYPE_CHECKING`` blocks too) and every ``importlib.import_module`` of a
  literal name;
* the dependencies in pyproject.toml are the libraries the code imports: each
  third-party module imported by the package comes from a declared
  distribution, and each core dependency is imported (or is on the short list
  of those a dependency loads by itself).
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]
#: ``cardhall.engine`` -> ``engine`` ...
PACKAGE_DIRS: dict[str, str] = SETUPTOOLS["package-dir"]
BARE = {Path(folder).parts[0] for folder in PACKAGE_DIRS.values()}
SKIP_PARTS = {"__pycache__", "node_modules", ".venv", "build"}

#: core dependencies no module of ours imports: what a dependency loads by itself when installed
LOADED_BY_DEPENDENCIES = {
    "httptools": "uvicorn's HTTP parser (uvicorn picks it when installed)",
}


def python_files() -> list[Path]:
    """Every Python file of the package folders, tests/ and dev.py."""
    files = [ROOT / "dev.py"]
    for folder in [*PACKAGE_DIRS.values(), "tests"]:
        files += [p for p in sorted((ROOT / folder).rglob("*.py")) if not SKIP_PARTS & set(p.parts)]
    return files


def imported_names(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """``(line, dotted name)`` of every absolute import in ``tree``: ``import``
    and ``from`` statements at any depth, and ``importlib.import_module`` /
    ``__import__`` calls whose first argument is a string literal."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and node.module:
                yield node.lineno, node.module
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name in ("import_module", "__import__"):
                yield node.lineno, node.args[0].value


def parse(path: Path) -> ast.AST:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def test_the_packages_list_names_every_package_folder():
    listed = set(SETUPTOOLS["packages"])
    found: set[str] = set()
    without_init: list[str] = []
    for package, folder in PACKAGE_DIRS.items():
        base = ROOT / folder
        for init in base.rglob("__init__.py"):
            if not SKIP_PARTS & set(init.parts):
                found.add(".".join([package, *init.parent.relative_to(base).parts]))
        for module in base.rglob("*.py"):
            if not SKIP_PARTS & set(module.parts) and not (module.parent / "__init__.py").exists():
                without_init.append(str(module.relative_to(ROOT)))
    assert not without_init, f"Python modules in folders without __init__.py (not installed): {without_init}"
    assert sorted(found - listed) == [], "package folders missing from [tool.setuptools] packages"
    assert sorted(listed - found) == [], "[tool.setuptools] packages lists folders that are not packages"
    assert set(PACKAGE_DIRS) <= listed


def test_the_package_folders_are_the_top_level_folders_named_in_the_checks():
    assert BARE == {"engine", "server", "protocol", "clients"}


def test_no_file_imports_the_bare_top_level_names():
    offences = []
    for path in python_files():
        for line, name in imported_names(parse(path)):
            if name.split(".")[0] in BARE:
                offences.append(f"{path.relative_to(ROOT)}:{line}: {name}")
    assert offences == [], "imports of the bare folder names (use cardhall.<folder>):\n" + "\n".join(offences)


def test_the_import_check_sees_nested_and_type_checking_imports():
    tree = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from server.hall import Hall\n"
        "def f():\n    import engine.cards\n    importlib.import_module('clients.cli')\n"
        "from . import protocol\n"
    )
    assert [name for _, name in imported_names(tree)] == ["typing", "server.hall", "engine.cards", "clients.cli"]


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _third_party_imports() -> dict[str, list[str]]:
    """Top-level third-party module -> the package files importing it."""
    stdlib = sys.stdlib_module_names
    out: dict[str, list[str]] = {}
    for folder in PACKAGE_DIRS.values():
        for path in sorted((ROOT / folder).rglob("*.py")):
            if SKIP_PARTS & set(path.parts):
                continue
            for _, name in imported_names(parse(path)):
                top = name.split(".")[0]
                if top not in stdlib and top != "cardhall" and top != "__future__":
                    out.setdefault(top, []).append(str(path.relative_to(ROOT)))
    return out


def test_the_dependencies_are_what_the_code_imports():
    core = {_normal(Requirement(r).name) for r in PYPROJECT["project"]["dependencies"]}
    extras = {_normal(Requirement(r).name) for reqs in PYPROJECT["project"]["optional-dependencies"].values()
              for r in reqs}
    distributions = importlib.metadata.packages_distributions()
    imported: dict[str, list[str]] = {}
    for module, files in _third_party_imports().items():
        names = distributions.get(module)
        if not names:
            pytest.fail(f"{module} (imported by {files[0]}) is not installed in this environment")
        for dist in names:
            imported.setdefault(_normal(dist), []).extend(files)
    undeclared = {dist: files[0] for dist, files in imported.items() if dist not in core | extras}
    assert undeclared == {}, "imported but not declared in pyproject.toml"
    unused = core - set(imported) - set(LOADED_BY_DEPENDENCIES)
    assert unused == set(), "core dependencies nothing imports (remove them, or say why in LOADED_BY_DEPENDENCIES)"
    optional = set(imported) - core
    # what only an extra provides is imported inside functions or guarded, never by the client library
    assert optional <= {"pokerkit", "jsonschema", "referencing"}, optional
