"""The event layouts of compact arrays (protocol 1.8, SPEC "Compact events").

Built from the schema documents of the core and of every registered game
(:func:`cardhall.protocol.compact.layouts_from`), read as JSON (the schema
validator is an extra the server does without), once per state of the game
registry. A connection that says ``hello`` with ``compact: true`` gets them in
its ``welcome`` and keeps the same object for its life, so the indices it was
given stay the ones its frames use, whatever registers later.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from cardhall.engine import plugins
from cardhall.protocol.compact import Layouts, layouts_from


def current() -> Layouts:
    """The layouts of the games registered now. Raises ValueError when two
    schema definitions give one game the same event type twice, OSError or
    ValueError when a schema document cannot be read as JSON."""
    return _at(plugins.generation())


@cache
def _at(generation: int) -> Layouts:
    documents: dict[str, dict[str, Any]] = {"server.json": json.loads(plugins.builtin_schema("server.json").read_text())}
    games: dict[str, str] = {}
    for game, spec in plugins.games().items():
        if spec.schema is None:
            continue
        name = f"{game}:{spec.schema}"  # one entry per game: two games may share a document
        documents[name] = json.loads(spec.schema.read_text())
        games[game] = name
    return layouts_from(documents, games)
