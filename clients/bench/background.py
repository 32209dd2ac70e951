"""A sampler's thread: runs beside a measurement while a ``with`` block lasts."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Self


class Background:
    """A daemon thread named ``name`` running ``target`` from ``with``'s
    start; at its end :attr:`_stop` is set and the thread joined (at most 5
    seconds). ``target`` returns once :attr:`_stop` is set."""

    def __init__(self, target: Callable[[], Any], name: str) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=target, daemon=True, name=name)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join(5)
