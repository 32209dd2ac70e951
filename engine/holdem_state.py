"""Hold'em: the whole match state as plain data, and back.

``to_data()`` is what the table service stores (``STATE_VERSION`` 1; the
layout must not change without a new version); ``state_data()`` is the same
data sharing the live lists, for a caller that packs it at once;
``from_data()`` rebuilds an equal engine (ValueError on malformed data).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self

from cardhall.engine.base import Data
from cardhall.engine.blinds import Positions
from cardhall.engine.cards import CardError, validate
from cardhall.engine.holdem_hand import Hand, HoldemBase

STATE_VERSION = 1


class HoldemState(HoldemBase):
    """Serialisation of :class:`cardhall.engine.holdem.HoldemEngine`."""

    def to_data(self) -> Data:
        """The whole state (options, random source, chips, positions, the hand) as plain data."""
        return self._data(True)

    def state_data(self) -> Data:
        """:meth:`to_data`, sharing the engine's lists (``Engine.state_data``)."""
        return self._data(False)

    def _data(self, copy: bool) -> Data:
        """:meth:`to_data` (``copy``) or :meth:`state_data`: the same data, the
        latter sharing the options and the hand's lists instead of copying them."""
        return {
            "game": self.game,
            "version": STATE_VERSION,
            "seats": list(self.seats),
            "options": copy_data(self.options) if copy else self.options,
            "rng": self.rng_to_data(self.rng),
            "chips": {str(s): c for s, c in self.chips.items()},
            "hand_number": self.hand_number,
            "first_button": self.first_button,
            "positions": list(self.positions) if self.positions else None,
            "level": self.level,
            "eliminated": [list(g) for g in self.eliminated],
            "started": self.started,
            "finished": self.is_finished,
            "pending": self._pending,
            "hand": self.hand.to_data(copy) if self.hand is not None else None,
        }

    @classmethod
    def from_data(cls, data: Data) -> Self:
        """Inverse of :meth:`to_data`; raises ValueError on malformed data."""
        try:
            if data["game"] != cls.game or data["version"] != STATE_VERSION:
                raise ValueError(f"not a {cls.game} state of version {STATE_VERSION}")
            seats = [int(s) for s in data["seats"]]
            self = cls.__new__(cls)
            self._init_fields(sorted(seats), copy_data(data["options"]), cls.rng_from_data(data["rng"]))
            self.chips = {int(s): int(c) for s, c in data["chips"].items()}
            self.hand_number = int(data["hand_number"])
            self.first_button = data["first_button"]
            self.positions = Positions(*data["positions"]) if data["positions"] else None
            self.level = int(data["level"])
            self.eliminated = [[int(s) for s in g] for g in data["eliminated"]]
            self.started = bool(data["started"])
            self.is_finished = bool(data["finished"])
            self._pending = data["pending"]
            self.hand = Hand.from_data(data["hand"]) if data["hand"] is not None else None
            if self.hand is not None:
                for card in self.hand.deck:
                    validate(card)
        except (KeyError, TypeError, AttributeError, CardError) as exc:
            raise ValueError(f"malformed {cls.game} state: {exc!r}") from exc
        if set(self.chips) != set(seats):
            raise ValueError(f"malformed {cls.game} state: chips must cover the seats")
        return self

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self.to_data() == other.to_data()


def copy_data(value: Any) -> Any:
    """A deep copy of plain data (maps become dicts, lists and tuples lists)."""
    if isinstance(value, Mapping):
        return {k: copy_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [copy_data(v) for v in value]
    return value
