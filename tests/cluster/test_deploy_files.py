"""The files of ``deploy/`` as an operator uses them.

* ``deploy/nginx/cardhall.conf``: ``nginx -t`` accepts it with only its
  placeholders filled, and the harness runs it in front of a real cluster
  (redis-server, three ``cardhall serve`` processes): HTTP and websockets
  through it, the connections spread over the nodes, a killed node passed over,
  a reload that does not wait for the websockets the old workers hold
  (``worker_shutdown_timeout``, in the main context).
* ``deploy/README.md``'s commands for nginx and for three nodes, run in a
  temporary root (their absolute paths moved into it; stand-ins for the
  programs that would stay running): they make every directory they write to,
  keep nothing under ``/run``, and name ``cardhall`` by its path in the venv.
* ``deploy/Dockerfile``, ``.dockerignore``, ``deploy/compose*.yaml``: what they
  say (parsed: there is no Docker daemon here), the entrypoint and the
  healthcheck run on this machine against a live node on ``CARDHALL_PORT``, the
  command lines they give ``cardhall serve`` parsed by its own parser, the
  build context the ignore file leaves, compose's rendering of the nginx file
  run and compared with the harness's; the image built when a Docker daemon
  answers (the one skip allowed here: there is none on CI).
* ``deploy/systemd/``: ``systemd-analyze verify`` and ``security`` of the unit
  when systemd-analyze is installed; its ``ExecStart`` as systemd itself parses
  it (``systemd --test``, when installed; else the same rules applied here),
  the environment files substituted as systemd does, and the command run with
  a stand-in for the node: the port of any instance, an empty trusted proxy,
  values with spaces.
"""

from __future__ import annotations

import asyncio
import configparser
import contextlib
import io
import json
import os
import pwd
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path
from typing import Any

import httpx
import pytest

from cardhall.clients.cli import build_parser
from cardhall.clients.client import Client
from tests.cluster.conftest import require_cluster_tools
from tests.cluster.harness import DEPLOY, NGINX_CONF, PLACEHOLDERS, ROOT, Cluster, Nginx, Node, render_nginx_conf
from tests.conftest import require, until
from tests.server.conftest import free_port

DOCKERFILE = DEPLOY / "Dockerfile"
COMPOSE = DEPLOY / "compose.yaml"
UNIT = DEPLOY / "systemd" / "cardhall@.service"
ENV_EXAMPLE = DEPLOY / "systemd" / "cardhall.env.example"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def serve_args(argv: list[str]):
    """``argv`` (``["cardhall", "serve", ...]``) parsed by the real ``cardhall`` parser."""
    assert argv[:2] == ["cardhall", "serve"], argv
    args = build_parser().parse_args(argv[1:])
    assert args.command == "serve"
    return args


def code(text: str) -> str:
    """``text`` without its comment lines."""
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))


def nginx_directives(text: str) -> list[tuple[tuple[str, ...], str, list[str]]]:
    """Every directive of the nginx configuration ``text`` (placeholders filled) as ``(context, name,
    arguments)``: ``context`` the blocks it is in (``()``: the main context, ``("http", "upstream")``),
    a block's own directive listed in the context around it; comments dropped, quotes removed."""
    out: list[tuple[tuple[str, ...], str, list[str]]] = []
    context: list[str] = []
    words: list[str] = []
    for token in re.findall(r"""'[^']*'|"[^"]*"|#[^\n]*|[{};]|[^\s{};'"#]+""", text):
        if token.startswith("#"):
            continue
        if token in (";", "{"):
            assert words, f"an empty directive before {token!r}"
            out.append((tuple(context), words[0], words[1:]))
            if token == "{":
                context.append(words[0])
            words = []
        elif token == "}":
            assert not words, words
            context.pop()
        else:
            words.append(token[1:-1] if token[0] in "'\"" else token)
    assert not context and not words, (context, words)
    return out


def nginx_seconds(value: str) -> float:
    """An nginx time (``30s``, ``1m``, ``500ms``, ``2``) in seconds."""
    m = re.fullmatch(r"(\d+)(ms|s|m|h)?", value)
    assert m, value
    return int(m.group(1)) * {"ms": 0.001, "s": 1, None: 1, "m": 60, "h": 3600}[m.group(2)]


def rendered(**kw: Any) -> str:
    """deploy/nginx/cardhall.conf rendered with placeholder values that need no system (directives
    only, nothing run)."""
    values = {"user": "nobody nogroup", "prefix": "/p", "logs": "/l", "listen": "80",
              "nodes": ["127.0.0.1:8081", "127.0.0.1:8082"], **kw}
    return render_nginx_conf(NGINX_CONF.read_text(), **values)


# -- nginx ------------------------------------------------------------------------------
def test_the_nginx_file_has_what_websockets_and_failover_need():
    text = code(NGINX_CONF.read_text())
    header = NGINX_CONF.read_text().split("\n\n")[0]
    for placeholder in PLACEHOLDERS:  # each documented at the top, each used
        assert placeholder in header and placeholder in text, placeholder
    assert re.search(r"^events\s*\{", text, re.M) and re.search(r"^http\s*\{", text, re.M)
    upstream = re.search(r"upstream cardhall \{(.*?)\n    \}", text, re.S)  # its closing brace
    assert upstream and re.search(r"server \{\{NODE\}\} .*max_fails=\d+ fail_timeout=\d+s;", upstream.group(1))
    assert re.search(r"map \$http_upgrade \$connection_upgrade \{\s*default\s+upgrade;\s*''\s+close;\s*\}", text)
    for line in ("proxy_http_version 1.1;", "proxy_set_header Upgrade $http_upgrade;",
                 "proxy_set_header Connection $connection_upgrade;", "proxy_set_header Host $host;",
                 "proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;",
                 "proxy_set_header X-Forwarded-Proto $scheme;",
                 "proxy_next_upstream error timeout http_502 http_503;"):
        assert line in text, line
    assert "non_idempotent" not in text  # a POST that reached a node is never sent to a second one
    # headers are set once, at the server level: a location with its own proxy_set_header inherits none
    locations = dict(re.findall(r"location ((?:= )?\S+) \{(.*?)\}", text, re.S))
    assert set(locations) == {"/ws", "= /metrics", "/"}
    assert all("proxy_set_header" not in body for body in locations.values())
    ws = locations["/ws"]
    assert "proxy_buffering off;" in ws
    assert re.search(r"proxy_read_timeout 1h;", ws) and re.search(r"proxy_send_timeout 1h;", ws)
    assert not re.search(r"^\s*daemon ", text, re.M)  # the harness and compose say `daemon off` on the command line
    # Old workers after a reload are bounded: worker_shutdown_timeout is a main-context directive (this
    # file is the whole configuration, nginx.conf itself: the README runs it with -c), so it is here,
    # outside every block; long enough for a request to finish, short against a websocket's hour.
    directives = nginx_directives(rendered())
    shutdown = [(context, args) for context, name, args in directives if name == "worker_shutdown_timeout"]
    assert len(shutdown) == 1 and shutdown[0][0] == (), shutdown
    assert 5 <= nginx_seconds(shutdown[0][1][0]) <= 120, shutdown
    # and nothing that only a newer nginx than Debian 12's 1.22 knows (compose adds those: below)
    assert not [d for d in directives if d[1] == "resolver" or "resolve" in d[2]]


