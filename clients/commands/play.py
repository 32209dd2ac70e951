"""``cardhall play``: the terminal client (``clients/tui/app.py``).

    cardhall play [--server ws://127.0.0.1:8000/ws] [--name NAME] [--fresh] [--json] [--auth-file FILE]

It keeps who you are per server (the player's token, name and tables) in
``identity.json`` in the user's config folder (``$XDG_CONFIG_HOME/cardhall`` on
Linux, :mod:`cardhall.clients.tui.identity`): started again, it is the same
player and the lobby offers to return to its seats; ``--fresh`` starts a new player.

``--auth-file FILE``: sign in with a JWT the server's operator issued
(protocol/SPEC.md "Identity"), read from a file so that it is in neither the
shell's history nor ``ps``. The player is then that account's, and its resume
token is kept as above: later starts need no file until the server forgets the
player. A file that cannot be read, or a token the server refuses, ends the
command with a line saying why and exit status 1.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

#: a JWT longer than this is refused by the server unread (SPEC "Identity"); a bigger file is not one
MAX_AUTH_BYTES = 16_384


def register(subparsers: Any) -> None:
    """Add the ``play`` subcommand."""
    p = subparsers.add_parser("play", help="play or watch in the terminal (lobby, tables, keyboard actions)",
                              description="The terminal client: lobby, create/join/watch tables, play by keys. "
                                          "It remembers who you are on each server (in the user's config folder) "
                                          "and returns to your seats when started again.")
    p.add_argument("--server", default="ws://127.0.0.1:8000/ws", help="websocket URL (default ws://127.0.0.1:8000/ws)")
    p.add_argument("--name", default=None,
                   help="your name at the tables (default: the name kept for this server, else 'player')")
    p.add_argument("--fresh", action="store_true",
                   help="forget the player kept for this server and start as a new player")
    p.add_argument("--json", action="store_true", help="use the JSON subprotocol (default msgpack)")
    p.add_argument("--auth-file", metavar="FILE", default=None,
                   help="sign in with the token (a JWT) in FILE that the server's operator issued you; "
                        "the player is then kept for this server as usual")
    p.add_argument("--join", metavar="LINK", default=None,
                   help="join the table of an invite link (PAGE/#table=ID&invite=INVITE) once the lobby shows; "
                        "a password or the host's approval is asked for there")
    p.set_defaults(func=main)


class AuthFileError(ValueError):
    """The ``--auth-file`` cannot be used; the message says why, naming the file."""


def read_auth_file(path: str) -> str:
    """The JWT in the file at ``path``: its text, white space around it removed (an editor's
    line break is not part of it). Raises :class:`AuthFileError` when the file cannot be read,
    is not UTF-8 text, is empty or is far longer than any token."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_AUTH_BYTES + 1)
    except OSError as exc:
        raise AuthFileError(f"--auth-file {path}: cannot read it ({exc.strerror or exc})") from None
    if len(data) > MAX_AUTH_BYTES:
        raise AuthFileError(f"--auth-file {path}: longer than {MAX_AUTH_BYTES} bytes: not a token")
    try:
        token = data.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise AuthFileError(f"--auth-file {path}: not text: it should hold the token (a JWT)") from None
    if not token:
        raise AuthFileError(f"--auth-file {path}: empty: it should hold the token (a JWT)")
    return token


def main(args: argparse.Namespace) -> int:
    """Run the terminal client; its exit status (2: the server refused the name, 1: unreachable,
    an ``--auth-file`` that cannot be read, a token refused or one needed)."""
    from cardhall.clients.tui.app import CardhallApp
    from cardhall.clients.tui.identity import IdentityStore

    auth_file = getattr(args, "auth_file", None)  # a Namespace built without --auth-file: a guest or the kept player
    try:
        auth = read_auth_file(auth_file) if auth_file is not None else None
    except AuthFileError as exc:
        print(f"cardhall play: {exc}", file=sys.stderr)
        return 1
    # a Namespace built without --fresh or --join: keep the player, join nothing
    app = CardhallApp(args.server, args.name, "json" if args.json else "msgpack", identity=IdentityStore(),
                      fresh=getattr(args, "fresh", False), auth=auth, join=getattr(args, "join", None))
    app.run()
    return app.return_code or 0
