"""Table options the server handles itself (clocks, pacing, closing, bots, privacy).

``create_table``'s ``options`` map holds both these and the game's own options
(``Engine.default_options``); :func:`split_options` separates them, so a name
here never reaches an engine.

>>> table, game = split_options({"action_clock": 10, "blind_levels": "off"})
>>> table["action_clock"], table["time_bank"], game
(10.0, 60.0, {'blind_levels': 'off'})
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cardhall.engine.options import Option, OptionError
from cardhall.protocol.errors import ProtocolError

#: the most characters of a table's ``password`` (SPEC "Private tables")
PASSWORD_MAX = 64

#: the table options, as data (the same :class:`cardhall.engine.options.Option` as the
#: games' options; the catalogue ``GET /api/games`` lists them). Seconds unless
#: said otherwise.
TABLE_OPTIONS: tuple[Option, ...] = (
    Option("action_clock", 30.0, "number", "seconds per decision before the time bank is used", "G-3",
           min=0.05, max=3600.0),
    Option("time_bank", 60.0, "number", "extra seconds per player per match", "G-3", min=0.0, max=3600.0),
    Option("pause", 1.0, "number", "seconds between streets and hands; 0 turns pacing off", "G-4",
           min=0.0, max=60.0),
    Option("close_after", 600.0, "number", "seconds before a finished table with nobody connected closes", "G-9",
           min=1.0, max=7 * 86400.0),
    Option("bot_think", 0.5, "number", "mean seconds a server bot waits before acting (uniform in 0.5x..1.5x)",
           min=0.0, max=30.0),
    Option("auto_rematch", False, "bool", "bots-only tables start the next match by themselves", "G-7"),
    # private tables (SPEC "Private tables", 1.5)
    Option("visibility", "public", "choice", "public: in the lobby; unlisted: in no lobby, joined with the "
           "table's invite (table_created.invite)", choices=("public", "unlisted")),
    Option("password", None, "text", f"a join as player must carry it (1 to {PASSWORD_MAX} characters; "
           "null: none); never shown again", max=PASSWORD_MAX, nullable=True),
    Option("password_spectators", False, "bool", "a join as spectator must carry the password too"),
    Option("approve_seats", False, "bool", "the owner approves or denies each player's request for a seat"),
    Option("approve_within", 120.0, "number", "seconds a request for a seat waits for the owner's answer "
           "before it lapses", min=1.0, max=3600.0),
)

#: the table options added in 1.5 (SPEC "Private tables"): a table stored before has none of them
#: (their defaults apply); ``password`` is never stored (only its hash, with the table's privacy)
ADDED_LATER = frozenset({"visibility", "password", "password_spectators", "approve_seats", "approve_within"})

_BY_NAME = {o.name: o for o in TABLE_OPTIONS}


def split_options(options: Mapping[str, Any] | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(table_options, game_options)``: table options resolved with defaults
    and checked against :data:`TABLE_OPTIONS` (ProtocolError ``bad_options``
    naming the option; numbers become floats, seconds), the rest passed
    through for the engine to check (``Engine.resolve_options``)."""
    if options is None:
        options = {}
    if not isinstance(options, Mapping):
        raise ProtocolError("bad_options", "options must be a map")
    table: dict[str, Any] = {}
    game: dict[str, Any] = {}
    for name, value in options.items():
        if not isinstance(name, str):
            raise ProtocolError("bad_options", "option names are strings")
        option = _BY_NAME.get(name)
        if option is None:
            game[name] = value
            continue
        try:
            option.check(value)
        except OptionError as exc:
            raise ProtocolError("bad_options", str(exc), option=name) from None
        if name == "password" and value == "":
            raise ProtocolError("bad_options", f"password: 1 to {PASSWORD_MAX} characters, or null for none",
                                option=name)
        table[name] = float(value) if option.type == "number" else value
    for option in TABLE_OPTIONS:
        table.setdefault(option.name, option.default)
    return table, game