def test_rendering_fills_only_the_placeholders():
    template = NGINX_CONF.read_text()
    nodes = ["127.0.0.1:9001", "127.0.0.1:9002", "127.0.0.1:9003"]
    out = render_nginx_conf(template, user="u g", prefix="/p", logs="/l", listen="127.0.0.1:9000", nodes=nodes)
    source, rendered = template.splitlines(), out.splitlines()
    assert len(rendered) == len(source) + len(nodes) - 1
    node_line = next(line for line in source if "{{NODE}}" in line and not line.lstrip().startswith("#"))
    assert [line for line in rendered if "max_fails" in line] == [node_line.replace("{{NODE}}", n) for n in nodes]
    untouched = [line for line in source if not any(p in line for p in PLACEHOLDERS) or line.lstrip().startswith("#")]
    assert all(line in rendered for line in untouched)
    assert "{{" not in code(out)
    with pytest.raises(ValueError, match="unfilled placeholder"):
        render_nginx_conf(template + "\nworker_priority {{NICE}};\n", user="u g", prefix="/p", logs="/l",
                          listen="1", nodes=nodes)


def test_nginx_accepts_the_rendered_file():
    require_cluster_tools()
    nginx = Nginx(["127.0.0.1:9001", "127.0.0.1:9002", "127.0.0.1:9003"])
    try:
        nginx.write()
        output = nginx.test()
        assert "syntax is ok" in output and "test is successful" in output, output
    finally:
        nginx.close()


def _uid(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"^Uid:\s+(\d+)", status, re.M).group(1))


async def test_http_and_websockets_through_nginx(cluster: Cluster):
    nginx = cluster.nginx
    async with httpx.AsyncClient(timeout=5) as http:
        health = await http.get(f"{nginx.http}/healthz")
        assert health.status_code == 200 and health.json()["status"] == "ok"
        games = await http.get(f"{nginx.http}/api/games")
        assert games.status_code == 200
        assert {"no_limit_holdem", "avalanche"} <= {g["name"] for g in games.json()["games"]}
        assert (await http.get(f"{nginx.http}/metrics")).status_code == 200

        # least_conn: three websockets opened one after another land on three different nodes
        clients = [await Client(nginx.ws, codec=codec).connect() for codec in ("json", "msgpack", "json")]
        try:
            for i, c in enumerate(clients):
                welcome = await c.hello(f"p{i}")
                assert welcome["type"] == "welcome" and welcome["player"]
                assert (await c.ping())["type"] == "pong"
            per_node = [(await http.get(f"{n.http}/healthz")).json()["connections"] for n in cluster.nodes]
            assert per_node == [1, 1, 1], per_node
        finally:
            for c in clients:
                await c.close()
    # the master runs as this process's user; started as root, its workers as nobody
    assert _uid(nginx.pid) == os.geteuid()
    workers = nginx.workers()
    worker_uid = pwd.getpwnam("nobody").pw_uid if os.geteuid() == 0 else os.geteuid()
    assert workers and {_uid(w) for w in workers} == {worker_uid}


def _refused(nginx: Nginx, node: Node, method: str) -> int:
    """How many ``method`` requests nginx's error log says ``node`` refused."""
    log = (nginx.dir / "error.log").read_text()
    return sum(1 for line in log.splitlines() if "Connection refused" in line and f'request: "{method} ' in line
               and f'upstream: "http://{node.address}/' in line)


async def test_a_killed_node_is_passed_over(cluster: Cluster):
    nginx = cluster.nginx
    dead = cluster.node("n2")
    dead.kill()
    assert dead.returncode == -signal.SIGKILL
    async with httpx.AsyncClient(timeout=5) as http:
        # a POST that the dead node refused goes to another node: it never reached one
        for _ in range(6):
            created = await http.post(f"{nginx.http}/api/tables", json={"game": "no_limit_holdem", "seats": 2})
            assert created.status_code == 201, created.text
        assert _refused(nginx, dead, "POST") >= 1  # tried (then left out for fail_timeout), passed over
        statuses = [(await http.get(f"{nginx.http}/api/games")).status_code for _ in range(12)]
        assert statuses == [200] * 12
        async with Client(nginx.ws, codec="json") as c:
            assert (await c.hello("after"))["type"] == "welcome"
        # past fail_timeout (2 s) nginx tries the node again, and passes it over again: every request
        # meanwhile answered, until its error log shows the node tried (and refused) once more
        before = _refused(nginx, dead, "GET")

        async def tried_again() -> bool:
            assert (await http.get(f"{nginx.http}/api/games")).status_code == 200
            return _refused(nginx, dead, "GET") > before

        await until(tried_again, 30, f"nginx trying {dead.address} again past its fail_timeout")


async def test_nginx_started_by_an_unprivileged_user(cluster: Cluster):
    """As a non-root operator runs it: the whole of nginx as ``nobody`` when the
    tests run as root (otherwise every Nginx of these tests is unprivileged)."""
    run_as = "nobody" if os.geteuid() == 0 else None
    nginx = Nginx([n.address for n in cluster.nodes], run_as=run_as)
    try:
        nginx.start()
        assert _uid(nginx.pid) != 0
        async with httpx.AsyncClient(timeout=5) as http:
            assert (await http.get(f"{nginx.http}/healthz")).status_code == 200
        async with Client(nginx.ws, codec="json") as c:
            assert (await c.hello("unprivileged"))["type"] == "welcome"
        nginx.reload()
        async with httpx.AsyncClient(timeout=5) as http:
            assert (await http.get(f"{nginx.http}/api/games")).status_code == 200
    finally:
        nginx.close()


async def test_a_reload_does_not_wait_for_the_websockets_of_old_workers(make_cluster, tmp_path: Path):
    """After a reload the old workers close what they still hold once ``worker_shutdown_timeout`` has
    passed (the file's own line, set to 1 s instead of its 30 s to keep the test short): a websocket
    opened before the reload is closed by nginx, its client reconnects through a new worker and goes
    on, and no old worker is left. Without the line the old worker stays for as long as the websocket
    (an hour of proxy_read_timeout, for ever with pings)."""
    cluster = await make_cluster(1)
    text = NGINX_CONF.read_text()
    line = re.search(r"^worker_shutdown_timeout \S+;$", text, re.M)
    assert line, "deploy/nginx/cardhall.conf has no worker_shutdown_timeout in its main context"
    conf = tmp_path / "cardhall.conf"
    conf.write_text(text.replace(line.group(0), "worker_shutdown_timeout 1s;"))
    nginx = Nginx([n.address for n in cluster.nodes], conf=conf)
    try:
        nginx.start()
        async with Client(nginx.ws, codec="json", reconnect=True) as c:
            assert (await c.hello("held"))["type"] == "welcome"
            first = c.closed
            assert first is not None
            old = nginx.workers()
            assert old
            nginx.reload()
            await asyncio.wait_for(asyncio.shield(first), 10)  # closed by the old worker after 1 s
            deadline = time.monotonic() + 10
            while nginx.workers() & old and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            assert not nginx.workers() & old, nginx.log_tail()
            await c.wait_ready(timeout=10)
            assert (await c.ping())["type"] == "pong" and c.reconnects >= 1
    finally:
        nginx.close()


# -- Dockerfile -------------------------------------------------------------------------
def dockerfile_instructions(text: str) -> list[tuple[str, str]]:
    """``(INSTRUCTION, arguments)`` of each instruction, continuation lines joined."""
    out: list[tuple[str, str]] = []
    current = ""
    for line in text.splitlines():
        if not current and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.rstrip().endswith("\\"):
            current += line.rstrip()[:-1] + " "
            continue
        current += line
        word, _, rest = current.strip().partition(" ")
        out.append((word.upper(), rest.strip()))
        current = ""
    return out


def runtime_stage() -> list[tuple[str, str]]:
    """The instructions of the Dockerfile's last stage (the image)."""
    steps = dockerfile_instructions(DOCKERFILE.read_text())
    return steps[max(i for i, (op, _) in enumerate(steps) if op == "FROM"):]


