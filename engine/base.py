"""The one interface every game engine implements.

An engine holds a whole **match** (hand after hand, or game after game, until
the game's end condition) as plain data plus a random source. It is a sans-I/O
state machine in the manner of the ``websockets`` protocol core: the server
feeds it inputs and sends out what it returns; it never waits, reads a clock
or touches the network.

Inputs
    ``start()``              deal the first hand; returns events.
    ``apply(seat, action)``  a player's decision; returns events or raises
                             :class:`IllegalAction`.
    ``advance()``            a dealer step that needs no decision (deal the
                             next street, run the showdown, start the next
                             hand); the server calls it after its pause (G-4).
    ``control(seat, action)`` an input that is not a turn (show or muck).

Questions
    ``to_act``               the seat whose decision is awaited, or None.
    ``legal_actions()``      what ``to_act`` may do, with amounts.
    ``pending``              None, or the kind of dealer step ``advance()``
                             would take: ``"street"``, ``"showdown"``, ``"hand"``.
    ``finished`` / ``result()``
    ``view(viewer)``         the state as ``viewer`` may see it (a seat, or
                             None for a spectator): the one place state is
                             redacted (the boardgame.io ``playerView`` idea).
    ``to_data()`` / ``from_data(data)``  the whole state, random source
                             included, as msgpack-able data, exactly.

Events carry their own redaction: :class:`Event` has public fields and, per
seat, private fields only that seat sees, so every viewer receives every event
(gap-free ``seq``) with what it may not see removed.

Actions are maps with ``type`` and game-specific fields, e.g.
``{"type": "raise", "amount": 60}`` (amounts are raise-to totals for the
street, NL-2) or ``{"type": "play", "cards": ["9h", "9s"]}`` (Avalanche).
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Self

from cardhall.engine.options import Option, OptionError, check_all
from cardhall.engine.rng import FairRandom, RandomSource, random_from_data

Data = dict[str, Any]


class IllegalAction(Exception):
    """An action the rules forbid. ``rule`` names the rule broken (a RULES.md
    tag such as ``"NL-2"`` or a seed reference); ``code`` is a stable
    machine-readable reason (``"not_your_turn"``, ``"amount_too_small"``, ...)."""

    def __init__(self, code: str, message: str, rule: str | None = None) -> None:
        self.code = code
        self.rule = rule
        super().__init__(f"{message} ({rule})" if rule else message)


@dataclass(frozen=True, slots=True)
class Event:
    """One thing that happened, with its redaction.

    ``data``: the public fields, seen by everyone; always has ``type``.
    ``private``: seat -> fields that only that seat sees, laid over ``data``
    in that seat's view (hole cards dealt to seat 3: ``data`` says seat 3 got
    two cards, ``private[3]`` says which).
    """

    data: Data
    private: Mapping[int, Data] | None = None

    def view(self, viewer: int | None) -> Data:
        """The event as ``viewer`` (a seat, or None for a spectator) sees it."""
        if viewer is None or not self.private or viewer not in self.private:
            return self.data
        return {**self.data, **self.private[viewer]}

    @property
    def type(self) -> str:
        return self.data["type"]

    def to_data(self) -> Data:
        """Plain data (private seats as string keys so JSON carries them too)."""
        out: Data = {"data": self.data}
        if self.private:
            out["private"] = {str(k): v for k, v in self.private.items()}
        return out

    @classmethod
    def from_data(cls, data: Data) -> Event:
        private = data.get("private")
        return cls(data["data"], {int(k): v for k, v in private.items()} if private else None)


@dataclass(frozen=True, slots=True)
class LegalAction:
    """One kind of action open to the player to act.

    ``type``: ``fold``, ``check``, ``call``, ``bet``, ``raise``, ``all_in``,
    ``snowfall``, ``play``, ... ``min``/``max``: the amount range (chips or
    cards; for ``bet``/``raise`` the raise-to total for the street; for
    ``call`` both are the amount added). ``extra``: game-specific detail.
    """

    type: str
    min: int | None = None
    max: int | None = None
    extra: Data = field(default_factory=dict)

    def to_data(self) -> Data:
        out: Data = {"type": self.type}
        if self.min is not None:
            out["min"] = self.min
        if self.max is not None:
            out["max"] = self.max
        out.update(self.extra)
        return out


class Engine(ABC):
    """A match of one game. Subclasses set ``game``, ``title``, ``min_seats``,
    ``max_seats``, ``options_spec`` (their options as data,
    :class:`cardhall.engine.options.Option`) and ``default_options`` (derived from it:
    ``cardhall.engine.options.defaults``), and implement the abstract methods.

    Construction: ``Game.new(seats, options, rng)`` validates the options
    (raising ``ValueError`` with the option's name) and returns an engine that
    has not dealt yet; ``start()`` deals.
    """

    game: ClassVar[str]
    title: ClassVar[str]
    min_seats: ClassVar[int] = 2
    max_seats: ClassVar[int] = 9
    options_spec: ClassVar[tuple[Option, ...]] = ()
    default_options: ClassVar[Data] = {}
    options: Data

    rng: RandomSource

    # -- construction -------------------------------------------------------
    @classmethod
    @abstractmethod
    def new(cls, seats: Sequence[int], options: Mapping[str, Any] | None, rng: RandomSource) -> Self:
        """A match for the occupied ``seats`` (numbers 1..N, G-1)."""

    @classmethod
    def resolve_options(cls, options: Mapping[str, Any] | None) -> Data:
        """``default_options`` updated with ``options``, each value checked
        against ``options_spec`` (type, range, allowed values); raises
        :class:`~cardhall.engine.options.OptionError` (a ValueError naming the option)
        on an unknown name or a refused value. Checks that involve the seats
        or several options are ``new``'s."""
        merged = dict(cls.default_options)
        for name, value in (options or {}).items():
            if name not in merged:
                raise OptionError(name, f"not an option of {cls.game}")
            merged[name] = value
        check_all(cls.options_spec, merged)
        return merged

    def match_options(self) -> Data:
        """The game options this match is played with (``options_spec``'s
        names, defaults filled in and values the engine decided from the seats
        resolved, e.g. Alamo's ``jokers`` or Avalanche's ``decks``), as public
        data: options never hold hidden information. ``button``/``dealer`` are
        as given (None: drawn at ``start()``; the match's first one is in the
        first event)."""
        return copy.deepcopy({k: v for k, v in self.options.items() if k in self.default_options})

    # -- inputs -------------------------------------------------------------
    @abstractmethod
    def start(self) -> list[Event]:
        """Begin the match (first button or dealer, first deal)."""

    @abstractmethod
    def apply(self, seat: int, action: Mapping[str, Any]) -> list[Event]:
        """Apply ``seat``'s ``action``; raises :class:`IllegalAction`."""

    @abstractmethod
    def advance(self) -> list[Event]:
        """Take the pending dealer step; raises IllegalAction if none is pending."""

    def control(self, seat: int, action: Mapping[str, Any]) -> list[Event]:
        """An input that is not a turn: ``{"type": "show"}`` / ``{"type": "muck"}``
        (whether ``seat`` shows a hand that cannot win, FL-9). Games without such
        inputs raise IllegalAction."""
        raise IllegalAction("unknown_action", f"{self.game} has no {action.get('type')!r} control")

    # -- questions ----------------------------------------------------------
    @property
    @abstractmethod
    def to_act(self) -> int | None:
        """The seat whose decision is awaited, or None."""

    @property
    @abstractmethod
    def pending(self) -> str | None:
        """The dealer step waiting for ``advance()``: ``street``, ``showdown``, ``hand``, or None."""

    @property
    @abstractmethod
    def finished(self) -> bool:
        """True once the match has ended."""

    @abstractmethod
    def legal_actions(self) -> list[LegalAction]:
        """What ``to_act`` may do; empty when nobody is to act."""

    @abstractmethod
    def result(self) -> Data | None:
        """None until finished, then ``{"ranking": [[seat, ...], ...] best first,
        "winners": [seat, ...], "loser": [seat, ...] or absent, ...}``."""

    @abstractmethod
    def view(self, viewer: int | None) -> Data:
        """The state as ``viewer`` may see it: a seat number, or None for a spectator."""

    @abstractmethod
    def timeout_action(self, seat: int) -> Data:
        """The action played for ``seat`` when its clock runs out (RULES G-3)."""

    def in_match(self, seat: int) -> bool:
        """False once ``seat`` is out of the match (busted, knocked out,
        eliminated): from then on its player only watches (G-4). The default,
        for games where nobody leaves before the end: True."""
        return True

    def audit(self) -> Data:
        """Conservation check of the whole state (chips, or every card of the deck).

        Returns ``{"unit": "chips" | "cards", "expected": int, "counted": int,
        "where": {place: amount}}``; a correct state has ``counted == expected``
        at every step. Used by property tests and ``cardhall simulate``.
        """
        raise NotImplementedError(f"{type(self).__name__} must implement audit()")

    def hand_record(self) -> Data | None:
        """The last completed hand in full (hidden cards included) for the
        table's history, or None. Servers store it; it is never sent to a
        client before the match ends."""
        return None

    # -- persistence --------------------------------------------------------
    @abstractmethod
    def to_data(self) -> Data:
        """The whole state, random source included, as plain data (msgpack-able,
        string keys for maps), such that ``from_data(to_data())`` is equal."""

    def state_data(self) -> Data:
        """:meth:`to_data` for a caller that serializes it at once, before the
        engine changes again (the server's checkpoint, packed as soon as it is
        built): equal to ``to_data()``, but it may share lists and maps with
        the live engine instead of copying them. Never keep it, never change
        it. The default is ``to_data()``; an engine overrides it when its
        copies cost (Hold'em: its copies were three quarters of its ``to_data()`` time)."""
        return self.to_data()

    @classmethod
    @abstractmethod
    def from_data(cls, data: Data) -> Self:
        """Inverse of :meth:`to_data`; raises ValueError on malformed data."""

    # -- helpers for subclasses ----------------------------------------------
    @staticmethod
    def rng_to_data(rng: RandomSource) -> Data:
        return rng.to_data()

    @staticmethod
    def rng_from_data(data: Data) -> RandomSource:
        return random_from_data(data)


def test_rng(label: str = "test") -> FairRandom:
    """A deterministic generator for tests and simulations (not for live matches)."""
    return FairRandom(label.encode())
