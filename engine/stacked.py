"""A stacked deck: a :class:`~cardhall.engine.rng.RandomSource` that deals chosen cards.

Hand-history replay (``cardhall.engine.phh``), rule tests and differential tests need
an engine to deal exactly the cards a hand record says. Engines only ever
shuffle through their injected random source (RULES G-2), so a source whose
``shuffle(items)`` puts ``items`` into a given order makes the engine deal
that order: with the Hold'em dealing contract, ``order[0]`` is the first
card off the top.

Behaviour, precisely:

* ``shuffle(items)`` takes the next order from the queue given at
  construction, checks it is a permutation of ``items`` (the same cards,
  counted as a multiset so multi-deck games work too) and writes it into
  ``items`` in place. It raises :class:`StackedDeckError` when the queue is
  empty (an engine shuffled more often than the test planned) or when the
  order is not a permutation of ``items``.
* ``randbelow(n)`` follows the scripted list ``draws`` given at
  construction, one value per call, and raises :class:`StackedDeckError`
  when the script runs out or a value is not in ``[0, n)``. It never falls
  back to real randomness: a test that did not plan a random choice fails
  loudly instead of passing by luck.
* ``to_data()`` / :meth:`StackedDeck.from_data` carry the queue and the
  position in it, so an engine holding a stacked deck checkpoints and
  resumes exactly; ``cardhall.engine.rng.random_from_data`` recognises the kind
  ``"stacked"``.

>>> rng = StackedDeck(["Ah", "Kd", "2c"])
>>> cards = ["2c", "Kd", "Ah"]; rng.shuffle(cards); cards
['Ah', 'Kd', '2c']
>>> rng.shuffle(["2c", "Kd", "Ah"])
Traceback (most recent call last):
...
cardhall.engine.stacked.StackedDeckError: stacked deck: no order left for shuffle number 2
>>> StackedDeck(["Ah", "Kd"]).shuffle(["Ah", "Qs"])
Traceback (most recent call last):
...
cardhall.engine.stacked.StackedDeckError: stacked deck: the order is not a permutation of the items (missing ['Qs'], extra ['Kd'])
>>> rng = StackedDeck(draws=[2, 0]); rng.randbelow(3), rng.randbelow(9)
(2, 0)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import MutableSequence, Sequence
from typing import Any

KIND = "stacked"


class StackedDeckError(LookupError):
    """A stacked deck was asked for something its script does not hold:
    one shuffle too many, an order that is not a permutation of the items,
    or a ``randbelow`` beyond (or outside) the scripted draws."""

    def __init__(self, message: str) -> None:
        super().__init__(f"stacked deck: {message}")


class StackedDeck:
    """A scripted random source (see the module docstring).

    ``StackedDeck(order, *more_orders, draws=())``: ``order`` is the result
    of the first ``shuffle``, each of ``more_orders`` the result of the next
    one (a match of several hands shuffles once per hand); ``draws`` are the
    results of successive ``randbelow`` calls. Orders hold plain data (card
    strings), so the deck is plain data too.
    """

    __slots__ = ("_orders", "_shuffled", "_draws", "_drawn")

    def __init__(self, *orders: Sequence[Any], draws: Sequence[int] = ()) -> None:
        self._orders: list[list[Any]] = [list(order) for order in orders]
        self._shuffled = 0
        self._draws: list[int] = [int(d) for d in draws]
        self._drawn = 0

    @property
    def shuffles_left(self) -> int:
        """How many orders are still queued."""
        return len(self._orders) - self._shuffled

    @property
    def draws_left(self) -> int:
        """How many scripted ``randbelow`` results are still queued."""
        return len(self._draws) - self._drawn

    def shuffle(self, items: MutableSequence[Any]) -> None:
        """Put ``items`` into the next queued order, in place.

        Raises :class:`StackedDeckError` when no order is left or the order
        is not a permutation of ``items``; ``items`` is then left unchanged.
        """
        if self._shuffled >= len(self._orders):
            raise StackedDeckError(f"no order left for shuffle number {self._shuffled + 1}")
        order = self._orders[self._shuffled]
        if len(order) != len(items) or Counter(order) != Counter(items):
            have, want = Counter(items), Counter(order)
            missing = sorted((have - want).elements(), key=str)
            extra = sorted((want - have).elements(), key=str)
            raise StackedDeckError(
                f"the order is not a permutation of the items (missing {missing}, extra {extra})"
            )
        items[:] = order
        self._shuffled += 1

    def randbelow(self, n: int) -> int:
        """The next scripted value; raises :class:`StackedDeckError` when the
        script is exhausted or the value is not in ``[0, n)``, ValueError if n < 1."""
        if n < 1:
            raise ValueError("randbelow needs n >= 1")
        if self._drawn >= len(self._draws):
            raise StackedDeckError(f"no scripted draw left for randbelow({n})")
        value = self._draws[self._drawn]
        if not 0 <= value < n:
            raise StackedDeckError(f"scripted draw {value} is not in [0, {n})")
        self._drawn += 1
        return value

    def choice(self, items: Sequence[Any]) -> Any:
        """``items[randbelow(len(items))]`` (the same shape as ``FairRandom.choice``)."""
        return items[self.randbelow(len(items))]

    def to_data(self) -> dict[str, Any]:
        """``{"kind": "stacked", "orders": [[...], ...], "shuffled": int,
        "draws": [int, ...], "drawn": int}``: the whole script and how far
        it has been consumed."""
        return {
            "kind": KIND,
            "orders": [list(order) for order in self._orders],
            "shuffled": self._shuffled,
            "draws": list(self._draws),
            "drawn": self._drawn,
        }

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> StackedDeck:
        """Inverse of :meth:`to_data`; raises ValueError on malformed data."""
        try:
            if data["kind"] != KIND:
                raise ValueError(f"not a stacked deck: kind {data['kind']!r}")
            self = cls(*data["orders"], draws=data["draws"])
            shuffled, drawn = int(data["shuffled"]), int(data["drawn"])
        except (KeyError, TypeError) as exc:
            raise ValueError(f"malformed stacked deck data: {exc!r}") from None
        if not (0 <= shuffled <= len(self._orders) and 0 <= drawn <= len(self._draws)):
            raise ValueError("malformed stacked deck data: position out of range")
        self._shuffled, self._drawn = shuffled, drawn
        return self

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StackedDeck) and self.to_data() == other.to_data()

    def __repr__(self) -> str:
        return f"StackedDeck(shuffles_left={self.shuffles_left}, draws_left={self.draws_left})"
