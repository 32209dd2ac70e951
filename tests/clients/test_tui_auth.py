"""``cardhall play --auth-file FILE`` signs in with a JWT from the server's operator
(protocol/SPEC.md "Identity", ``clients/tui/app.py``), against live servers started with an HS256
key and ``--require-auth``.

The app given the token reaches the lobby as that account's player (the claim's name), keeps the
resume token for the server in ``identity.json`` in place of a guest kept from before (whose tables
are forgotten), and a later start without the token resumes that player. The real command in a
pseudo-terminal, its screen read as a person would: with a good token in the file it shows the
lobby as that player; a refused token, and a start without one on such a server, end it with exit
status 1 and a line saying why. A file that cannot be used is said before anything connects.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import jwt
import pytest

from cardhall.clients.commands import play
from cardhall.clients.tui.app import CardhallApp, Lobby
from cardhall.clients.tui.identity import Identity, IdentityStore, SavedTable
from cardhall.server.auth import public_id
from tests.clients.test_tui_identity import COLUMNS, CTRL_Q, DEADLINE, ROWS, Terminal
from tests.conftest import until
from tests.server.conftest import TEST_SETTINGS, LiveServer, running_server

SECRET = b"0123456789abcdef0123456789abcdef-terminal-secret"
ISS = "https://accounts.example"
AUD = "cardhall-terminal"


@pytest.fixture
async def live(tmp_path: Path) -> AsyncIterator[LiveServer]:
    """A live server that admits only players its operator identifies."""
    key = tmp_path / "jwt.key"
    key.write_bytes(SECRET + b"\n")
    async with running_server(replace(TEST_SETTINGS, jwt_key=str(key), jwt_issuer=ISS, jwt_audience=AUD,
                                      require_auth=True)) as srv:
        yield srv


def mint(sub: str, name: str, expires_in: int = 600) -> str:
    """A JWT of the operator's accounts for ``sub``, valid ``expires_in`` seconds from now
    (negative: expired that long ago)."""
    now = int(time.time())
    return jwt.encode({"iss": ISS, "aud": AUD, "sub": sub, "name": name, "iat": now - 3600, "exp": now + expires_in},
                      SECRET, algorithm="HS256")


def terminal_env(config: Path) -> dict[str, str]:
    env = {**os.environ, "XDG_CONFIG_HOME": str(config), "TERM": "xterm-256color", "PYTHONUNBUFFERED": "1"}
    for name in ("COLUMNS", "LINES", "NO_COLOR", "TEXTUAL"):
        env.pop(name, None)
    return env


async def test_signed_in_as_the_account_then_resumed_without_the_token(live: LiveServer, tmp_path: Path) -> None:
    path = tmp_path / "identity.json"
    store = IdentityStore(path)
    # a guest kept from before the server required sign-in: its token and its table are not the account's
    store.save(live.url, Identity("guest-token-from-before", "p_0123456789abcdef", "old guest",
                                  {"t_old": SavedTable("player", 2, "alamo")}))
    ann = public_id(ISS, "ann@example.com")

    app = CardhallApp(live.url, None, codec="json", identity=IdentityStore(path), auth=mint("ann@example.com", "Ann"))
    async with app.run_test(size=(COLUMNS, ROWS)) as pilot:
        await until(lambda: isinstance(app.screen, Lobby) and store.load(live.url).player == ann, DEADLINE,
                    "the lobby, signed in as ann")
        assert app.client.player == ann and app.client.name == "Ann" and app.sub_title.startswith("Ann @ ")
        kept = store.load(live.url)
        assert (kept.token, kept.name, kept.tables) == (app.client.token, "Ann", {})
        # the account plays like anyone: a table, seat 1
        await pilot.click("#create")
        await pilot.press(*"alamo 2 1 pause=0", "enter")
        await until(lambda: store.load(live.url).tables, DEADLINE, "the table is kept")
        [(table, seat)] = store.load(live.url).tables.items()
        assert seat == SavedTable("player", 1, "alamo")
    first_token = kept.token

    # started again without the token: the kept resume token is that player, its table still listed as its own
    again = CardhallApp(live.url, None, codec="json", identity=IdentityStore(path))
    async with again.run_test(size=(COLUMNS, ROWS)):
        await until(lambda: isinstance(again.screen, Lobby), DEADLINE, "the lobby, resumed")
        assert again.client.player == ann and again.client.name == "Ann"
        assert store.load(live.url).token == first_token and table in store.load(live.url).tables


async def test_the_command_signs_in_and_a_refused_token_ends_it_with_status_1(live: LiveServer, tmp_path: Path) -> None:
    """The real command in a pseudo-terminal: a good token reaches the lobby as its player; an
    expired one, and no token at all on this server, end it with status 1 and the reason."""
    config = tmp_path / "config"
    token_file = tmp_path / "token.jwt"
    token_file.write_text(mint("bob@example.com", "Bob") + "\n")  # the line break an editor adds
    env = terminal_env(config)

    signed_in = Terminal(["play", "--server", live.url, "--json", "--auth-file", str(token_file)], env)
    try:
        await signed_in.shows("Bob @ ", "⏎ create table")
        signed_in.press(CTRL_Q)
        assert await signed_in.exited() == 0
    finally:
        signed_in.close()
    kept = IdentityStore(config / "cardhall" / "identity.json").load(live.url)
    assert kept.player == public_id(ISS, "bob@example.com") and kept.name == "Bob" and kept.token
    (config / "cardhall" / "identity.json").unlink()

    token_file.write_text(mint("bob@example.com", "Bob", expires_in=-3600))
    expired = Terminal(["play", "--server", live.url, "--json", "--auth-file", str(token_file)], env)
    try:
        assert await expired.exited() == 1
        await expired.shows("cardhall play: the auth token is refused: it has expired", "reason: expired")
    finally:
        expired.close()
    assert not (config / "cardhall" / "identity.json").exists()  # nothing kept of a refused sign-in

    guest = Terminal(["play", "--server", live.url, "--json"], env)
    try:
        assert await guest.exited() == 1
        await guest.shows("admits only players signed in through its operator's site", "--auth-file FILE")
    finally:
        guest.close()


@pytest.mark.parametrize("content", [None, b"", b" \n", b"\xff\xfe junk", b"x" * 20_000],
                         ids=["missing", "empty", "blank", "binary", "huge"])
def test_an_unusable_auth_file_is_said_before_connecting(tmp_path: Path, content: bytes | None,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "token.jwt"
    if content is not None:
        path.write_bytes(content)
    args = argparse.Namespace(server="ws://127.0.0.1:9/ws", name=None, json=True, fresh=False, auth_file=str(path))
    assert play.main(args) == 1  # port 9 is never asked: the file is read first
    said = capsys.readouterr().err
    assert said.startswith(f"cardhall play: --auth-file {path}: ") and said.count("\n") == 1, said
    word = {None: "cannot read it", b"": "empty", b" \n": "empty", b"\xff\xfe junk": "not text"}.get(content, "longer")
    assert word in said, said
