"""What a table actor reports to and reaches through its host: the
:class:`TableMetrics` it counts, and :class:`RelayedPeer`, a subscriber
connected to another node of a cluster (the host itself,
:class:`~cardhall.server.table.actor.TableHost`, is defined with the actor)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from cardhall.server.fanout import Peer

Data = dict[str, Any]


class TableMetrics(Protocol):
    """The metrics a table reports."""

    def error(self, code: str) -> None:
        """An error frame with ``code`` was sent."""

    def published(self, actions: int, events: int, latencies: Sequence[float]) -> None:
        """``actions`` applied and ``events`` published; ``latencies``: seconds
        from each action's arrival to its events being queued."""


class RelayedPeer(Peer, Protocol):
    """A subscriber on another node: its events reach its node with the
    commit; what is for it alone is marked with the ``seq`` it follows
    (:meth:`Peer.follows`) and, for a join answer, the view the table gave it
    (:meth:`Peer.answers_join`)."""