def image_env() -> dict[str, str]:
    """The environment the image's ``ENV`` instructions set (``ENV A=1 B=2`` form)."""
    env: dict[str, str] = {}
    for op, args in runtime_stage():
        if op == "ENV":
            for assignment in shlex.split(args):
                name, sep, value = assignment.partition("=")
                assert sep, f"ENV {args}: use the NAME=value form"
                env[name] = value
    return env


def entrypoint() -> list[str]:
    """The image's ``ENTRYPOINT`` (exec form)."""
    return json.loads(dict(runtime_stage())["ENTRYPOINT"])


def run_entrypoint(args: list[str], tmp: Path, **env: str) -> tuple[list[str], bool]:
    """The image's ENTRYPOINT with ``args`` (the image's CMD or compose's ``command``) run here, in the
    image's environment plus ``env``, a stand-in for ``cardhall`` first on PATH: the arguments the
    stand-in got (``cardhall`` first), and whether it replaced the entrypoint's process (``exec``: the
    node is then the container's main process and gets its SIGTERM)."""
    bin_dir, record = tmp / "entry-bin", tmp / "entry.json"
    bin_dir.mkdir(exist_ok=True)
    stub = bin_dir / "cardhall"
    stub.write_text(f"#!{sys.executable}\nimport json, os, sys\n"
                    f"open({str(record)!r}, 'w').write(json.dumps([os.getpid(), 'cardhall', *sys.argv[1:]]))\n")
    stub.chmod(0o755)
    proc = subprocess.Popen([*entrypoint(), *args], env={"PATH": f"{bin_dir}:/usr/bin:/bin", **image_env(), **env})
    assert proc.wait(30) == 0
    pid, *argv = json.loads(record.read_text())
    return argv, pid == proc.pid


def test_the_dockerfile(tmp_path: Path):
    steps = dockerfile_instructions(DOCKERFILE.read_text())
    froms = [args for op, args in steps if op == "FROM"]
    assert froms and all(f.split()[0] == "python:3.11-slim" for f in froms)
    ops = dict(runtime_stage())
    user = ops["USER"].split(":")[0]
    assert user not in ("root", "0")
    # the build reads pyproject.toml, the readme and the package folders, nothing from ../shared
    copies = " ".join(args for op, args in steps if op == "COPY")
    for name in ["pyproject.toml", PYPROJECT["project"]["readme"], *PYPROJECT["tool"]["setuptools"]["package-dir"].values()]:
        assert re.search(rf"(^|\s){re.escape(name)}(\s|$)", copies), f"the Dockerfile does not copy {name}"
    assert "shared" not in copies and ".." not in copies
    runs = " ".join(args for op, args in steps if op == "RUN")
    assert "pip wheel" in runs and "pip install" in runs and "cardhall[" not in runs  # no extras
    # the node listens on CARDHALL_PORT (8000 unless the operator sets it), the port EXPOSE names
    assert image_env()["CARDHALL_PORT"] == ops["EXPOSE"] == "8000"
    argv, exec_ = run_entrypoint(json.loads(ops["CMD"]), tmp_path)
    args = serve_args(argv)
    assert (args.host, args.port) == ("0.0.0.0", 8000) and exec_
    argv, exec_ = run_entrypoint(["--redis-prefix", "hall", "--allow-origin", "https://a.example"], tmp_path,
                                 CARDHALL_PORT="9123")
    args = serve_args(argv)
    assert (args.host, args.port, args.redis_prefix, args.allow_origin) == ("0.0.0.0", 9123, "hall",
                                                                             ["https://a.example"]) and exec_
    health = ops["HEALTHCHECK"]
    assert "/healthz" in health and "curl" not in health and "python" in health


def healthcheck_command() -> list[str]:
    """The HEALTHCHECK's command (exec form)."""
    health = dict(runtime_stage())["HEALTHCHECK"]
    return json.loads(health[health.index("CMD") + 3:])


