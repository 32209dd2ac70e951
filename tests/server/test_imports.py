"""The shape of ``server/``, read from its source with ``ast``: no import cycle
among ``cardhall.server.*`` modules (imports under ``TYPE_CHECKING`` and
inside functions count), the table machine free of I/O, small modules.

An import of ``a.b.c`` also runs the ``__init__`` of ``a.b``: each module
depends on its parent packages too, so a package that imports its own
submodules back would be a cycle here as it is for Python.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import cardhall.server

SERVER = Path(cardhall.server.__file__).resolve().parent
PREFIX = "cardhall.server"
#: longest module allowed, in lines
MAX_LINES = 500

#: what the machine may import from ``cardhall.server``: itself and the stored format
MACHINE_MAY_IMPORT = (f"{PREFIX}.table", f"{PREFIX}.store.format")
#: standard modules of clocks, event loops, sockets and threads (the machine gets the time as an argument)
IO_MODULES = {"asyncio", "time", "socket", "selectors", "threading", "random", "uvloop", "redis", "starlette",
              "uvicorn", "websockets"}


def _name(path: Path) -> str:
    parts = list(path.relative_to(SERVER).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([PREFIX, *parts])


MODULES = {_name(p): p for p in sorted(SERVER.rglob("*.py"))}
#: the table machine: every module of ``server/table/`` but the actor, what it reaches its host through,
#: how it answers joins once written (it reads the clock and the store's stream) and its timer slot on the loop
MACHINE = {_name(p) for p in (SERVER / "table").glob("*.py")} - {
    f"{PREFIX}.table.actor", f"{PREFIX}.table.host", f"{PREFIX}.table.answers", f"{PREFIX}.table.alarm"}


def _imports(name: str, path: Path) -> set[str]:
    """Every module ``name`` imports, anywhere in it (``from x import y``: ``x``,
    and ``x.y`` when that is a module)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            out.add(base)
            out.update(f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in MODULES)
    return out


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for name, path in MODULES.items():
        edges = set()
        for target in _imports(name, path):
            parts = target.split(".")
            for i in range(3, len(parts) + 1):  # the module and its parent packages under cardhall.server
                prefix = ".".join(parts[:i])
                if prefix in MODULES and prefix != name:
                    edges.add(prefix)
        parents = name.split(".")
        edges |= {".".join(parents[:i]) for i in range(3, len(parents))} - {name}
        graph[name] = edges
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph``, as the modules around it, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_the_checker_finds_a_cycle_and_reads_type_checking_and_function_imports(tmp_path):
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None
    source = tmp_path / "x.py"
    source.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from cardhall.server.hall import Hall\n"
                      "def f():\n    import cardhall.server.session\n")
    assert {f"{PREFIX}.hall", f"{PREFIX}.session"} <= _imports(f"{PREFIX}.x", source)


def test_no_import_cycle_in_server():
    graph = _graph()
    assert f"{PREFIX}.hall" in graph[f"{PREFIX}.session"]  # the graph is the real one
    cycle = _cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


@pytest.mark.parametrize("name", sorted(MACHINE))
def test_the_table_machine_does_no_io(name):
    imported = _imports(name, MODULES[name])
    io = {m for m in imported if m.split(".")[0] in IO_MODULES}
    assert not io, f"{name} imports {sorted(io)}"
    server = {m for m in imported if m.startswith(PREFIX + ".")
              and not any(m == ok or m.startswith(ok + ".") for ok in MACHINE_MAY_IMPORT)}
    assert not server, f"{name} imports {sorted(server)} (the hall, store, sessions, connections and fan-out are the actor's)"
    assert f"{PREFIX}.table.actor" not in imported


def test_no_server_module_draws_from_random():
    for name, path in MODULES.items():
        assert "random" not in {m.split(".")[0] for m in _imports(name, path)}, name


@pytest.mark.parametrize("name", sorted(MODULES))
def test_modules_are_small(name):
    lines = len(MODULES[name].read_text().splitlines())
    assert lines <= MAX_LINES, f"{name} has {lines} lines (at most {MAX_LINES})"


#: the service's core: it talks to a :class:`~cardhall.server.topology.Topology`, never to a kind of it
TOPOLOGY_BLIND = [f"{PREFIX}.hall", f"{PREFIX}.session", f"{PREFIX}.http_api", f"{PREFIX}.table.actor"]
#: the Redis topology's modules (the cluster, the Redis store) and the one place that picks a topology
REDIS_TOPOLOGY = (f"{PREFIX}.cluster", f"{PREFIX}.store.redis", f"{PREFIX}.wiring")


def _reach(graph: dict[str, set[str]], start: str) -> set[str]:
    """Every module ``start`` imports, directly or through others."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        for dep in graph.get(todo.pop(), ()):
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return seen


@pytest.mark.parametrize("name", TOPOLOGY_BLIND)
def test_the_core_imports_nothing_of_the_redis_topology(name):
    """The hall, the session, the HTTP API and the actor import no module of
    the cluster or the Redis store, directly or through another module (under
    ``TYPE_CHECKING`` and inside functions included): one delivery path,
    whichever topology the service runs on."""
    graph = _graph()
    assert name in graph
    found = sorted(m for m in _reach(graph, name) if m.startswith(REDIS_TOPOLOGY))
    assert not found, f"{name} reaches {found}"


def test_the_reach_check_sees_an_import_through_another_module():
    graph = {"a": {"b"}, "b": {f"{PREFIX}.cluster.node"}, f"{PREFIX}.cluster.node": set()}
    assert f"{PREFIX}.cluster.node" in _reach(graph, "a")
