"""The game catalogue (``GET /api/games``): what a client may ask
``create_table`` for, built from the data that checks it.

One entry per registered game (:data:`cardhall.engine.registry.GAMES`, the games
:mod:`cardhall.engine.plugins` discovered, in their order) whose engine imports:
its ``name`` (as in ``create_table``), ``title``, ``seats`` (``min``, ``max``
and the ``default`` when ``create_table`` names none), ``options`` (the
engine's ``options_spec``: the same :class:`cardhall.engine.options.Option` objects
``Engine.resolve_options`` checks values against), ``bots`` (the strategy
names of :data:`cardhall.engine.bots.registry.BOTS`) and ``default_bot``, and
``renderer`` when the game has a web renderer (the URL path of its ES module:
the registration's own, or :func:`cardhall.server.web.renderer_url` for a file it
names), and ``rules`` when it has a rules page (its URL path, :func:`cardhall.server.rules.rules_url`);
beside them ``table_options`` (:data:`cardhall.server.options.TABLE_OPTIONS`).
So the catalogue cannot disagree with what the server accepts, and it is the
list of games a client must use. Every numeric option carries its ``min`` and
``max`` (:class:`cardhall.engine.options.Option` requires both): the bounds
``create_table`` is checked against (``bad_options`` past them).

>>> entry = next(g for g in catalogue()["games"] if g["name"] == "loco_poker")
>>> entry["seats"], entry["bots"], entry["default_bot"]
({'min': 2, 'max': 8, 'default': 6}, ['random', 'threshold'], 'threshold')
>>> next(o for o in entry["options"] if o["name"] == "points_to_win")["rule"]
'LO-6'
"""

from __future__ import annotations

import logging
from functools import cache
from typing import Any

from cardhall.engine import plugins
from cardhall.engine.base import Engine
from cardhall.engine.bots.registry import DEFAULT, bot_names
from cardhall.engine.registry import GAMES, engine_class
from cardhall.server.options import TABLE_OPTIONS
from cardhall.server.rules import rules_url
from cardhall.server.web import renderer_url

log = logging.getLogger("cardhall.catalogue")

Data = dict[str, Any]

#: seats a table gets when ``create_table`` names none (fewer when the game takes fewer)
DEFAULT_SEATS = 6


def default_seats(cls: type[Engine]) -> int:
    """Seats of a table of ``cls``'s game when ``create_table`` gives no
    ``seats``: :data:`DEFAULT_SEATS`, or the game's least when it cannot seat
    that many (Alamo: 2)."""
    return DEFAULT_SEATS if cls.min_seats <= DEFAULT_SEATS <= cls.max_seats else cls.min_seats


def catalogue() -> Data:
    """``{"games": [entry, ...], "table_options": [option, ...]}`` (see the
    module docstring; an option is :meth:`cardhall.engine.options.Option.describe`).
    The same object on every call while the registry stays as it is: do not modify it."""
    return _catalogue(plugins.generation())


@cache
def _catalogue(generation: int) -> Data:
    games = []
    for name in GAMES:
        try:
            cls = engine_class(name)
        except (ImportError, AttributeError) as exc:  # a registered engine that does not import here
            log.error("game %s left out of the catalogue: its engine does not import (%s)", name, exc)
            continue
        entry: Data = {
            "name": name, "title": cls.title,
            "seats": {"min": cls.min_seats, "max": cls.max_seats, "default": default_seats(cls)},
            "options": [o.describe() for o in cls.options_spec],
            "bots": bot_names(name), "default_bot": DEFAULT[name],
        }
        url = renderer_url(plugins.spec(name))
        if url is not None:
            entry["renderer"] = url
        page = rules_url(plugins.spec(name))
        if page is not None:
            entry["rules"] = page
        games.append(entry)
    return {"games": games, "table_options": [o.describe() for o in TABLE_OPTIONS]}
