"""The files of ``deploy/`` as an operator uses them.

* ``deploy/nginx/cardhall.conf``: ``nginx -t`` accepts it with only its
  placeholders filled, and the harness runs it in front of a real cluster
  (redis-server, three ``cardhall serve`` processes): HTTP and websockets
  through it, the connections spread over the nodes, a killed node passed over.
* ``deploy/Dockerfile``, ``deploy/compose.yaml``: what they say (parsed), the
  healthcheck run against a live node, the command lines they give
  ``cardhall serve`` parsed by its own parser, compose's rendering of the nginx
  file run and compared with the harness's; the image built when a Docker
  daemon answers (the one skip allowed here: there is none on CI).
* ``deploy/systemd/``: ``systemd-analyze verify`` and ``security`` of the unit
  when systemd-analyze is installed, and its command line with the example
  environment parsed by ``cardhall serve``.
"""

from __future__ import annotations

import asyncio
import configparser
import json
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import sys
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
from tests.conftest import require

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
        # past fail_timeout (2 s) nginx tries the node again, and passes it over again
        before = _refused(nginx, dead, "GET")
        await asyncio.sleep(2.2)
        deadline = asyncio.get_running_loop().time() + 5
        while _refused(nginx, dead, "GET") == before and asyncio.get_running_loop().time() < deadline:
            assert (await http.get(f"{nginx.http}/api/games")).status_code == 200
            await asyncio.sleep(0.05)
        assert _refused(nginx, dead, "GET") > before, nginx.log_tail()


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


def test_the_dockerfile():
    steps = dockerfile_instructions(DOCKERFILE.read_text())
    froms = [args for op, args in steps if op == "FROM"]
    assert froms and all(f.split()[0] == "python:3.11-slim" for f in froms)
    runtime = steps[max(i for i, (op, _) in enumerate(steps) if op == "FROM"):]  # the last stage
    ops = dict(runtime)
    user = ops["USER"].split(":")[0]
    assert user not in ("root", "0")
    # the build reads pyproject.toml, the readme and the package folders, nothing from ../shared
    copies = " ".join(args for op, args in steps if op == "COPY")
    for name in ["pyproject.toml", PYPROJECT["project"]["readme"], *PYPROJECT["tool"]["setuptools"]["package-dir"].values()]:
        assert re.search(rf"(^|\s){re.escape(name)}(\s|$)", copies), f"the Dockerfile does not copy {name}"
    assert "shared" not in copies and ".." not in copies
    runs = " ".join(args for op, args in steps if op == "RUN")
    assert "pip wheel" in runs and "pip install" in runs and "cardhall[" not in runs  # no extras
    assert ops["EXPOSE"] == "8000"
    entry = json.loads(ops["ENTRYPOINT"])
    assert entry == ["cardhall", "serve", "--host", "0.0.0.0", "--port", "8000"]
    args = serve_args(entry)
    assert (args.host, args.port) == ("0.0.0.0", 8000)
    health = ops["HEALTHCHECK"]
    assert "/healthz" in health and "curl" not in health and "python" in health


def healthcheck_command() -> list[str]:
    """The HEALTHCHECK's command (exec form)."""
    health = dict(dockerfile_instructions(DOCKERFILE.read_text()))["HEALTHCHECK"]
    return json.loads(health[health.index("CMD") + 3:])


