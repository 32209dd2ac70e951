"""A strategy that thinks until the test lets it (tests/server/test_thinker.py).

``StallBot`` is costly (the server thinks it in its worker pool): it marks
``$CARDHALL_TEST_STALL/thinking`` when it starts, waits for ``go`` in that
folder (at most 10 s), marks ``done`` and folds. Thought on the event loop,
it would hold the whole node for as long as it waits.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cardhall.engine.bots.base import Bot, Data

#: the longest a StallBot waits for ``go``, seconds
LONGEST = 10.0


class StallBot(Bot):
    """Fold once the test says ``go`` (see the module docstring)."""

    name = "stall"
    costly = True

    def choose(self, view: Mapping[str, Any], legal: Sequence[Data]) -> Data:
        folder = Path(os.environ["CARDHALL_TEST_STALL"])
        (folder / "thinking").touch()
        deadline = time.monotonic() + LONGEST
        while not (folder / "go").exists() and time.monotonic() < deadline:
            time.sleep(0.01)  # a simulation's CPU time, stood in for by waiting: it is what the loop must not do
        (folder / "done").touch()
        return {"type": "fold"}
