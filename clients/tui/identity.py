"""Who ``cardhall play`` is on each server, kept between runs: the player's
token (a secret: it resumes the player, protocol/SPEC.md "Messages", ``hello``),
public id and name, and the tables it joined (table id, role, seat, game, and
an unlisted table's invite), so that a restarted client is the same player and
can return to its seats (G-5: a disconnected player keeps the seat).

One JSON file, ``identity.json`` in ``platformdirs.user_config_dir("cardhall")``
(on Linux ``$XDG_CONFIG_HOME/cardhall``, else ``~/.config/cardhall``), holds
``{"format": 1, "servers": {URL: entry}}``, an entry per server under its URL
(:func:`server_key`): ``token``, ``player``, ``name`` and ``tables`` (table id ->
``role``, ``seat``, ``game``, and ``invite`` for an unlisted table only), as the
example below shows. ``invite`` (protocol 1.5, SPEC "Private tables") is a secret
too: an unlisted table is in no lobby, so the client finds it again only by
asking ``GET /api/tables/{id}`` with it (:mod:`cardhall.clients.tui.lobby`), and
it is never shown or logged from here. A table kept without ``invite`` (a
public table, or a file written before it existed) loads with ``invite`` None. It is written
whole each time, atomically (a temporary file beside it, then ``os.replace``),
with mode 0600 (it holds secrets), its folder created (0700) as needed. A file that cannot be read or is not of this shape is reported
(:attr:`IdentityStore.problem`) and replaced by the next save: never a crash.

>>> import tempfile, pathlib
>>> store = IdentityStore(pathlib.Path(tempfile.mkdtemp()) / "identity.json")
>>> me = store.load("ws://h:1/ws"); me.token is None
True
>>> me.token, me.name = "secret", "ann"
>>> me.tables["t1"] = SavedTable("player", 1, "alamo")
>>> store.save("ws://h:1/ws", me)
>>> store.load("WS://H:1/ws").tables["t1"].seat, store.load("ws://other:1/ws").token
(1, None)
>>> json.loads(store.path.read_text())  # doctest: +NORMALIZE_WHITESPACE
{'format': 1, 'servers': {'ws://h:1/ws': {'name': 'ann', 'player': None,
 'tables': {'t1': {'game': 'alamo', 'role': 'player', 'seat': 1}}, 'token': 'secret'}}}
>>> me.tables["t2"] = SavedTable("spectator", None, "alamo", invite="Ab-_9")
>>> store.save("ws://h:1/ws", me)
>>> store.load("ws://h:1/ws").tables == {"t1": SavedTable("player", 1, "alamo"),
...                                      "t2": SavedTable("spectator", None, "alamo", "Ab-_9")}
True
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

#: the file's name in the user's config folder
FILE_NAME = "identity.json"
#: the shape's version, written as ``format``
FORMAT = 1
ROLES = ("player", "spectator")


def default_path() -> Path:
    """``identity.json`` in ``platformdirs.user_config_dir("cardhall")`` (honours ``XDG_CONFIG_HOME`` on Linux)."""
    import platformdirs

    return Path(platformdirs.user_config_dir("cardhall")) / FILE_NAME


def server_key(url: str) -> str:
    """The key of a server's entry: its websocket URL with the scheme and host in lower case.

    >>> server_key(" WS://Example.org:8000/ws ")
    'ws://example.org:8000/ws'
    """
    parts = urlsplit(url.strip())
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}{parts.path}"


@dataclass
class SavedTable:
    """A table joined: ``role`` (``player`` or ``spectator``), ``seat`` (the seat held, None
    when watching or not known), ``game`` (its protocol name, None when not known), ``invite``
    (an unlisted table's invite, a secret: how the lobby finds the table again and joins it,
    SPEC "Private tables"; None for a public table or when not known)."""

    role: str
    seat: int | None = None
    game: str | None = None
    invite: str | None = field(default=None, repr=False)  # a secret: never in a repr


@dataclass
class Identity:
    """The player on one server: ``token`` (None: none yet, a new player), ``player`` (the public
    id), ``name`` (as the server keeps it) and ``tables`` (table id -> :class:`SavedTable`)."""

    token: str | None = None
    player: str | None = None
    name: str | None = None
    tables: dict[str, SavedTable] = field(default_factory=dict)


class CorruptFile(ValueError):
    """The file is not of the shape :mod:`identity` writes."""


def _opt_str(value: Any, what: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise CorruptFile(f"{what} is not a string")


def _identity(entry: Any) -> Identity:
    """An :class:`Identity` from a server's entry; :class:`CorruptFile` when it is not of the shape."""
    if not isinstance(entry, dict):
        raise CorruptFile("a server's entry is not an object")
    tables = entry.get("tables", {})
    if not isinstance(tables, dict):
        raise CorruptFile("tables is not an object")
    kept: dict[str, SavedTable] = {}
    for table, t in tables.items():
        if not isinstance(t, dict) or t.get("role") not in ROLES:
            raise CorruptFile(f"table {table!r} has no role")
        seat = t.get("seat")
        if seat is not None and (not isinstance(seat, int) or isinstance(seat, bool)):
            raise CorruptFile(f"table {table!r}: the seat is not a number")
        kept[table] = SavedTable(t["role"], seat, _opt_str(t.get("game"), "game"), _opt_str(t.get("invite"), "invite"))
    return Identity(_opt_str(entry.get("token"), "token"), _opt_str(entry.get("player"), "player"),
                    _opt_str(entry.get("name"), "name"), kept)


