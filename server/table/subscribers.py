"""Who watches a table, and as whom (G-4, G-5: presence is a rule).

A subscriber is a key: a connection of this process (its id, an ``int``) or
a connection of another node of a cluster (:class:`RemoteSub`), watching as
a *viewer*: a seat its player holds, or None (a spectator). The table treats
both alike; the actor's host finds the one or the other. In stored states
and the input log a key is an ``int`` or the string ``"node/connection"``
(:func:`stored_key`, :func:`key_from_stored`).
Subscribers are grouped by viewer, so presence per seat is a count and the
fan-out can encode each event once per distinct view. Each remembers the
player id its join came from, so a player's ``rename`` reaches the tables
it watches (:mod:`.naming`).

>>> subs = Subscribers()
>>> subs.subscribe("a", 2) is NOT_JOINED, subs.subscribe("b", None), subs.presence(2), subs.spectators
(True, <Absent.NOT_JOINED: 0>, 1, 1)
>>> subs.unsubscribe("a"), subs.presence(2), subs.count
(2, 0, 1)
>>> subs.subscribe("c", None, "p_1"), subs.watching("p_1"), subs.unsubscribe("c"), subs.watching("p_1")
(<Absent.NOT_JOINED: 0>, True, None, False)
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, Literal


@dataclass(frozen=True, slots=True)
class RemoteSub:
    """Connection ``conn`` of node ``node``, watching a table served here.

    >>> key = RemoteSub("n1", 7)
    >>> stored_key(key), key_from_stored("n1/7") == key, key_from_stored(7)
    ('n1/7', True, 7)
    """

    node: str
    conn: int

    def __str__(self) -> str:
        return f"{self.node}/{self.conn}"


#: a subscriber: a local connection's id, or a connection of another node
SubKey = Hashable


def stored_key(key: Hashable) -> Hashable:
    """``key`` as a stored state or log entry holds it (a remote one as ``"node/connection"``)."""
    return str(key) if isinstance(key, RemoteSub) else key


def key_from_stored(value: Any) -> Hashable:
    """The key :func:`stored_key` gave ``value`` for (a ``"node/connection"``
    string is a :class:`RemoteSub`; anything else stays as it is)."""
    if isinstance(value, str):
        node, _, conn = value.rpartition("/")
        if node and conn.isdigit():
            return RemoteSub(node, int(conn))
    return value


class Absent(Enum):
    """The viewer of a key that is not subscribed."""

    NOT_JOINED = 0


NOT_JOINED = Absent.NOT_JOINED
Viewer = int | None
MaybeViewer = int | None | Literal[Absent.NOT_JOINED]


class Subscribers:
    """Subscriber key -> viewer, the keys of each viewer (insertion order), and
    each key's player id (when its join named one)."""

    __slots__ = ("_players", "_watching", "changes", "groups", "viewers")

    def __init__(self) -> None:
        self.viewers: dict[Hashable, Viewer] = {}
        self.groups: dict[Viewer, dict[Hashable, None]] = {}
        self._players: dict[Hashable, str] = {}
        self._watching: dict[str, int] = {}  # player id -> its subscribed keys
        #: subscribes and unsubscribes so far (a step that changed who watches is logged)
        self.changes = 0

    def subscribe(self, key: Hashable, viewer: Viewer, player: str | None = None) -> MaybeViewer:
        """Subscribe ``key`` as ``viewer`` for ``player`` (None: the player it
        had, if any); returns the viewer it had, or :data:`NOT_JOINED`."""
        self.changes += 1
        previous: MaybeViewer = self.viewers.get(key, NOT_JOINED)
        if previous is not NOT_JOINED:
            self.groups[previous].pop(key, None)
        self.viewers[key] = viewer
        self.groups.setdefault(viewer, {})[key] = None
        if player is not None and self._players.get(key) != player:
            self._forget_player(key)
            self._players[key] = player
            self._watching[player] = self._watching.get(player, 0) + 1
        return previous

    def _forget_player(self, key: Hashable) -> None:
        player = self._players.pop(key, None)
        if player is not None:
            left = self._watching[player] - 1
            if left:
                self._watching[player] = left
            else:
                del self._watching[player]

    def unsubscribe(self, key: Hashable) -> MaybeViewer:
        """Forget ``key``; returns the viewer it had, or :data:`NOT_JOINED`."""
        if key not in self.viewers:
            return NOT_JOINED
        self.changes += 1
        self._forget_player(key)
        viewer = self.viewers.pop(key)
        group = self.groups.get(viewer)
        if group is not None:
            group.pop(key, None)
        return viewer

    def viewer(self, key: Hashable) -> MaybeViewer:
        """``key``'s viewer (a seat or None), or :data:`NOT_JOINED`."""
        return self.viewers.get(key, NOT_JOINED)

    def player(self, key: Hashable) -> str | None:
        """The player id ``key`` subscribed for (None: not known, or not subscribed)."""
        return self._players.get(key)

    def watching(self, player: str) -> bool:
        """True when a subscriber of ``player`` watches (as a seat or a spectator)."""
        return player in self._watching

    def keys_of(self, player: str) -> list[Hashable]:
        """The keys subscribed for ``player`` (its connections here), in the order they subscribed.

        >>> subs = Subscribers()
        >>> _ = subs.subscribe("a", 1, "p_1"), subs.subscribe("b", None, "p_2"), subs.subscribe("c", None, "p_1")
        >>> subs.keys_of("p_1"), subs.keys_of("p_3")
        (['a', 'c'], [])
        """
        if player not in self._watching:
            return []
        return [key for key in self.viewers if self._players.get(key) == player]

    def presence(self, seat: int) -> int:
        """How many subscribers watch as ``seat`` (its player's connections)."""
        return len(self.groups.get(seat, ()))

    def by_viewer(self) -> Mapping[Viewer, Mapping[Hashable, None]]:
        """Viewer -> its subscribers (groups may be empty)."""
        return self.groups

    @property
    def count(self) -> int:
        """Subscribers, every viewer counted."""
        return len(self.viewers)

    @property
    def spectators(self) -> int:
        """Subscribers watching as spectators."""
        return len(self.groups.get(None, ()))

    def __contains__(self, key: object) -> bool:
        return key in self.viewers

    def items(self) -> list[tuple[Hashable, Viewer]]:
        """``(key, viewer)`` of every subscriber, in the order they subscribed."""
        return list(self.viewers.items())

    def __iter__(self) -> Iterator[Hashable]:
        return iter(list(self.viewers))
