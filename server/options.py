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

from protocol.errors import ProtocolError

#: name -> (default, low, high, what it is). Seconds unless said otherwise.
TABLE_OPTIONS: dict[str, tuple[Any, float, float, str]] = {
    "action_clock": (30.0, 0.05, 3600.0, "seconds per decision before the time bank is used (G-3)"),
    "time_bank": (60.0, 0.0, 3600.0, "extra seconds per player per match (G-3)"),
    "pause": (1.0, 0.0, 60.0, "pause between streets and hands; 0 turns pacing off (G-4)"),
    "close_after": (600.0, 1.0, 7 * 86400.0, "idle time before a finished table with nobody connected closes (G-9)"),
    "bot_think": (0.5, 0.0, 30.0, "mean seconds a server bot waits before acting (uniform in 0.5x..1.5x)"),
    "auto_rematch": (False, 0, 1, "bots-only tables start the next match by themselves (G-7)"),
}

_BOOL = {"auto_rematch"}


def split_options(options: Mapping[str, Any] | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(table_options, game_options)``: table options resolved with defaults
    and checked (ProtocolError ``bad_options``), the rest passed through for the
    engine to check (``Engine.resolve_options``)."""
    if options is None:
        options = {}
    if not isinstance(options, Mapping):
        raise ProtocolError("bad_options", "options must be a map")
    table: dict[str, Any] = {}
    game: dict[str, Any] = {}
    for name, value in options.items():
        if not isinstance(name, str):
            raise ProtocolError("bad_options", "option names are strings")
        if name not in TABLE_OPTIONS:
            game[name] = value
            continue
        _, low, high, _ = TABLE_OPTIONS[name]
        if name in _BOOL:
            if not isinstance(value, bool):
                raise ProtocolError("bad_options", f"{name} must be true or false", option=name)
            table[name] = value
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
            raise ProtocolError("bad_options", f"{name} must be a number in [{low}, {high}]", option=name)
        table[name] = float(value)
    for name, (default, *_rest) in TABLE_OPTIONS.items():
        table.setdefault(name, default)
    return table, game