def _table(saved: SavedTable) -> dict[str, Any]:
    """A kept table as the file holds it: ``invite`` only when there is one."""
    out: dict[str, Any] = {"role": saved.role, "seat": saved.seat, "game": saved.game}
    if saved.invite is not None:
        out["invite"] = saved.invite
    return out


def _entry(me: Identity) -> dict[str, Any]:
    return {"token": me.token, "player": me.player, "name": me.name,
            "tables": {t: _table(s) for t, s in me.tables.items()}}


class IdentityStore:
    """The identity file at ``path`` (default :func:`default_path`).

    :meth:`load` never raises: a missing file is an empty one, and a file that cannot be
    read or parsed is treated as empty, what was wrong kept in :attr:`problem` (for the
    caller to report); the next :meth:`save` replaces it. :meth:`save` and :meth:`forget`
    raise ``OSError`` when the file cannot be written."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else default_path()
        #: what was wrong with the file at the last read (None: nothing)
        self.problem: str | None = None

    def _read(self) -> dict[str, Any]:
        """Every server's entry in the file, as stored (``{}`` when missing or unusable)."""
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return {}
        except OSError as exc:
            self.problem = f"cannot read {self.path} ({exc}): starting afresh; it will be replaced"
            return {}
        try:
            data = json.loads(raw.decode("utf-8"))
            if not isinstance(data, dict) or not isinstance(data.get("servers"), dict):
                raise CorruptFile("no servers in it")
            for entry in data["servers"].values():
                _identity(entry)
        except (ValueError, RecursionError) as exc:  # JSONDecodeError, UnicodeDecodeError, CorruptFile
            self.problem = f"{self.path} is damaged ({exc}): starting afresh; it will be replaced"
            return {}
        servers: dict[str, Any] = data["servers"]
        return servers

    def load(self, server: str) -> Identity:
        """The identity kept for ``server`` (a websocket URL), empty when none is."""
        entry = self._read().get(server_key(server))
        return _identity(entry) if entry is not None else Identity()

    def save(self, server: str, identity: Identity) -> None:
        """Keep ``identity`` for ``server``; the other servers' entries as the file holds them now."""
        servers = self._read()
        servers[server_key(server)] = _entry(identity)
        self._write(servers)

    def forget(self, server: str) -> None:
        """Drop what is kept for ``server`` (``cardhall play --fresh``)."""
        servers = self._read()
        if servers.pop(server_key(server), None) is not None or self.problem:
            self._write(servers)

    def _write(self, servers: dict[str, Any]) -> None:
        """Write the whole file atomically: a 0600 temporary file in the same folder, flushed to
        disk, then renamed over the old one (a reader sees the old file or the new, never half)."""
        folder = self.path.parent
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{FILE_NAME}.", suffix=".tmp")  # created 0600
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump({"format": FORMAT, "servers": servers}, f, indent=2, sort_keys=True)
                f.write("\n")
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        self.problem = None
