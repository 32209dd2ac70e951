"""Hand-history export for ``GET /api/tables/{id}/hands``.

The Hold'em engines record each hand as a PHH hand (``engine/phh.py``), so a
table's history is a ``.phhs`` text (hands ``[1]``, ``[2]``, ...; each with
its match number in ``_cardhall_match``). The other games have no standard
format: their records (``Engine.hand_record()``) go out as JSON.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from cardhall.engine import phh

Data = dict[str, Any]


def export_hands(game: str, table_id: str, records: Sequence[Data]) -> tuple[bytes, str]:
    """``(body, media type)`` for ``records`` (``{"match", "hand"}`` items, oldest first)."""
    if game in phh.GAME_VARIANTS:
        hands = [{**r["hand"], "_cardhall_match": r["match"]} for r in records]
        return phh.dumps_all(hands).encode(), "text/plain; charset=utf-8"
    body = {"table": table_id, "game": game, "hands": [{"match": r["match"], "hand": r["hand"]} for r in records]}
    return orjson.dumps(body, option=orjson.OPT_NON_STR_KEYS), "application/json"
