"""Checking a ``create_table`` request: game, seats, options and bots.

>>> check({"game": "loco_poker", "seats": 3, "bots": 2})[0:2]
('loco_poker', 3)
>>> check({"game": "chess"})
Traceback (most recent call last):
...
cardhall.protocol.errors.ProtocolError: unknown game 'chess'; ...
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any

from cardhall.engine.base import test_rng
from cardhall.engine.bots.registry import BOTS, DEFAULT, make_bot
from cardhall.engine.options import OptionError
from cardhall.engine.registry import GAMES, engine_class
from cardhall.protocol.errors import ProtocolError
from cardhall.server import passwords
from cardhall.server.catalogue import default_seats
from cardhall.server.options import split_options
from cardhall.server.table.privacy import Privacy

Data = dict[str, Any]

#: bytes of a table's invite secret (SPEC "Private tables": at least 128 bits, apart from the table id)
INVITE_BYTES = 16


def check(spec: Mapping[str, Any]) -> tuple[str, int, Data, Data, list[str | None]]:
    """``(game, seats, table options, game options, bots)`` of a
    ``create_table`` map (SPEC "create_table"): ``game`` a known game,
    ``seats`` within its range (default: the catalogue's), ``options``
    accepted by the game (checked by building a table with them), ``bots`` a
    count or a list of bot names (None or "" for the game's default). Raises
    ProtocolError ``unknown_game``, ``bad_request`` or ``bad_options``."""
    game = spec.get("game")
    if not isinstance(game, str):
        raise ProtocolError("bad_request", "game is required: the name of one of the server's games (GET /api/games)")
    if game not in GAMES:
        raise ProtocolError("unknown_game", f"unknown game {game!r}; games: {', '.join(sorted(GAMES))}")
    try:
        cls = engine_class(game)
    except (ImportError, AttributeError):  # a registered plugin whose engine does not import here
        raise ProtocolError("unknown_game", f"{game} is not available on this server") from None
    seats = spec.get("seats", default_seats(cls))
    if isinstance(seats, bool) or not isinstance(seats, int):
        raise ProtocolError("bad_request", f"seats must be an integer ({game} takes {cls.min_seats} to {cls.max_seats})")
    if not cls.min_seats <= seats <= cls.max_seats:
        raise ProtocolError("bad_request", f"{game} takes {cls.min_seats} to {cls.max_seats} seats")
    table_opts, game_opts = split_options(spec.get("options"))
    try:
        cls.resolve_options(game_opts)
        cls.new(list(range(1, seats + 1)), game_opts, test_rng("options"))
    except OptionError as exc:
        raise ProtocolError("bad_options", str(exc), option=exc.option) from None
    except (ValueError, TypeError, KeyError) as exc:  # a rule over several options or the seats
        named = str(exc).split(":", 1)[0]  # the engines' convention: "<option>: <why>"
        extra = {"option": named} if named in {o.name for o in cls.options_spec} else {}
        raise ProtocolError("bad_options", str(exc), **extra) from None
    bots = _parse_bots(spec.get("bots"), game, seats)
    return game, seats, table_opts, game_opts, bots


async def sealed(spec: Mapping[str, Any]) -> tuple[str, int, Data, Data, list[str | None], Privacy]:
    """:func:`check`'s ``(game, seats, table options, game options, bots)``
    and the new table's :class:`~cardhall.server.table.privacy.Privacy`
    (:func:`seal`): the ``password`` option leaves the table options here.
    Raises as :func:`check` does."""
    game, seats, table_opts, game_opts, bots = check(spec)
    return game, seats, table_opts, game_opts, bots, await seal(table_opts)


async def seal(table_opts: Data) -> Privacy:
    """A new table's privacy (SPEC "Private tables"): a new invite (128 bits
    from the OS CSPRNG, :func:`secrets.token_urlsafe`: 22 characters) and the
    scrypt record of its ``password`` option (:mod:`cardhall.server.passwords`,
    derived in a worker thread), which is taken out of ``table_opts``: no table
    keeps a password, nor shows one."""
    password = table_opts.pop("password", None)
    record = await passwords.derive(password) if password is not None else None
    return Privacy(secrets.token_urlsafe(INVITE_BYTES), record)


def _parse_bots(value: Any, game: str, seats: int) -> list[str | None]:
    if value is None:
        return []
    if isinstance(value, bool):
        raise ProtocolError("bad_request", "bots is a count or a list of bot names")
    if isinstance(value, int):
        if not 0 <= value <= seats:
            raise ProtocolError("bad_request", f"between 0 and {seats} bots")
        names: list[Any] = [None] * value
    elif isinstance(value, list):
        names = value
    else:
        raise ProtocolError("bad_request", "bots is a count or a list of bot names")
    if not 0 <= len(names) <= seats:
        raise ProtocolError("bad_request", f"between 0 and {seats} bots")
    out: list[str | None] = []
    for name in names:
        if name in (None, ""):
            name = DEFAULT[game]
        if not (isinstance(name, str) and name in BOTS[game]):
            raise ProtocolError("bad_request", f"unknown bot {name!r}; {game} has {', '.join(sorted(BOTS[game]))}")
        try:
            make_bot(game, name, test_rng("bot check"))
        except (ImportError, AttributeError):  # a registered plugin's bot that does not import here
            raise ProtocolError("bad_request", f"the {name} bot of {game} is not available on this server") from None
        out.append(name)
    return out


def floor_think(table_opts: Data, owner: str | None, seats: int, bots: list[str | None], floor: float) -> None:
    """Raise ``table_opts["bot_think"]`` (seconds) to ``floor`` for a table
    nobody owns or whose ``seats`` are all ``bots``: such a table plays by
    itself, so without a floor a client could make the server's bots play
    at full speed on its behalf (deploy/README.md, ``--bot-think-floor``).

    >>> opts = {"bot_think": 0.0}
    >>> floor_think(opts, None, 3, [None], 0.5); opts["bot_think"]
    0.5
    >>> opts = {"bot_think": 0.0}
    >>> floor_think(opts, "p1", 3, [None], 0.5); opts["bot_think"]
    0.0
    """
    if floor > 0 and (owner is None or len(bots) >= seats):
        table_opts["bot_think"] = max(float(table_opts.get("bot_think", 0.0)), floor)
