"""Checking a stored table before it is restored: its options must be those
a new table could have (``server/STORAGE.md``, "Quarantine").

A checkpoint written by another version, or edited by hand, may lack a table
option added since or hold a value past the bounds ``GET /api/games`` shows
(``cardhall.engine.options``): restoring it would break the table later, in
the middle of play, or again after every restart. Refused here, the hall
quarantines it at once instead.

>>> check_stored_options("loco_poker", {"action_clock": 30.0}, {})
Traceback (most recent call last):
...
cardhall.engine.options.OptionError: time_bank: missing from the stored table options
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cardhall.engine.options import OptionError
from cardhall.engine.registry import engine_class
from cardhall.server.options import TABLE_OPTIONS


def check_stored_options(game: Any, table_options: Any, game_options: Any) -> None:
    """Stored options as a new table of ``game`` gets them: every table option
    of :data:`~cardhall.server.options.TABLE_OPTIONS` present and within its
    bounds, and the game's options accepted by its engine
    (``Engine.resolve_options``: the same bounds). Raises
    :class:`~cardhall.engine.options.OptionError` (a ValueError) naming the
    option, ValueError when the options are not maps, KeyError for an
    unknown game."""
    if not isinstance(table_options, Mapping) or not isinstance(game_options, Mapping):
        raise ValueError("the stored options are not maps")
    for option in TABLE_OPTIONS:
        if option.name not in table_options:
            raise OptionError(option.name, "missing from the stored table options")
        option.check(table_options[option.name])
    engine_class(game).resolve_options(game_options)
