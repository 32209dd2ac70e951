"""High Card, a test-only game registered from outside the ``cardhall`` package.

This package is everything the game needs: its engine (:mod:`tests.toygame.engine`),
its own bot (:mod:`tests.toygame.bot`), its schema document (``high_card.json``)
and this registration. It has no renderer, so the browser and terminal clients
draw it with their generic ones. Load it with ``CARDHALL_GAMES=tests.toygame``
(the repository root importable) or ``plugins.register(*plugins.load_module("tests.toygame"))``.
"""

from __future__ import annotations

from pathlib import Path

from cardhall.engine.plugins import GameSpec
from tests.toygame.engine import HighCard

GAME = GameSpec(
    name="high_card",
    engine=HighCard,
    bots={"bold": "tests.toygame.bot:BoldBot"},
    default_bot="bold",
    schema=Path(__file__).resolve().with_name("high_card.json"),
    quick_options={"hands": 2},
)
