"""Helpers for the Hold'em engine tests: stacked decks and scripted play.

``deck(holes, board)`` builds a full 52-card order that deals ``holes[k]`` to
PHH player ``k`` (first left of the button; heads-up the big blind) and the
given board, with burns between streets (FL-5), per the dealing order of
``cardhall.engine.holdem``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from cardhall.engine.cards import parse_cards, standard_deck
from cardhall.engine.games.fixed_limit_holdem import FixedLimitHoldem
from cardhall.engine.games.no_limit_holdem import NoLimitHoldem
from cardhall.engine.holdem import HoldemEngine
from cardhall.engine.stacked import StackedDeck


def deck(holes: Sequence[str], board: str = "") -> list[str]:
    """A deck order dealing ``holes`` (``"AhAd"`` per PHH player) and ``board``
    (up to 5 cards); burns and the rest come from the unused cards in
    canonical order."""
    hole_cards = [parse_cards(h) for h in holes]
    board_cards = parse_cards(board)
    used = {c for h in hole_cards for c in h} | set(board_cards)
    spare = [c for c in standard_deck() if c not in used]
    n = len(hole_cards)
    order = [hole_cards[i][0] for i in range(n)] + [hole_cards[i][1] for i in range(n)]
    cuts = [(0, 3), (3, 4), (4, 5)]
    for start, stop in cuts:
        if len(board_cards) < stop:
            break
        order.append(spare.pop(0))  # burn
        order.extend(board_cards[start:stop])
    order.extend(spare)
    assert sorted(order) == sorted(standard_deck())
    return order


def nl(seats: Sequence[int], holes: Iterable[Sequence[str]] = (), **options: Any) -> NoLimitHoldem:
    """A started no-limit match (blind levels off unless given) whose hands deal
    the given ``(holes, board)`` pairs in turn."""
    return _new(NoLimitHoldem, seats, holes, options)


def fl(seats: Sequence[int], holes: Iterable[Sequence[str]] = (), **options: Any) -> FixedLimitHoldem:
    """A started fixed-limit match; see :func:`nl`."""
    return _new(FixedLimitHoldem, seats, holes, options)


def _new(cls: type[HoldemEngine], seats: Sequence[int], hands: Iterable[Sequence[str]], options: dict[str, Any]) -> Any:
    options.setdefault("blind_levels", None)
    orders = [deck(h[0], h[1] if len(h) > 1 else "") for h in hands]
    if not orders:
        orders = [standard_deck() for _ in range(50)]
    m = cls.new(list(seats), options, StackedDeck(*orders))
    m.start()
    return m


def act(m: HoldemEngine, *script: Any) -> list[Any]:
    """Play ``script``: ``(seat, "call")``, ``(seat, "raise", 60)``, or
    ``"advance"``; returns all events."""
    events = []
    for step in script:
        if step == "advance":
            events += m.advance()
            continue
        seat, kind, *amount = step
        action: dict[str, Any] = {"type": kind}
        if amount:
            action["amount"] = amount[0]
        events += m.apply(seat, action)
    return events


def finish_hand(m: HoldemEngine) -> list[Any]:
    """Take dealer steps until the hand is over (every betting round must
    already be closed: nobody may be asked to act)."""
    events = []
    while m.pending in ("street", "showdown"):
        events += m.advance()
    assert m.to_act is None, f"seat {m.to_act} still has to act"
    return events


def check_down(m: HoldemEngine) -> list[Any]:
    """Check (or call, when facing a bet) every decision until the hand ends."""
    events = []
    while m.pending != "hand" and not m.finished:
        if m.pending:
            events += m.advance()
            continue
        types = {a.type for a in m.legal_actions()}
        events += m.apply(m.to_act, {"type": "check" if "check" in types else "call"})
    return events


def types(events: Iterable[Any]) -> list[str]:
    return [e.type for e in events]