async def test_the_image_healthcheck_against_a_live_node(make_cluster):
    cluster = await make_cluster(1)
    node = cluster.nodes[0]
    command = healthcheck_command()
    assert command[0] == "python"

    async def run(port: int) -> int:
        argv = [sys.executable, *(part.replace("127.0.0.1:8000", f"127.0.0.1:{port}") for part in command[1:])]
        proc = await asyncio.create_subprocess_exec(*argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return await proc.wait()

    assert "127.0.0.1:8000" in " ".join(command)
    assert await run(node.port) == 0
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        assert await run(s.getsockname()[1]) != 0


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
    """Each service of compose.yaml (or of ``path``): ``command`` (a list), ``environment`` (a
    dict), ``volumes`` (a list), ``built`` (whether it is built from
    deploy/Dockerfile, through ``<<: *node``).

    With PyYAML: parsed by it. Without it (PyYAML is no dependency of the
    project): read from the file's own layout, which this holds it to: services
    two spaces in under ``services:``, their keys at four, lists of ``- item``,
    ``command`` a JSON flow sequence or one folded block scalar (``- >-``)."""
    text = path.read_text()
    try:
        import yaml
    except ImportError:
        yaml = None
    if yaml is not None:
        return {name: {"command": s.get("command", []), "environment": s.get("environment", {}),
                       "volumes": s.get("volumes", []),
                       "built": s.get("build", {}).get("dockerfile") == "deploy/Dockerfile"}
                for name, s in yaml.safe_load(text)["services"].items()}
    top = _keys(text.splitlines(), 0)
    anchor = top["x-node"]
    built = anchor[0] == "&node" and _keys(anchor[1], 4).get("dockerfile", ("",))[0] == "deploy/Dockerfile"
    services = {}
    for name, (_, lines) in _keys(top["services"][1], 2).items():
        keys = _keys(lines, 4)
        inline, folded = keys.get("command", ("[]", []))
        if folded:
            assert folded[0].strip() == "- >-", folded[0]
            command = [" ".join(line.strip() for line in folded[1:])]
        else:
            command = json.loads(inline)
        env = dict(line.strip().split(": ", 1) for line in keys.get("environment", ("", []))[1])
        volumes = [line.strip().removeprefix("- ") for line in keys.get("volumes", ("", []))[1]]
        services[name] = {"command": command, "environment": env, "volumes": volumes,
                          "built": built and keys.get("<<", ("",))[0] == "*node"}
    return services


def test_compose_runs_redis_three_nodes_and_nginx():
    services = compose_services()
    assert set(services) == {"redis", "node1", "node2", "node3", "nginx"}
    redis = services["redis"]
    command = redis["command"]
    assert isinstance(command, list) and command[0] == "redis-server"
    assert command[command.index("--appendonly") + 1] == "yes"
    assert any(str(v).endswith(":/data") for v in redis["volumes"])
    prefixes, urls = set(), set()
    for i in (1, 2, 3):
        node = services[f"node{i}"]
        assert node["built"], "each node is built from deploy/Dockerfile"
        env = node["environment"]
        assert env["CARDHALL_NODE_ID"] == f"node{i}"
        urls.add(env["CARDHALL_REDIS_URL"])
        # the image's entrypoint + the service's command, as `cardhall serve` parses them
        args = serve_args(["cardhall", "serve", "--host", "0.0.0.0", "--port", "8000", *node["command"]])
        prefixes.add(args.redis_prefix)
        assert args.trusted_proxy and args.advertise == f"http://node{i}:8000"
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
        assert command[0] == "redis-server"
        assert command[command.index("--cluster-enabled") + 1] == "yes"
        assert command[command.index("--appendonly") + 1] == "yes"
        assert int(command[command.index("--cluster-node-timeout") + 1]) <= 15000
    create = services["redis-cluster-create"]["command"][0]
    assert "--cluster-replicas 1" in create and "--cluster-yes" in create
    assert set(re.findall(r"(\d+\.\d+\.\d+\.\d+):6379", create)) == set(addresses.values())
    for i in (1, 2, 3):
        node = services[f"node{i}"]
        assert node["built"]
        url = node["environment"]["CARDHALL_REDIS_URL"]
        assert re.fullmatch(r"redis://(\S+):6379/0", url).group(1) in addresses.values()
        args = serve_args(["cardhall", "serve", "--host", "0.0.0.0", "--port", "8000", *node["command"]])
        assert args.redis_wait_replicas == 0 and args.advertise == f"http://node{i}:8000"
    redis_server = shutil.which("redis-server")
    require(redis_server is not None, "redis-server is not installed (apt-get install redis-server)")
    assert redis_server is not None
    from tests.server.conftest import free_port

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


def test_compose_renders_the_nginx_file_as_the_harness_does(tmp_path: Path):
    """compose's nginx command, run here on the real file, writes what
    :func:`render_nginx_conf` writes for the three nodes (one topology)."""
    services = compose_services()
    (script,) = services["nginx"]["command"]
    mount = next(str(v).split(":") for v in services["nginx"]["volumes"]
                 if (COMPOSE.parent / str(v).split(":")[0]).resolve() == NGINX_CONF)
    render, _, start = script.partition("&&")
    assert "exec nginx" in start and "daemon off;" in start
    out = re.search(r">\s*(\S+)", render).group(1)
    assert f"-c {out}" in start
    local = render.replace(mount[1], str(NGINX_CONF)).replace(out, str(tmp_path / "nginx.conf"))
    subprocess.run(["/bin/sh", "-c", local], check=True, timeout=30)
    expected = render_nginx_conf(NGINX_CONF.read_text(), user="nginx nginx", prefix="/var/cache/nginx",
                                 logs="/var/log/nginx", listen="80",
                                 nodes=[f"node{i}:8000" for i in (1, 2, 3)])
    assert (tmp_path / "nginx.conf").read_text() == expected


def test_the_readme_fills_the_nginx_file_as_the_harness_does(tmp_path: Path):
    """deploy/README.md's commands that fill the nginx file ("Behind nginx"),
    run here with its paths moved into a temporary directory: the file they
    write is what :func:`render_nginx_conf` writes for the three nodes, and
    ``nginx -t`` accepts it."""
    text = (DEPLOY / "README.md").read_text()
    block = re.search(r"```sh\n(mkdir -p /run/cardhall-nginx\n.*?)```", text, re.S)
    assert block is not None, "the README's nginx block"
    script = block.group(1)
    user = " ".join(_user_and_group_names())
    moved = (script.replace("/run/cardhall-nginx", str(tmp_path / "run"))
             .replace("/etc/cardhall/nginx.conf", str(tmp_path / "nginx.conf"))
             .replace("/var/log/nginx", str(tmp_path / "logs")).replace("www-data www-data", user)
             .replace("{{LISTEN}}/80/", "{{LISTEN}}/18099/"))
    render, _, start = moved.rpartition("\nnginx -t")
    (tmp_path / "logs").mkdir()
    subprocess.run(["/bin/sh", "-c", render], check=True, timeout=30, cwd=ROOT)
    expected = render_nginx_conf(NGINX_CONF.read_text(), user=user, prefix=str(tmp_path / "run"),
                                 logs=str(tmp_path / "logs"), listen="18099",
                                 nodes=[f"127.0.0.1:{p}" for p in (8081, 8082, 8083)])
    assert (tmp_path / "nginx.conf").read_text() == expected
    require_cluster_tools()
    from tests.cluster.harness import NGINX
    assert NGINX is not None
    checked = subprocess.run([NGINX, "-t", "-p", str(tmp_path / "run"), "-c", str(tmp_path / "nginx.conf")],
                             capture_output=True, text=True, timeout=30)
    assert checked.returncode == 0, checked.stderr


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


def test_the_systemd_unit_and_its_environment_give_a_valid_command_line():
    service = unit()["Service"]
    assert service["Restart"] == "always" and service["KillSignal"] == "SIGTERM"
    # longer than a node's graceful stop (its shutdown grace, a lease's lifetime) by far
    assert int(service["TimeoutStopSec"]) >= 20
    assert service["NoNewPrivileges"] == "yes" and service["ProtectSystem"] == "strict"
    assert service.get("DynamicUser") == "yes" or service.get("User") not in (None, "root")
    assert "/etc/cardhall/cardhall.env" in unit_values("EnvironmentFile")
    # the command line for cardhall@3 with the example environment, expanded as systemd does
    env = dict(v.split("=", 1) for v in unit_values("Environment"))
    for line in ENV_EXAMPLE.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, value = line.partition("=")
            env[name] = value
    exec_start = " ".join(part.strip().rstrip("\\") for part in service["ExecStart"].splitlines())
    exec_start = exec_start.replace("%H", "host").replace("%i", "3")
    env = {k: v.replace("%i", "3") for k, v in env.items()}
    words: list[str] = []
    for word in exec_start.split():
        if m := re.fullmatch(r"\$\{(\w+)\}", word):
            words.append(env[m.group(1)])
        elif m := re.fullmatch(r"\$(\w+)", word):
            words.extend(env.get(m.group(1), "").split())
        else:
            words.append(word)
    assert words[0] == "/opt/cardhall/bin/cardhall"
    args = serve_args(["cardhall", *words[1:]])
    assert args.port == 8083 and args.node_id == "host-3"
    assert args.trusted_proxy == ["127.0.0.1"] and args.allow_origin == ["https://cards.example.org"]
    assert "CARDHALL_REDIS_URL" in env and "CARDHALL_OPERATOR_KEY" in env  # read by cardhall serve itself


def test_systemd_analyze_verifies_the_unit(tmp_path: Path):
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        return  # the parse checks above are all there is without systemd
    # the unit names the installed command (/opt/cardhall/bin/cardhall): verify needs one that exists
    cardhall = Path(sys.executable).parent / "cardhall"
    assert cardhall.exists(), cardhall
    text = UNIT.read_text()
    assert "ExecStart=/opt/cardhall/bin/cardhall " in text
    (tmp_path / UNIT.name).write_text(text.replace("/opt/cardhall/bin/cardhall", str(cardhall)))
    instance = str(tmp_path / "cardhall@1.service")
    verify = subprocess.run([analyze, "verify", "--man=no", instance], capture_output=True, text=True, timeout=60)
    assert verify.returncode == 0 and not verify.stderr.strip(), verify.stdout + verify.stderr
    # exposure 0 (locked down) to 10 (none): ours must stay under 2.5 ("OK")
    security = subprocess.run([analyze, "security", "--offline=true", "--threshold=25", "--no-pager", instance],
                              capture_output=True, text=True, timeout=60)
    assert security.returncode == 0, security.stdout[-2000:] + security.stderr
