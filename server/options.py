"""Table options the server handles itself (clocks, pacing, closing, bots).

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
)

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
        table[name] = float(value) if option.type == "number" else value
    for option in TABLE_OPTIONS:
        table.setdefault(option.name, option.default)
    return table, game
