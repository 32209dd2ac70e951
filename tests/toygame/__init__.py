"""High Card, a test-only game registered from outside the ``cardhall`` package.

This package is everything the game needs: its engine (:mod:`tests.toygame.engine`),
its own bot (:mod:`tests.toygame.bot`), its schema document (``high_card.json``),
its browser module (``web.js``: the generic drawing, its option labels, the
fairness replay of its deal and its hand-history records) and this
registration. The terminal client draws it with its generic view. Load it with ``CARDHALL_GAMES=tests.toygame``
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
    web_renderer=Path(__file__).resolve().with_name("web.js"),
    rules=Path(__file__).resolve().with_name("rules.md"),
)
