"""Replay a PHH hand through our Hold'em engines and judge the result.

:func:`replay_hand` builds the engine a hand describes (``cardhall.engine.phh.engine_setup``:
the ``phh`` rule profile unless the hand's ``_cardhall_options`` say
otherwise), stacks the deck so it deals the hand's cards
(``cardhall.engine.phh.deck_order`` and :class:`cardhall.engine.stacked.StackedDeck`), feeds it
every action and compares the stacks it ends with to ``finishing_stacks``.

Statuses:

``match``      every action legal, stacks equal ``finishing_stacks`` exactly
``mismatch``   every action legal, some stack differs (detail: each player's
               stack, the recorded one and the difference)
``unchecked``  every action legal, the hand has no ``finishing_stacks``
``illegal``    the engine refused an action (detail: the action, its index and
               the engine's reason naming the rule), or the file ends while a
               player still has to act
``error``      the hand cannot be played by our engines at all (malformed
               field, unsupported variant, straddles, fractional chips)

Like pokerkit's reader, the replay completes a history that skips a player:
when the next action cannot be taken because another player is to act, that
player checks if checking is free and folds otherwise (pokerkit's
``HandHistory.state_actions``). Each such step is reported in ``notes``. An
action whose amount is illegal is never repaired.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from cardhall.engine import phh
from cardhall.engine.base import Engine, IllegalAction
from cardhall.engine.stacked import StackedDeck, StackedDeckError

STATUSES = ("match", "mismatch", "unchecked", "illegal", "error")

#: the engines PHH's variants name (``phh.VARIANTS``): module and class
_HOLDEM_ENGINES = {
    "fixed_limit_holdem": ("cardhall.engine.games.fixed_limit_holdem", "FixedLimitHoldem"),
    "no_limit_holdem": ("cardhall.engine.games.no_limit_holdem", "NoLimitHoldem"),
}


def _engine_class(game: str) -> type[Engine]:
    """The engine of ``game``: a Hold'em engine imported directly (a replay
    needs neither the other games nor the plugin discovery of
    ``cardhall.engine.registry``), any other game through the registry."""
    where = _HOLDEM_ENGINES.get(game)
    if where is None:
        from cardhall.engine.registry import engine_class

        return engine_class(game)
    module = importlib.import_module(where[0])
    cls: type[Engine] = getattr(module, where[1])
    return cls


#: dealer steps allowed between two actions (a hand has at most a handful).
_MAX_STEPS = 64


@dataclass
class ReplayResult:
    """The outcome of one hand's replay.

    ``status``: one of :data:`STATUSES`. ``detail``: one human-readable line.
    ``stacks``: our finishing stacks p1..pn (chips), None if the hand did not
    finish. ``expected``: the file's ``finishing_stacks`` or None. ``notes``:
    repairs made (a skipped player's check or fold). ``engine``: the engine
    after the hand (None on ``error``), for callers that want its
    ``hand_record()``.
    """

    status: str
    detail: str
    stacks: list[int] | None = None
    expected: list[Any] | None = None
    notes: list[str] = field(default_factory=list)
    engine: Engine | None = None

    @property
    def ok(self) -> bool:
        """True for a legal hand that does not mismatch (the exit-status rule)."""
        return self.status in ("match", "unchecked")

    def to_data(self) -> dict[str, Any]:
        """JSON-ready fields (Decimals as numbers: ints when whole, else floats)."""
        return {
            "status": self.status,
            "detail": self.detail,
            "stacks": self.stacks,
            "expected": None if self.expected is None else [_number(v) for v in self.expected],
            "notes": self.notes,
        }


def _number(value: Any) -> Any:
    if isinstance(value, Decimal):
        return int(value) if value == int(value) else float(value)
    return value


class _Illegal(Exception):
    """Internal: the hand is illegal; ``args[0]`` is the detail."""


class _Replay:
    """One replay in progress: the engine, the PHH player -> seat map, and the
    show-or-muck choices read ahead of the showdown."""

    def __init__(self, engine: Engine, seats: list[int]) -> None:
        self.engine = engine
        self.seats = seats  # PHH player index -> seat
        self.notes: list[str] = []
        self.folded: set[int] = set()
        self.shows: dict[int, bool] = {}  # seat -> show (True) or muck (False), not yet applied

    def label(self, seat: int) -> str:
        return phh.player_label(self.seats.index(seat))

    # -- helpers ------------------------------------------------------------
    def legal_types(self) -> dict[str, Any]:
        return {a.type: a for a in self.engine.legal_actions()}

    def repair_one(self, reason: str) -> None:
        """The player to act checks if free, else folds (pokerkit's repair)."""
        seat = self.engine.to_act
        assert seat is not None
        kind = "check" if "check" in self.legal_types() else "fold"
        self.engine.apply(seat, {"type": kind})
        if kind == "fold":
            self.folded.add(seat)
        self.notes.append(f"{self.label(seat)} did not act before {reason}: taken as a {kind} (pokerkit's repair)")

    def apply_shows(self) -> None:
        """Apply the show-or-muck choices read so far, where the engine takes them now."""
        for seat, show in list(self.shows.items()):
            try:
                self.engine.control(seat, {"type": "show" if show else "muck"})
            except IllegalAction:
                continue
            del self.shows[seat]

    def step(self) -> None:
        """One dealer step (``advance``), after the choices read ahead."""
        self.apply_shows()
        self.engine.advance()

    def hand_over(self) -> bool:
        engine = self.engine
        return engine.finished or engine.pending == "hand"

    # -- the actions ----------------------------------------------------------
    def deal_board(self, index: int, action: phh.Action) -> None:
        engine = self.engine
        for _ in range(_MAX_STEPS):
            if engine.to_act is not None:
                self.repair_one(f"action {index} {action.text!r}")
            elif engine.pending == "street":
                self.step()
                return
            else:
                raise _Illegal(f"action {index} {action.text!r}: there is no board card to deal now")
        raise _Illegal(f"action {index} {action.text!r}: the engine never came to deal it")

    def player_action(self, index: int, action: phh.Action) -> None:
        engine = self.engine
        player = int(action.actor)
        if player > len(self.seats):
            raise _Illegal(f"action {index} {action.text!r}: there are only {len(self.seats)} players")
        seat = self.seats[player - 1]
        if seat in self.folded:
            raise _Illegal(f"action {index} {action.text!r}: {action.text.split()[0]} has folded")
        for _ in range(_MAX_STEPS):
            if engine.to_act == seat:
                break
            if engine.to_act is None:
                if engine.pending == "street":
                    raise _Illegal(f"action {index} {action.text!r}: the file must deal the next street first")
                raise _Illegal(f"action {index} {action.text!r}: {action.text.split()[0]} has no decision to make now")
            self.repair_one(f"action {index} {action.text!r}")
        legal = self.legal_types()
        move: dict[str, Any]
        if action.op == "f":
            move = {"type": "fold"}
        elif action.op == "cc":
            move = {"type": "check"} if "check" in legal else {"type": "call"}
        else:
            amount = action.amount
            if isinstance(amount, Decimal):
                if amount != int(amount):
                    raise _Illegal(f"action {index} {action.text!r}: fractional chips are not supported")
                amount = int(amount)
            kind = "bet" if "bet" in legal else "raise"
            move = {"type": kind, "amount": amount}
            option = legal.get(kind)
            allin = legal.get("all_in")
            if (option is None or not option.min <= amount <= option.max) and allin is not None and allin.min == amount:
                move = {"type": "all_in"}
        try:
            engine.apply(seat, move)
        except IllegalAction as exc:
            raise _Illegal(f"action {index} {action.text!r} is illegal: {exc}") from None
        if move["type"] == "fold":
            self.folded.add(seat)

    def show_or_muck(self, index: int, action: phh.Action) -> None:
        engine = self.engine
        player = int(action.actor)
        if player > len(self.seats):
            raise _Illegal(f"action {index} {action.text!r}: there are only {len(self.seats)} players")
        while engine.to_act is not None:
            self.repair_one(f"action {index} {action.text!r}")
        seat = self.seats[player - 1]
        self.shows[seat] = action.cards is not None
        self.apply_shows()

    def finish(self) -> None:
        engine = self.engine
        for _ in range(_MAX_STEPS):
            if self.hand_over():
                return
            if engine.to_act is not None:
                raise _Illegal(
                    f"the file ends before the hand does: {self.label(engine.to_act)} is still to act"
                )
            self.step()
        raise _Illegal("the hand did not end")


def _check_deal(theirs: list[phh.Action], record: Mapping[str, Any] | None) -> str | None:
    """None when the engine dealt what the file says (``theirs``: the file's
    actions, parsed; ``??`` matching any card), else a description of the
    first difference. Only the record's dealer actions are parsed."""
    if record is None:
        return "the engine gave no hand record"
    ours = [phh.parse_action(a) for a in record.get("actions", []) if a[:2] == "d "]
    for op in ("dh", "db"):
        mine = [(a.actor, a.cards) for a in ours if a.op == op]
        file = [(a.actor, a.cards) for a in theirs if a.op == op]
        for (actor, cards), (f_actor, f_cards) in zip(mine, file):
            if actor != f_actor or len(cards or ()) != len(f_cards or ()) or any(
                f != "??" and f != c for c, f in zip(cards or (), f_cards or ())
            ):
                return f"the engine dealt {actor} {cards} where the file deals {f_actor} {f_cards}"
        if len(mine) < len(file):
            return f"the engine dealt {len(mine)} '{op}' where the file has {len(file)}"
    return None


def replay_hand(hand: phh.Hand) -> ReplayResult:
    """Replay one hand (a dict of PHH fields); never raises for a bad hand:
    the problem is the result's ``status``/``detail``."""
    try:
        game, seats, options = phh.engine_setup(hand)
        try:  # parsed once, for the deck, the replay and the check
            actions = [phh.parse_action(a) for a in hand["actions"]]
        except phh.PHHError:
            phh.deck_order(hand)  # reports the file's first problem, as the deck is read in action order
            raise
        order = phh.deck_order(hand, actions)
        players = phh.seat_map(hand)
    except phh.PHHError as exc:
        return ReplayResult("error", str(exc))
    expected = hand.get("finishing_stacks")
    try:
        cls = _engine_class(game)
    except ImportError as exc:
        return ReplayResult("error", f"the {game} engine is not available: {exc}", expected=expected)
    try:
        engine = cls.new(seats, options, StackedDeck(order))
    except (ValueError, TypeError) as exc:
        return ReplayResult("error", f"the engine refuses the hand's options: {exc}", expected=expected)
    replay = _Replay(engine, players)
    try:
        engine.start()
        for index, action in enumerate(actions, 1):
            if action.op == "dh":
                continue  # the stacked deck deals them; checked against the record below
            if action.op == "db":
                replay.deal_board(index, action)
            elif action.op == "sm":
                replay.show_or_muck(index, action)
            else:
                replay.player_action(index, action)
        replay.finish()
    except _Illegal as exc:
        note = f" (after: {'; '.join(replay.notes)})" if replay.notes else ""
        return ReplayResult("illegal", f"{exc}{note}", expected=expected, notes=replay.notes, engine=engine)
    except (IllegalAction, StackedDeckError) as exc:
        return ReplayResult("error", f"the engine failed to replay the hand: {exc}", expected=expected,
                            notes=replay.notes, engine=engine)
    settled = engine.stacks()  # type: ignore[attr-defined]
    stacks = [settled[seat] for seat in players]
    problem = _check_deal(actions, engine.hand_record())
    if problem is not None:
        return ReplayResult("error", problem, stacks, expected, replay.notes, engine)
    note = f" ({'; '.join(replay.notes)})" if replay.notes else ""
    if expected is None:
        return ReplayResult("unchecked", f"legal; no finishing_stacks to check; ends {stacks}{note}",
                            stacks, None, replay.notes, engine)
    if len(expected) == len(stacks) and all(a == e for a, e in zip(stacks, expected)):
        return ReplayResult("match", f"finishing stacks match{note}", stacks, expected, replay.notes, engine)
    diffs = [
        f"{phh.player_label(i)} {ours} (file {_number(theirs)}, {_signed(ours - theirs)})"
        for i, (ours, theirs) in enumerate(zip(stacks, expected))
        if ours != theirs
    ]
    if len(expected) != len(stacks):
        diffs.append(f"the file lists {len(expected)} finishing stacks for {len(stacks)} players")
    return ReplayResult("mismatch", "; ".join(diffs) + note, stacks, expected, replay.notes, engine)


def _signed(value: Any) -> str:
    value = _number(value)
    return f"+{value}" if value > 0 else str(value)
