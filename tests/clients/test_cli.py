"""``cardhall`` when the world outside says no: one line naming the command and the cause, status 1,
no traceback (unless ``$CARDHALL_TRACEBACK`` asks for it); a bug keeps its traceback.

The commands run as real processes against a port nobody listens on; Ctrl-C is
tests/clients/test_interrupt.py's.
"""

from __future__ import annotations

import os
import subprocess
import sys

from cardhall.clients.cli import build_parser, outside_error
from cardhall.clients.load.probe import free_port

CLI = [sys.executable, "-m", "cardhall.clients.cli"]


def _cardhall(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, **env})


def test_a_websocket_url_that_is_not_ws_is_one_line():
    proc = _cardhall("bot", "--server", "http://127.0.0.1:8000/ws", "--table", "t1")
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [
        "cardhall bot: http://127.0.0.1:8000/ws isn't a valid URI: scheme isn't ws or wss"], proc.stderr


def test_a_server_that_does_not_answer_is_one_line_naming_the_url():
    port = free_port()
    proc = _cardhall("loadtest", "--server", f"ws://127.0.0.1:{port}/ws", "--tables", "1", "--duration", "1")
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert "Traceback" not in proc.stderr, proc.stderr
    assert last.startswith("cardhall loadtest: ") and "refused" in last and f"127.0.0.1:{port}" in last, last


def test_the_traceback_when_asked_for():
    proc = _cardhall("bot", "--server", "http://127.0.0.1:8000/ws", "--table", "t1", CARDHALL_TRACEBACK="1")
    assert proc.returncode == 1 and "Traceback" in proc.stderr and "InvalidURI" in proc.stderr, proc.stderr


def test_which_errors_count_as_from_outside():
    refused = ConnectionRefusedError(111, "Connection refused")
    assert outside_error(refused) is refused
    assert outside_error(ValueError("a bug")) is None
    assert outside_error(KeyError("a bug")) is None
    # a task group's errors: from outside only when every one of them is
    assert outside_error(ExceptionGroup("g", [refused, TimeoutError()])) is refused
    assert outside_error(ExceptionGroup("g", [refused, ValueError("a bug")])) is None


def test_play_takes_an_invite_link_to_join():
    """``cardhall play --join LINK`` gives the link to the app (the app joining by a link: tests/clients/test_tui_private.py)."""
    link = "http://127.0.0.1:8000/#table=t_1&invite=abc"
    args = build_parser(["play"]).parse_args(["play", "--join", link])
    assert args.join == link
    assert build_parser(["play"]).parse_args(["play"]).join is None
