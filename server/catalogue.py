"""The game catalogue (``GET /api/games``): what a client may ask
``create_table`` for, built from the data that checks it.

One entry per game of :data:`cardhall.engine.registry.GAMES` whose engine is present:
its ``name`` (as in ``create_table``), ``title``, ``seats`` (``min``, ``max``
and the ``default`` when ``create_table`` names none), ``options`` (the
engine's ``options_spec``: the same :class:`cardhall.engine.options.Option` objects
``Engine.resolve_options`` checks values against), ``bots`` (the strategy
names of :data:`cardhall.engine.bots.registry.BOTS`) and ``default_bot``; beside them
``table_options`` (:data:`cardhall.server.options.TABLE_OPTIONS`). So the catalogue
cannot disagree with what the server accepts.

>>> entry = next(g for g in catalogue()["games"] if g["name"] == "loco_poker")
>>> entry["seats"], entry["bots"], entry["default_bot"]
({'min': 2, 'max': 8, 'default': 6}, ['random', 'threshold'], 'threshold')
>>> next(o for o in entry["options"] if o["name"] == "points_to_win")["rule"]
'LO-6'
"""

from __future__ import annotations

from functools import cache
from typing import Any

from cardhall.engine.base import Engine
from cardhall.engine.bots.registry import DEFAULT, bot_names
from cardhall.engine.registry import GAMES, engine_class
from cardhall.server.options import TABLE_OPTIONS

Data = dict[str, Any]

#: seats a table gets when ``create_table`` names none (fewer when the game takes fewer)
DEFAULT_SEATS = 6


def default_seats(cls: type[Engine]) -> int:
    """Seats of a table of ``cls``'s game when ``create_table`` gives no
    ``seats``: :data:`DEFAULT_SEATS`, or the game's least when it cannot seat
    that many (Alamo: 2)."""
    return DEFAULT_SEATS if cls.min_seats <= DEFAULT_SEATS <= cls.max_seats else cls.min_seats


@cache
def catalogue() -> Data:
    """``{"games": [entry, ...], "table_options": [option, ...]}`` (see the
    module docstring; an option is :meth:`cardhall.engine.options.Option.describe`).
    The same object on every call: do not modify it."""
    games = []
    for name in GAMES:
        try:
            cls = engine_class(name)
        except (ImportError, AttributeError):  # an engine this server does not have
            continue
        games.append({
            "name": name, "title": cls.title,
            "seats": {"min": cls.min_seats, "max": cls.max_seats, "default": default_seats(cls)},
            "options": [o.describe() for o in cls.options_spec],
            "bots": bot_names(name), "default_bot": DEFAULT[name],
        })
    return {"games": games, "table_options": [o.describe() for o in TABLE_OPTIONS]}
