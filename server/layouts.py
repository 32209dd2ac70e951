"""The event layouts of compact arrays (protocol 1.8, SPEC "Compact events").

Built from the schema documents of the core and of every registered game
(:func:`cardhall.protocol.compact.layouts_from`), once per state of the game
registry. A connection that says ``hello`` with ``compact: true`` gets them in
its ``welcome`` and keeps the same object for its life, so the indices it was
given stay the ones its frames use, whatever registers later.
"""

from __future__ import annotations

from functools import cache

from cardhall.engine import plugins
from cardhall.protocol import schemas
from cardhall.protocol.compact import Layouts, layouts_from


def current() -> Layouts:
    """The layouts of the games registered now. Raises ValueError when two
    schema definitions give one game the same event type twice."""
    return _at(plugins.generation())


@cache
def _at(generation: int) -> Layouts:
    return layouts_from(schemas.documents(), schemas.game_documents())
