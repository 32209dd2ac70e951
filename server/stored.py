"""A stored table before it is restored: its state now (the last full state
with its input log replayed: :func:`current`), whose options must be those
a new table could have (``server/STORAGE.md``, "The input log", "Quarantine").

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
from cardhall.server.options import ADDED_LATER, TABLE_OPTIONS
from cardhall.server.store.base import StoredTable
from cardhall.server.table.replay import replay


def current(item: StoredTable) -> tuple[StoredTable, int]:
    """``(table, steps)``: ``item`` with its input log replayed onto its last
    full state (``data`` the state the table had after its last logged step,
    ``log`` empty) and the number of steps replayed; a log that cannot be
    replayed (:func:`~cardhall.server.table.replay.replay`) makes the table
    unreadable (``error``: the hall quarantines it). An item without a log
    or already unreadable is returned as it is."""
    if item.data is None or not item.log:
        return item, 0
    try:
        data, steps = replay(item.data, item.log)
    except Exception as exc:  # ReplayError, or a state the machine refuses
        return StoredTable(item.id, error=f"its input log cannot be replayed: {exc}"[:300]), 0
    return StoredTable(item.id, data), steps


def check_stored_options(game: Any, table_options: Any, game_options: Any) -> None:
    """Stored options as a new table of ``game`` gets them: every table option
    of :data:`~cardhall.server.options.TABLE_OPTIONS` present (those added in
    1.5 may be absent: :data:`~cardhall.server.options.ADDED_LATER`) and within its
    bounds, and the game's options accepted by its engine
    (``Engine.resolve_options``: the same bounds). Raises
    :class:`~cardhall.engine.options.OptionError` (a ValueError) naming the
    option, ValueError when the options are not maps, KeyError for an
    unknown game."""
    if not isinstance(table_options, Mapping) or not isinstance(game_options, Mapping):
        raise ValueError("the stored options are not maps")
    for option in TABLE_OPTIONS:
        if option.name not in table_options:
            if option.name in ADDED_LATER:  # stored before 1.5 (or the password, never stored): the default
                continue
            raise OptionError(option.name, "missing from the stored table options")
        option.check(table_options[option.name])
    engine_class(game).resolve_options(game_options)