async def test_the_image_healthcheck_follows_the_port_of_a_live_node(tmp_path: Path):
    """The image's ENTRYPOINT (``cardhall`` the installed one) started here with ``CARDHALL_PORT`` set
    as an operator sets it (``-e CARDHALL_PORT=...``), listening on loopback: the node listens on that
    port, the HEALTHCHECK run in the same environment passes against it, and fails with another
    CARDHALL_PORT or once the node is gone."""
    command = healthcheck_command()
    assert command[0] == "python"
    port = str(free_port())
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "cardhall").symlink_to(Path(sys.executable).parent / "cardhall")
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path), **image_env(), "CARDHALL_PORT": port}

    async def health(**more: str) -> int:
        proc = await asyncio.create_subprocess_exec(sys.executable, *command[1:], env={**env, **more},
                                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return await proc.wait()

    node = await asyncio.create_subprocess_exec(*entrypoint(), "--host", "127.0.0.1", env=env,
                                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while (status := await health()) != 0 and time.monotonic() < deadline:
            assert node.returncode is None, "the node exited"
            await asyncio.sleep(0.2)
        assert status == 0
        async with httpx.AsyncClient(timeout=5) as http:  # the node is on CARDHALL_PORT
            assert (await http.get(f"http://127.0.0.1:{port}/healthz")).status_code == 200
        assert await health(CARDHALL_PORT=str(free_port())) != 0  # the healthcheck asks CARDHALL_PORT
    finally:
        # the node itself (exec): a clean stop ends in the SIGTERM that uvicorn raises again once it
        # has shut down (tests/cluster/harness.py, Node.terminate)
        node.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(node.wait(), 30) == -signal.SIGTERM
    assert await health() != 0


def _dockerignore_rules() -> list[tuple[bool, re.Pattern[str], str]]:
    """``(exclusion, regex, pattern)`` of each line of .dockerignore, compiled as Docker does
    (moby's patternmatcher: ``*`` within one path element, ``**`` any number of them, ``!`` lets a
    path in again; the last matching line decides)."""
    path = ROOT / ".dockerignore"
    rules = []
    for line in (path.read_text() if path.exists() else "").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        exclusion = line.startswith("!")
        pattern = os.path.normpath(line.removeprefix("!").strip()).lstrip("/")
        regex, i = "", 0
        while i < len(pattern):
            if pattern.startswith("**", i):
                i += 2 + pattern.startswith("/", i + 2)
                regex += ".*" if i >= len(pattern) else "(.*/)?"
                continue
            c = pattern[i]
            if c == "[":
                j = pattern.index("]", i)
                regex += pattern[i:j + 1]
                i = j + 1
                continue
            regex += {"*": "[^/]*", "?": "[^/]"}.get(c, re.escape(c))
            i += 1
        rules.append((exclusion, re.compile(f"^{regex}$"), pattern))
    return rules


def dockerignored(path: str, rules: list[tuple[bool, re.Pattern[str], str]]) -> bool:
    """Whether Docker leaves ``path`` (relative, with ``/``) out of the build context."""
    parents = path.split("/")[:-1]
    matched = False
    for exclusion, regex, _ in rules:
        if exclusion != matched:
            continue
        if regex.match(path) or any(regex.match("/".join(parents[:i + 1])) for i in range(len(parents))):
            matched = not exclusion
    return matched


def build_context() -> dict[str, int]:
    """The files ``docker build -f deploy/Dockerfile .`` sends from the repository root (path → size),
    walked as Docker walks it: a left-out folder that no ``!`` line reaches into is not entered."""
    rules = _dockerignore_rules()
    reopened = [pattern for exclusion, _, pattern in rules if exclusion]
    sent: dict[str, int] = {}
    for folder, dirs, files in os.walk(ROOT):
        rel = Path(folder).relative_to(ROOT).as_posix()
        rel = "" if rel == "." else rel + "/"
        dirs[:] = [d for d in dirs if not (dockerignored(rel + d, rules)
                                           and not any(p.startswith(rel + d + "/") for p in reopened))]
        for name in files:
            if not dockerignored(rel + name, rules) and os.path.isfile(os.path.join(folder, name)):
                sent[rel + name] = os.path.getsize(os.path.join(folder, name))
    return sent


def test_the_dockerignore_sends_what_the_dockerfile_copies():
    """The build context with .dockerignore: every file under what the Dockerfile COPYs from it (but
    caches), and nothing else (a checkout's .venv, .git, caches, tests, build outputs stay out)."""
    copied = []
    for op, args in dockerfile_instructions(DOCKERFILE.read_text()):
        if op == "COPY" and "--from=" not in args:
            *sources, _ = shlex.split(args)
            copied += sources
    rules = _dockerignore_rules()
    for path in (".venv/bin/python", ".git/HEAD", ".git/objects/pack/x.pack", "tests/cluster/test_deploy_files.py",
                 "server/__pycache__/app.cpython-311.pyc", "clients/web/node_modules/x/index.js",
                 ".pytest_cache/v/cache/nodeids", "engine/.mypy_cache/x.json", "build/lib/x.py", "dist/x.whl",
                 "cardhall.egg-info/PKG-INFO", "artifacts/run/x.log", "docs/x.md", ".hypothesis/x"):
        assert dockerignored(path, rules), f"{path} is sent to the Docker daemon"
    sent = build_context()
    needed = {f"{source}/{p.relative_to(ROOT / source).as_posix()}" if (ROOT / source).is_dir() else source
              for source in copied
              for p in ((ROOT / source).rglob("*") if (ROOT / source).is_dir() else [ROOT / source])
              if p.is_file() and not {"__pycache__", "node_modules"} & set(p.parts) and p.suffix != ".pyc"}
    assert needed and needed <= set(sent), sorted(needed - set(sent))[:20]
    assert set(sent) <= needed, sorted(set(sent) - needed)[:20]
    assert sum(sent.values()) < 20 * 2**20, f"{sum(sent.values()) / 2**20:.0f} MiB in the build context"


def _docker_daemon() -> bool:
    if shutil.which("docker") is None:
        return False
    try:
        return subprocess.run(["docker", "info"], capture_output=True, timeout=20).returncode == 0
    except subprocess.TimeoutExpired:
        return False


def test_the_image_builds():
    if not _docker_daemon():
        pytest.skip("no Docker daemon answers `docker info` (the image is only checked by parsing)")
    tag = "cardhall-test:deploy"
    build = subprocess.run(["docker", "build", "-f", str(DOCKERFILE), "-t", tag, str(ROOT)], capture_output=True,
                           text=True, timeout=900)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    try:
        helped = subprocess.run(["docker", "run", "--rm", tag, "--help"], capture_output=True, text=True, timeout=120)
        assert helped.returncode == 0 and "--redis" in helped.stdout, helped.stdout + helped.stderr
        uid = subprocess.run(["docker", "run", "--rm", "--entrypoint", "id", tag, "-u"], capture_output=True,
                             text=True, timeout=120)
        assert uid.returncode == 0 and uid.stdout.strip() != "0"
    finally:
        subprocess.run(["docker", "image", "rm", "-f", tag], capture_output=True, timeout=120)


# -- compose.yaml -----------------------------------------------------------------------
def _keys(lines: list[str], indent: int) -> dict[str, tuple[str, list[str]]]:
    """The mapping keys at exactly ``indent`` spaces in ``lines``: each key's
    inline value and the lines under it."""
    out: dict[str, tuple[str, list[str]]] = {}
    under: list[str] = []
    for line in lines:
        m = re.match(rf"^ {{{indent}}}([^\s#][^:]*):(?:\s+(.*))?$", line)
        if m:
            under = []
            out[m.group(1)] = (m.group(2) or "", under)
        elif line.strip() and not line.lstrip().startswith("#"):
            under.append(line)
    return out


def compose_services(path: Path = COMPOSE) -> dict[str, dict[str, Any]]:
    """Each service of compose.yaml (or of ``path``), its ``<<: *anchor`` merged in: ``command`` (a
    list), ``environment`` (a dict), ``volumes`` (a list), ``build`` (a dict, or None), ``image`` and
    ``pull_policy`` (strings, or None).

    With PyYAML: parsed by it. Without it (PyYAML is no dependency of the
    project): read from the file's own layout, which this holds it to: anchors
    and ``services:`` at the left margin, services two spaces in, their keys at
    four (an anchor's at two), lists of ``- item``, ``command`` a JSON flow
    sequence or one folded block scalar (``- >-``), inline values plain words
    (a ``# comment`` after them allowed)."""
    text = path.read_text()
    try:
        import yaml
    except ImportError:
        yaml = None
    if yaml is not None:
        return {name: {"command": s.get("command", []), "environment": s.get("environment", {}),
                       "volumes": s.get("volumes", []), "build": s.get("build"), "image": s.get("image"),
                       "pull_policy": s.get("pull_policy")}
                for name, s in yaml.safe_load(text)["services"].items()}
    top = _keys(text.splitlines(), 0)
    # anchor name -> its keys (value, lines under it, the indent of those lines' keys)
    anchors = {value.removeprefix("&"): {k: (v, lines, 4) for k, (v, lines) in _keys(under, 2).items()}
               for value, under in top.values() if value.startswith("&")}
    services = {}
    for name, (_, lines) in _keys(top["services"][1], 2).items():
        own = {k: (v, under, 6) for k, (v, under) in _keys(lines, 4).items()}
        keys = {**anchors[own.pop("<<")[0].removeprefix("*")], **own} if "<<" in own else own

        inline_command, folded, _ = keys.get("command", ("[]", [], 0))
        if folded:
            assert folded[0].strip() == "- >-", folded[0]
            command = [" ".join(line.strip() for line in folded[1:])]
        else:
            command = json.loads(inline_command)
        env = dict(line.strip().split(": ", 1) for line in keys.get("environment", ("", [], 0))[1])
        volumes = [line.strip().removeprefix("- ") for line in keys.get("volumes", ("", [], 0))[1]]
        build = ({k: v for k, (v, _) in _keys(keys["build"][1], keys["build"][2]).items()}
                 if "build" in keys else None)
        image, pull_policy = ((re.sub(r"\s+#.*$", "", keys[k][0]) or None) if k in keys else None
                              for k in ("image", "pull_policy"))
        services[name] = {"command": command, "environment": env, "volumes": volumes, "build": build,
                          "image": image, "pull_policy": pull_policy}
    return services


def check_one_image_build(services: dict[str, dict[str, Any]], tmp: Path) -> dict[str, Any]:
    """The nodes of a compose file run one image, built once: node1 builds it from deploy/Dockerfile
    (context: the repository) under the name every node runs, and no other service builds anything
    or pulls that name. Returns each node's ``cardhall serve`` arguments: the image's entrypoint run
    with the node's ``command``."""
    nodes = {name: s for name, s in services.items() if name.startswith("node")}
    assert set(nodes) == {"node1", "node2", "node3"}
    builds = {name: s["build"] for name, s in services.items() if s["build"] is not None}
    assert builds == {"node1": {"context": "..", "dockerfile": "deploy/Dockerfile"}}, builds
    image = nodes["node1"]["image"]
    assert image and all(s["image"] == image for s in nodes.values()), {n: s["image"] for n, s in nodes.items()}
    assert all(s["pull_policy"] == "never" for name, s in nodes.items() if name != "node1")
    return {name: serve_args(run_entrypoint(s["command"], tmp)[0]) for name, s in nodes.items()}


def check_redis_persistence(command: list[str]) -> None:
    """A Redis command line of compose: append-only, every write on disk before Redis answers
    (``appendfsync always``, deploy/README.md "Redis: durable tables": acknowledged actions survive a
    crash of the machine too), no RDB snapshots beside it."""
    assert command[0] == "redis-server"
    assert command[command.index("--appendonly") + 1] == "yes"
    assert command[command.index("--appendfsync") + 1] == "always"
    assert command[command.index("--save") + 1] == ""
    readme = " ".join((DEPLOY / "README.md").read_text().split())
    assert "`appendfsync always` makes every acknowledged action durable against a crash of Redis" in readme


def test_compose_runs_redis_three_nodes_and_nginx(tmp_path: Path):
    services = compose_services()
    assert set(services) == {"redis", "node1", "node2", "node3", "nginx"}
    redis = services["redis"]
    check_redis_persistence(redis["command"])
    assert any(str(v).endswith(":/data") for v in redis["volumes"])
    prefixes, urls = set(), set()
    for name, args in check_one_image_build(services, tmp_path).items():
        env = services[name]["environment"]
        assert env["CARDHALL_NODE_ID"] == name
        urls.add(env["CARDHALL_REDIS_URL"])
        prefixes.add(args.redis_prefix)
        assert args.port == 8000 and args.trusted_proxy and args.advertise == f"http://{name}:8000"
    assert len(prefixes) == 1 and urls == {"redis://redis:6379/0"}
    nginx = services["nginx"]
    mounts = [str(v).split(":") for v in nginx["volumes"]]
    assert any((COMPOSE.parent / m[0]).resolve() == NGINX_CONF for m in mounts), mounts


def test_compose_on_a_redis_cluster(tmp_path: Path):
    """deploy/compose-redis-cluster.yaml: six Redis in cluster mode, a one-shot container creating a
    cluster of three masters with one replica each from exactly those six, three nodes that do not
    wait for a replica per commit (with one replica per master a failover would stall them:
    server/STORAGE.md, "Replicas and failover"); each Redis command line accepted by a real
    redis-server."""
    path = DEPLOY / "compose-redis-cluster.yaml"
    services = compose_services(path)
    redises = {f"redis{i}" for i in range(1, 7)}
    assert set(services) == redises | {"redis-cluster-create", "node1", "node2", "node3", "nginx"}
    text = path.read_text()
    addresses = {}
    for name in redises:
        found = re.search(rf"^  {name}:\n(?:    .*\n|\s*\n)*?        ipv4_address: (\S+)$", text, re.M)
        assert found, name
        addresses[name] = found.group(1)
        command = services[name]["command"]
        check_redis_persistence(command)
        assert command[command.index("--cluster-enabled") + 1] == "yes"
        assert int(command[command.index("--cluster-node-timeout") + 1]) <= 15000
    create = services["redis-cluster-create"]["command"][0]
    assert "--cluster-replicas 1" in create and "--cluster-yes" in create
    assert set(re.findall(r"(\d+\.\d+\.\d+\.\d+):6379", create)) == set(addresses.values())
    for name, args in check_one_image_build(services, tmp_path).items():
        url = services[name]["environment"]["CARDHALL_REDIS_URL"]
        assert re.fullmatch(r"redis://(\S+):6379/0", url).group(1) in addresses.values()
        assert args.redis_wait_replicas == 0 and args.advertise == f"http://{name}:8000"
    redis_server = shutil.which("redis-server")
    require(redis_server is not None, "redis-server is not installed (apt-get install redis-server)")
    assert redis_server is not None

    port = free_port()
    proc = subprocess.Popen([redis_server, *services["redis1"]["command"][1:], "--port", str(port),
                             "--cluster-port", str(free_port()),  # port + 10000, the default, may not exist
                             "--dir", str(tmp_path), "--daemonize", "no"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while True:  # until it answers (or the deadline)
            out = subprocess.run(["redis-cli", "-p", str(port), "--raw", "info", "cluster"], capture_output=True,
                                 text=True, timeout=30)
            if "cluster_enabled" in out.stdout or time.monotonic() > deadline or proc.poll() is not None:
                break
            time.sleep(0.05)
        assert "cluster_enabled:1" in out.stdout, out.stdout + out.stderr
    finally:
        proc.kill()
        proc.wait()


def nginx_version(text: str) -> tuple[int, ...]:
    """``(1, 22, 1)`` from ``nginx version: nginx/1.22.1`` or an image tag ``nginx:1.28``."""
    m = re.search(r"nginx[:/](\d+(?:\.\d+)*)", text)
    assert m, text
    return tuple(int(n) for n in m.group(1).split("."))


@pytest.mark.parametrize("compose", ["compose.yaml", "compose-redis-cluster.yaml"])
def test_compose_renders_the_nginx_file_with_names_resolved_again(compose: str, tmp_path: Path):
    """compose's nginx command, run here on the real file, writes what :func:`render_nginx_conf`
    writes for the three nodes (one topology), plus what compose alone needs: Docker's DNS as
    ``resolver`` (answers kept a few seconds) and ``resolve`` on each node, so nginx finds a node
    container that was recreated with a new address; an nginx image that knows ``resolve`` in an
    upstream (1.27.3 or newer). The nginx installed here (Debian 12's 1.22) does not know it: the
    rendered file is checked by parsing, and ``nginx -t`` checks it with ``resolve`` taken out and the
    nodes' names as loopback addresses."""
    path = DEPLOY / compose
    services = compose_services(path)
    nginx = services["nginx"]
    assert nginx_version(nginx["image"]) >= (1, 27, 3), nginx["image"]
    (script,) = nginx["command"]
    mount = next(str(v).split(":") for v in nginx["volumes"]
                 if (path.parent / str(v).split(":")[0]).resolve() == NGINX_CONF)
    render, _, start = script.partition("&&")
    assert "exec nginx" in start and "daemon off;" in start
    out = re.search(r">\s*(\S+)", render).group(1)
    assert f"-c {out}" in start
    local = render.replace(mount[1], str(NGINX_CONF)).replace(out, str(tmp_path / "nginx.conf"))
    subprocess.run(["/bin/sh", "-c", local], check=True, timeout=30)
    text = (tmp_path / "nginx.conf").read_text()
    plain = render_nginx_conf(NGINX_CONF.read_text(), user="nginx nginx", prefix="/var/cache/nginx",
                              logs="/var/log/nginx", listen="80", nodes=[f"node{i}:8000" for i in (1, 2, 3)])
    expected = []
    for context, name, args in nginx_directives(plain):
        if (context, name) == (("http",), "upstream"):
            expected.append((context, "resolver", ["127.0.0.11", "valid=5s", "ipv6=off"]))
        if (context, name) == (("http", "upstream"), "server"):
            args = [args[0], "resolve", *args[1:]]
        expected.append((context, name, args))
    assert nginx_directives(text) == expected
    # the lines compose adds, and nothing else changed
    added = [line for line in text.splitlines() if line not in plain.splitlines()]
    assert [line.strip() for line in added] == ["resolver 127.0.0.11 valid=5s ipv6=off;"] + [
        f"server node{i}:8000 resolve max_fails=1 fail_timeout=2s;" for i in (1, 2, 3)]
    assert ("upstream", "zone") in {(c[-1], n) for c, n, _ in nginx_directives(text) if c}  # `resolve` needs it
    require_cluster_tools()
    from tests.cluster.harness import NGINX
    assert NGINX is not None
    installed = nginx_version(subprocess.run([NGINX, "-v"], capture_output=True, text=True).stderr)
    ports = {f"node{i}:8000": f"127.0.0.1:{free_port()}" for i in (1, 2, 3)}
    user = " ".join(_user_and_group_names())
    local_text = text.replace("nginx nginx", user).replace("/var/cache/nginx", str(tmp_path)).replace(
        "/var/log/nginx", str(tmp_path)).replace("listen 80;", f"listen 127.0.0.1:{free_port()};")
    if installed < (1, 27, 3):
        local_text = local_text.replace(" resolve ", " ")
        for name, address in ports.items():
            local_text = local_text.replace(f"server {name} ", f"server {address} ")
    (tmp_path / "local.conf").write_text(local_text)
    checked = subprocess.run([NGINX, "-t", "-p", str(tmp_path), "-c", str(tmp_path / "local.conf")],
                             capture_output=True, text=True, timeout=30)
    assert checked.returncode == 0, checked.stderr


def readme_block(marker: str) -> str:
    """The one ``sh`` block of deploy/README.md that holds ``marker``."""
    blocks = [b for b in re.findall(r"```sh\n(.*?)```", (DEPLOY / "README.md").read_text(), re.S) if marker in b]
    assert len(blocks) == 1, f"deploy/README.md: {len(blocks)} sh blocks hold {marker!r}"
    return blocks[0]


def reroot(script: str, root: Path) -> str:
    """``script`` with every absolute path in /etc, /var, /run, /opt, /srv or /tmp moved under ``root``."""
    return re.sub(r"(?<![\w./-])/(etc|var|run|opt|srv|tmp)/", lambda m: f"{root}/{m.group(1)}/", script)


def test_the_readme_fills_the_nginx_file_as_the_harness_does(tmp_path: Path):
    """deploy/README.md's commands that fill the nginx file and check it ("Behind nginx"), run as they
    stand with their absolute paths moved under a temporary root that holds only what Debian's nginx
    package makes (/var/log/nginx): they make every directory they write to (/etc/cardhall among them),
    keep nothing under /run (a tmpfs: empty after a reboot, when nginx starts again), write what
    :func:`render_nginx_conf` writes for the three nodes, and their own ``nginx -t`` accepts it; the
    command that then starts nginx uses the same directory and file."""
    script = readme_block("mkdir -p /etc/cardhall /var/lib/cardhall-nginx")
    assert not re.search(r"(?<![\w.-])/(run|tmp)/", script), "nginx's files are kept under /run or /tmp"
    user = " ".join(_user_and_group_names())
    root = tmp_path / "root"
    (root / "var" / "log" / "nginx").mkdir(parents=True)
    moved = reroot(script, root).replace("www-data www-data", user).replace("{{LISTEN}}/80/", "{{LISTEN}}/18099/")
    *render, last = moved.rstrip("\n").split("\n")
    check, _, start = last.partition(" && ")
    assert check.startswith("nginx -t ") and start == check.replace("nginx -t ", "nginx ", 1), last
    subprocess.run(["/bin/sh", "-e", "-c", "\n".join(render)], check=True, timeout=30, cwd=ROOT)
    prefix = shlex.split(check)[shlex.split(check).index("-p") + 1]
    conf = Path(shlex.split(check)[shlex.split(check).index("-c") + 1])
    assert Path(prefix).is_dir() and Path(prefix).is_relative_to(root) and conf.is_relative_to(root / "etc")
    expected = render_nginx_conf(NGINX_CONF.read_text(), user=user, prefix=prefix,
                                 logs=str(root / "var" / "log" / "nginx"), listen="18099",
                                 nodes=[f"127.0.0.1:{p}" for p in (8081, 8082, 8083)])
    assert conf.read_text() == expected
    assert [a for c, n, a in nginx_directives(expected) if c == () and n == "worker_shutdown_timeout"]
    require_cluster_tools()
    from tests.cluster.harness import NGINX
    assert NGINX is not None
    env = {**os.environ, "PATH": f"{Path(NGINX).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    checked = subprocess.run(["/bin/sh", "-c", check], capture_output=True, text=True, timeout=30, env=env)
    assert checked.returncode == 0, checked.stderr


def test_the_readme_three_nodes_run_as_pasted(tmp_path: Path):
    """deploy/README.md's "Three nodes on one machine", pasted into sh as it stands, after "Install"
    (its venv /opt/cardhall moved under a temporary root) and with no ``cardhall`` on PATH (a venv
    install puts none there): stand-ins for ``redis-server`` and the venv's ``cardhall`` record their
    arguments, which ``cardhall serve``'s parser reads. And no ``sh`` block of the README runs a bare
    ``cardhall``: each names the venv's (``/opt/cardhall/bin/``) or a clone's (``.venv/bin/``)."""
    bare = [line for block in re.findall(r"```sh\n(.*?)```", (DEPLOY / "README.md").read_text(), re.S)
            for line in block.splitlines()
            if not line.lstrip().startswith("#") and re.search(r"(^|;|&&|\|\||\bdo)\s*cardhall\s", line)]
    assert not bare, bare
    script = readme_block("for i in 1 2 3; do")
    root, stubs, record = tmp_path / "root", tmp_path / "stubs", tmp_path / "calls.jsonl"
    venv_bin = root / "opt" / "cardhall" / "bin"
    venv_bin.mkdir(parents=True)
    stubs.mkdir()
    stub = (f"#!{sys.executable}\nimport json, os, sys\nwith open({str(record)!r}, 'a') as f:\n"
            f"    f.write(json.dumps([os.path.basename(sys.argv[0]), *sys.argv[1:]]) + '\\n')\n")
    for path in (venv_bin / "cardhall", stubs / "redis-server"):
        path.write_text(stub)
        path.chmod(0o755)
    env = {"PATH": f"{stubs}:/usr/bin:/bin", "HOME": str(tmp_path), "KEY": "k3y"}
    ran = subprocess.run(["/bin/sh", "-c", reroot(script, root) + "\nwait\n"], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0 and not ran.stderr, ran.stderr
    calls = [json.loads(line) for line in record.read_text().splitlines()]
    (redis,) = [c for c in calls if c[0] == "redis-server"]
    assert redis[redis.index("--appendonly") + 1] == "yes" and redis[redis.index("--appendfsync") + 1] == "always"
    nodes = sorted((serve_args(c) for c in calls if c[0] == "cardhall"), key=lambda a: a.port)
    host = subprocess.run(["hostname"], capture_output=True, text=True, check=True).stdout.strip()
    assert [(a.port, a.node_id) for a in nodes] == [(8080 + i, f"{host}-{i}") for i in (1, 2, 3)]
    for a in nodes:
        assert a.redis == "redis://127.0.0.1:6379/0" and a.trusted_proxy == ["127.0.0.1"] and a.operator_key == "k3y"


def _user_and_group_names() -> tuple[str, str]:
    import grp

    entry = pwd.getpwuid(os.getuid())
    return entry.pw_name, grp.getgrgid(entry.pw_gid).gr_name


# -- systemd ----------------------------------------------------------------------------
def unit() -> configparser.RawConfigParser:
    parser = configparser.RawConfigParser(strict=False, interpolation=None, empty_lines_in_values=False)
    parser.optionxform = str
    parser.read_string(UNIT.read_text())
    return parser


def unit_values(key: str, section: str = "Service") -> list[str]:
    """Every value of ``key`` in ``section`` (a unit may repeat a key)."""
    pattern = re.compile(rf"^{key}=(.*)$")
    out, inside = [], False
    for line in UNIT.read_text().splitlines():
        if line.startswith("["):
            inside = line.strip() == f"[{section}]"
        elif inside and (m := pattern.match(line)):
            out.append(m.group(1))
    return out


#: systemd's manager, whose test mode dumps a unit as it reads it (None without systemd)
SYSTEMD = next((p for p in ("/lib/systemd/systemd", "/usr/lib/systemd/systemd") if os.access(p, os.X_OK)), None)
#: the unit's stand-in for the node's program
NODE_PROGRAM = "/opt/cardhall/bin/cardhall"


def test_the_systemd_unit_settings():
    service = unit()["Service"]
    assert service["Restart"] == "always" and service["KillSignal"] == "SIGTERM"
    # longer than a node's graceful stop (its shutdown grace, a lease's lifetime) by far
    assert int(service["TimeoutStopSec"]) >= 20
    assert service["NoNewPrivileges"] == "yes" and service["ProtectSystem"] == "strict"
    assert service.get("DynamicUser") == "yes" or service.get("User") not in (None, "root")
    assert unit_values("EnvironmentFile") == ["/etc/cardhall/cardhall.env", "-/etc/cardhall/cardhall-%i.env"]
    assert NODE_PROGRAM in service["ExecStart"]


def unit_settings(text: str, section: str = "Service") -> list[tuple[str, str]]:
    """``(key, value)`` of each setting of ``section`` as systemd reads a unit file: a line that ends
    in a backslash goes on with the next (the backslash read as a space, the next line as it stands),
    comment lines dropped."""
    out: list[tuple[str, str]] = []
    inside, pending = False, None
    for line in text.splitlines():
        if pending is None:
            line = line.strip()
            if not line or line[0] in "#;":
                continue
            if line.startswith("["):
                inside = line == f"[{section}]"
                continue
        else:
            line = pending + line
        if line.endswith("\\"):
            pending = line[:-1] + " "
            continue
        pending = None
        key, _, value = line.partition("=")
        if inside:
            out.append((key.strip(), value.strip()))
    return out


def fill_specifiers(value: str, instance: str) -> str:
    """``%i`` (the instance), ``%H`` (the host name) and ``%%`` filled as systemd does (any other
    specifier is an error here: the unit uses none)."""
    return re.sub(r"%(.)", lambda m: {"i": instance, "H": socket.gethostname(), "%": "%"}[m.group(1)], value)


def parse_unit(text: str, instance: str) -> tuple[list[str], list[str]]:
    """``ExecStart``'s words and the ``Environment=`` assignments of ``cardhall@instance`` read by the
    rules of systemd.service(5) ("Command lines") and systemd.syntax(7): specifiers filled, words split
    at whitespace outside quotes, quotes removed; variables left as they are (systemd substitutes them
    when it starts the unit: :func:`substitute`). The unit's values hold no backslash escape, so
    splitting them as a POSIX shell does is the same (checked)."""
    settings = unit_settings(text)
    (exec_start,) = [v for k, v in settings if k == "ExecStart"]
    assert "\\" not in exec_start, "a backslash in ExecStart: systemd's escapes are not a shell's"
    environment = [a for k, v in settings if k == "Environment" for a in shlex.split(fill_specifiers(v, instance))]
    return shlex.split(fill_specifiers(exec_start, instance)), environment


def systemd_parse(text: str, instance: str) -> tuple[list[str], list[str]] | None:
    """The same as systemd itself reads ``text``: ``systemd --test --user`` loads ``cardhall@instance``
    from a directory of its own and dumps it (run as nobody when the tests run as root: systemd refuses
    test mode as root). None without systemd."""
    if SYSTEMD is None:
        return None
    work = Path(tempfile.mkdtemp(prefix="cardhall-unit-"))
    try:
        units, runtime = work / "units", work / "runtime"
        units.mkdir()
        runtime.mkdir(mode=0o700)
        (units / UNIT.name).write_text(text)
        (units / "basic.target").write_text("[Unit]\nDescription=what a user service is ordered after\n")
        kw: dict[str, Any] = {}
        if os.geteuid() == 0:
            nobody = pwd.getpwnam("nobody")
            for path in (work, units, *units.iterdir()):
                path.chmod(0o755 if path.is_dir() else 0o644)
            os.chown(runtime, nobody.pw_uid, nobody.pw_gid)
            kw = {"user": nobody.pw_uid, "group": nobody.pw_gid, "extra_groups": []}
        env = {"PATH": "/usr/bin:/bin", "HOME": str(runtime), "XDG_RUNTIME_DIR": str(runtime),
               "SYSTEMD_UNIT_PATH": str(units)}
        dump = subprocess.run([SYSTEMD, "--test", "--user", f"--unit=cardhall@{instance}.service", "--no-pager"],
                              env=env, cwd=work, capture_output=True, text=True, timeout=60, **kw)
        _, found, body = dump.stdout.partition(f"-> Unit cardhall@{instance}.service:")
        assert found, f"systemd --test did not load the unit:\n{dump.stdout[-2000:]}\n{dump.stderr[-2000:]}"
        body = body.split("\n\t-> Unit ", 1)[0]
        command = re.search(r"-> ExecStart:\n\s*Command Line: (.*)", body)
        assert command, body
        # the dump quotes the words for a POSIX shell ("..." with \$, \", \\): one splits them back
        words = subprocess.run(["/bin/sh", "-c", 'eval "set -- $1"; for w; do printf "%s\\0" "$w"; done', "sh",
                                command.group(1)], capture_output=True, text=True, check=True).stdout
        return words.split("\0")[:-1], re.findall(r"^\s*Environment: (.*)$", body, re.M)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def read_environment_file(text: str) -> dict[str, str]:
    """An ``EnvironmentFile=`` as systemd.exec(5) reads it: ``NAME=value`` lines, ``#`` and ``;``
    comments; a value in quotes loses them, any other keeps its inner quotes and loses its
    backslashes (each keeps the character after it), both stripped of whitespace around."""
    env = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line[0] in "#;" or "=" not in line:
            continue
        name, _, value = line.partition("=")
        value = value.strip()
        if value[:1] in ("'", '"'):
            (value,) = shlex.split(value)
        else:
            value = re.sub(r"\\(.)", r"\1", value)
        env[name.strip()] = value
    return env


def substitute(words: list[str], env: dict[str, str]) -> list[str]:
    """What systemd execs for ``words`` (systemd.service(5), "Command lines"): a word that is one
    ``$NAME`` becomes the variable's value split as a shell would (zero or more words, quotes
    keeping a word whole); in any other word ``${NAME}`` is the value as it stands and ``$$`` a ``$``."""
    out: list[str] = []
    for word in words:
        if re.fullmatch(r"\$[A-Za-z_]\w*", word):
            out += shlex.split(env.get(word[1:], ""))
        else:
            out.append(re.sub(r"\$\$|\$\{(\w+)\}", lambda m: env.get(m.group(1), "") if m.group(1) else "$", word))
    return out


def start_instance(instance: str, files: dict[str, str], tmp: Path,
                   text: str | None = None) -> tuple[subprocess.CompletedProcess[str], list[str] | None]:
    """``systemctl start cardhall@instance`` here, with ``files`` (name in /etc/cardhall → text) as the
    environment files: the unit (``text``, default the real one) read by systemd when it is installed
    (and checked to be read the same by :func:`parse_unit`), else by :func:`parse_unit`; its
    environment made as systemd makes it (``Environment=``, then each ``EnvironmentFile=`` in turn, a
    missing one an error unless it starts with ``-``); its command run with a stand-in for the node that
    records the arguments it got. Returns the finished process, and the arguments the node got
    (``cardhall`` first; None if the node was not started)."""
    text = UNIT.read_text() if text is None else text
    words, assignments = parse_unit(text, instance)
    by_systemd = systemd_parse(text, instance)
    if by_systemd is not None:
        assert by_systemd == (words, assignments), f"systemd reads the unit otherwise: {by_systemd}"
    env = dict(a.split("=", 1) for a in assignments)
    for _, path in [s for s in unit_settings(text) if s[0] == "EnvironmentFile"]:
        path = fill_specifiers(path, instance)
        name = path.removeprefix("-").removeprefix("/etc/cardhall/")
        if name in files:
            env.update(read_environment_file(files[name]))
        else:
            assert path.startswith("-"), f"{path} is missing: the unit does not start"
    record = tmp / f"node-{instance}.json"
    record.unlink(missing_ok=True)
    stub = tmp / "cardhall"
    stub.write_text(f"#!{sys.executable}\nimport json, sys\n"
                    f"open({str(record)!r}, 'w').write(json.dumps(['cardhall', *sys.argv[1:]]))\n")
    stub.chmod(0o755)
    argv = [w.replace(NODE_PROGRAM, str(stub)) for w in substitute(words, env)]
    assert Path(argv[0]).is_absolute() and os.access(argv[0], os.X_OK), argv[0]
    done = subprocess.run(argv, env={"PATH": "/usr/local/bin:/usr/bin:/bin", **env}, capture_output=True,
                          text=True, timeout=30)
    return done, json.loads(record.read_text()) if record.exists() else None


def serve_accepts(argv: list[str], monkeypatch: pytest.MonkeyPatch):
    """``argv`` parsed by ``cardhall serve``'s parser and checked by its ``main`` as at a start (every
    value validated, the settings built), the server itself not run: the parsed arguments, once
    ``main`` said 0."""
    from cardhall.clients.commands import serve

    monkeypatch.delenv("CARDHALL_REDIS_URL", raising=False)  # no Redis is asked for here
    started = []
    monkeypatch.setattr("cardhall.server.app.run", lambda settings, sock=None: started.append(settings))
    args = serve_args(argv)
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        status = serve.main(args)
    assert status == 0 and len(started) == 1, err.getvalue()
    return args


EXAMPLE = {"cardhall.env": ENV_EXAMPLE.read_text()}


@pytest.mark.parametrize("instance", ["1", "3", "9", "10", "12", "120"])
def test_the_systemd_unit_starts_any_instance_on_its_own_port(instance: str, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch):
    """cardhall@N with the example environment: port 8080 + N for every N (808N was a port for N up
    to 9 only: cardhall@12 asked for 80812), node id <host>-N, the example's proxy and origin."""
    done, argv = start_instance(instance, EXAMPLE, tmp_path)
    assert done.returncode == 0 and argv, done.stderr
    args = serve_accepts(argv, monkeypatch)
    assert args.port == 8080 + int(instance) and args.node_id == f"{socket.gethostname()}-{instance}"
    assert (args.host, args.redis_prefix, args.log_level, args.lease_ttl, args.lease_renew) == (
        "127.0.0.1", "cardhall", "info", 3.0, 1.0)
    assert args.trusted_proxy == ["127.0.0.1"] and args.allow_origin == ["https://cards.example.org"]
    env = read_environment_file(ENV_EXAMPLE.read_text())
    assert "CARDHALL_REDIS_URL" in env and "CARDHALL_OPERATOR_KEY" in env  # read by cardhall serve itself


def test_the_systemd_unit_takes_the_port_of_the_instance_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    files = {**EXAMPLE, "cardhall-12.env": "CARDHALL_PORT=9001\n"}
    done, argv = start_instance("12", files, tmp_path)
    assert done.returncode == 0 and argv, done.stderr
    assert serve_accepts(argv, monkeypatch).port == 9001
    # an instance named otherwise than by a number has a port only from CARDHALL_PORT
    done, argv = start_instance("blue", EXAMPLE, tmp_path)
    assert done.returncode != 0 and argv is None and "set CARDHALL_PORT" in done.stderr, done.stderr
    done, argv = start_instance("blue", {**EXAMPLE, "cardhall-blue.env": "CARDHALL_PORT=9005\n"}, tmp_path)
    assert done.returncode == 0 and argv and serve_accepts(argv, monkeypatch).port == 9005


@pytest.mark.parametrize(("value", "proxies"), [("", []), ("  ", []), ("10.0.0.5", ["10.0.0.5"]),
                                                 ("127.0.0.1 10.0.0.0/8", ["127.0.0.1", "10.0.0.0/8"])])
def test_the_systemd_unit_with_any_trusted_proxies(value: str, proxies: list[str], tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch):
    """CARDHALL_TRUSTED_PROXY empty: no --trusted-proxy at all (``--trusted-proxy ""`` made ``cardhall
    serve`` refuse to start: "not an IP address or network"); several: one option each."""
    done, argv = start_instance("2", {**EXAMPLE, "cardhall-2.env": f"CARDHALL_TRUSTED_PROXY={value}\n"}, tmp_path)
    assert done.returncode == 0 and argv, done.stderr
    assert serve_accepts(argv, monkeypatch).trusted_proxy == proxies


def test_the_systemd_unit_keeps_values_with_spaces_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A value of the environment files is one argument, spaces and all; CARDHALL_ARGS is split at
    spaces as a shell would, quotes keeping an argument whole."""
    files = {"cardhall.env": ENV_EXAMPLE.read_text() + "\n".join([
        "CARDHALL_REDIS_PREFIX=hall one",
        "CARDHALL_ARGS=--allow-origin https://a.example --advertise \"http://10.0.0.11:8081/a b\" "
        "--allow-origin 'https://b.example'",
        "CARDHALL_OPERATOR_KEY=a key with spaces", ""])}
    done, argv = start_instance("4", files, tmp_path)
    assert done.returncode == 0 and argv, done.stderr
    args = serve_accepts(argv, monkeypatch)
    assert args.redis_prefix == "hall one" and args.advertise == "http://10.0.0.11:8081/a b"
    assert args.allow_origin == ["https://a.example", "https://b.example"] and args.port == 8084
    # a value in quotes as a whole
    files = {"cardhall.env": ENV_EXAMPLE.read_text() + "\nCARDHALL_ARGS='--rebalance-rate 0'\n"}
    done, argv = start_instance("4", files, tmp_path)
    assert done.returncode == 0 and argv and serve_accepts(argv, monkeypatch).rebalance_rate == 0


def test_systemd_analyze_verifies_the_unit(tmp_path: Path):
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        return  # the parse checks above are all there is without systemd
    # the unit names the installed command (/opt/cardhall/bin/cardhall): verify needs one that exists
    cardhall = Path(sys.executable).parent / "cardhall"
    assert cardhall.exists(), cardhall
    text = UNIT.read_text()
    assert NODE_PROGRAM in text
    (tmp_path / UNIT.name).write_text(text.replace(NODE_PROGRAM, str(cardhall)))
    instance = str(tmp_path / "cardhall@1.service")
    verify = subprocess.run([analyze, "verify", "--man=no", instance], capture_output=True, text=True, timeout=60)
    assert verify.returncode == 0 and not verify.stderr.strip(), verify.stdout + verify.stderr
    # exposure 0 (locked down) to 10 (none): ours must stay under 2.5 ("OK")
    security = subprocess.run([analyze, "security", "--offline=true", "--threshold=25", "--no-pager", instance],
                              capture_output=True, text=True, timeout=60)
    assert security.returncode == 0, security.stdout[-2000:] + security.stderr
