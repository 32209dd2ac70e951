"""Hypothesis properties of both Hold'em engines over random matches.

* chips are conserved after every action and dealer step (FL-6);
* every listed legal action is accepted, and actions outside the list (wrong
  seat, wrong type, amounts out of range) are rejected with the state
  unchanged;
* the state round-trips through plain data and msgpack, and the copy plays on
  identically;
* no view holds an undealt card (the deck order, burns) or a hole card its
  viewer may not see; a spectator sees no hole card before the showdown;
* turn order: the player to act is in the hand with chips; each street opens
  left of the big blind (preflop; heads-up the button) or left of the button;
  play moves clockwise, skipping only players who folded, are all-in or have
  matched the bet.
"""

from __future__ import annotations

from typing import Any

import msgpack
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cardhall.engine.base import IllegalAction
from cardhall.engine.games.fixed_limit_holdem import FixedLimitHoldem
from cardhall.engine.games.no_limit_holdem import NoLimitHoldem
from cardhall.engine.holdem import HoldemEngine
from cardhall.engine.rng import FairRandom

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MAX_STEPS = 120


@st.composite
def matches(draw: Any) -> HoldemEngine:
    cls = draw(st.sampled_from([FixedLimitHoldem, NoLimitHoldem]))
    n = draw(st.integers(2, 6 if cls is FixedLimitHoldem else 9))
    seats = sorted(draw(st.sets(st.integers(1, 9), min_size=n, max_size=n)))
    stacks = draw(st.lists(st.integers(1, 400), min_size=n, max_size=n))
    options: dict[str, Any] = {
        "starting_stacks": stacks,
        "button": draw(st.sampled_from(seats)),
        "profile": draw(st.sampled_from(["table", "phh"])),
        "ante": draw(st.sampled_from([0, 0, 1, 3])),
        "blind_levels": draw(st.sampled_from([None, 3])),
    }
    if options["profile"] == "phh":
        options["ante_trimming"] = draw(st.booleans())
    m = cls.new(seats, options, FairRandom(draw(st.binary(min_size=4, max_size=4))))
    m.start()
    return m


def pick(data: Any, m: HoldemEngine) -> dict[str, Any]:
    """One of the listed legal actions, with an amount in its range."""
    legal = m.legal_actions()
    choice = data.draw(st.sampled_from(legal))
    action: dict[str, Any] = {"type": choice.type}
    if choice.type in ("bet", "raise"):
        action["amount"] = data.draw(st.integers(choice.min, choice.max))
    return action


def step(m: HoldemEngine, data: Any) -> list[Any]:
    if m.pending:
        return m.advance()
    return m.apply(m.to_act, pick(data, m))


def conserved(m: HoldemEngine) -> None:
    audit = m.audit()
    assert audit["counted"] == audit["expected"], audit
    assert all(v >= 0 for v in m.stacks().values())


@SETTINGS
@given(matches(), st.data())
def test_chips_conserved_after_every_action(m, data):
    conserved(m)
    for _ in range(MAX_STEPS):
        if m.finished:
            break
        step(m, data)
        conserved(m)
    if m.finished:
        assert sum(m.stacks().values()) == m.total_chips
        assert len(m.result()["winners"]) == 1


def illegal_actions(m: HoldemEngine, data: Any) -> list[tuple[int, dict[str, Any]]]:
    seat = m.to_act
    legal = {a.type: a for a in m.legal_actions()}
    others = [s for s in m.seats if s != seat]
    out: list[tuple[int, dict[str, Any]]] = [(data.draw(st.sampled_from(others)), {"type": "check"})]
    for kind in ("fold", "check", "call", "bet", "raise", "all_in"):
        if kind not in legal:
            out.append((seat, {"type": kind, "amount": 10**6} if kind in ("bet", "raise") else {"type": kind}))
    for kind in ("bet", "raise"):
        if kind in legal:
            a = legal[kind]
            out.append((seat, {"type": kind, "amount": a.min - 1}))
            out.append((seat, {"type": kind, "amount": a.max + 1}))
            out.append((seat, {"type": kind, "amount": float(a.min)}))
    out.append((seat, {"type": "shove"}))
    out.append((seat, {"amount": 5}))
    return out


@SETTINGS
@given(matches(), st.data())
def test_listed_actions_accepted_anything_else_rejected_state_unchanged(m, data):
    for _ in range(MAX_STEPS):
        if m.finished:
            break
        if m.pending:
            before = m.to_data()
            try:
                m.apply(m.seats[0], {"type": "check"})
                raise AssertionError("an action was accepted during a dealer step")
            except IllegalAction:
                assert m.to_data() == before
            m.advance()
            continue
        before = m.to_data()
        for seat, action in illegal_actions(m, data):
            try:
                m.apply(seat, action)
            except IllegalAction:
                assert m.to_data() == before, action
            else:
                raise AssertionError(f"illegal {action} by seat {seat} accepted")
        m.apply(m.to_act, pick(data, m))  # raises if a listed action is refused
    try:
        m.advance() if not m.pending else None
    except IllegalAction as err:
        assert err.code in ("nothing_pending",)


@SETTINGS
@given(matches(), st.data())
def test_state_round_trips_through_msgpack_and_plays_on_identically(m, data):
    for k in range(MAX_STEPS):
        if m.finished:
            break
        if k % 5 == 0:
            blob = msgpack.packb(m.to_data())
            copy = type(m).from_data(msgpack.unpackb(blob))
            assert copy == m
            assert copy.view(None) == m.view(None)
            assert copy.legal_actions() == m.legal_actions()
            if m.pending:
                assert [e.to_data() for e in copy.advance()] == [e.to_data() for e in m.advance()]
            else:
                action = pick(data, m)
                assert [e.to_data() for e in copy.apply(m.to_act, action)] == [
                    e.to_data() for e in m.apply(m.to_act, action)
                ]
            assert copy == m
        else:
            step(m, data)


@SETTINGS
@given(matches(), st.data())
def test_state_data_equals_to_data_at_every_step(m, data):
    """``state_data()`` (the server's checkpoint: shares the engine's lists)
    is ``to_data()`` exactly, packed byte for byte the same, at every step."""
    for _ in range(MAX_STEPS):
        assert m.state_data() == m.to_data()
        assert msgpack.packb(m.state_data()) == msgpack.packb(m.to_data())
        if m.finished:
            break
        step(m, data)


def packed_cards(value: Any) -> set[str]:
    """Every card string found in ``value`` after msgpack encoding."""
    blob = msgpack.packb(value)
    return {r + s for r in "23456789TJQKA" for s in "cdhs" if b"\xa2" + (r + s).encode() in blob}


def check_views(m: HoldemEngine, events: list[Any]) -> None:
    hand = m.hand
    if hand is None:
        return
    n = len(hand.players)
    board = set(hand.board)
    undealt = set(hand.deck[2 * n :]) - board
    shown = {c for i, h in enumerate(hand.hole) if hand.shown[i] for c in h}
    for viewer in [None, *m.seats]:
        own = set(hand.hole[hand.players.index(viewer)]) if viewer in hand.players else set()
        may_see = board | shown | own
        seen = packed_cards(m.view(viewer))
        assert seen <= may_see, (viewer, seen - may_see)
        assert not seen & undealt
        for event in events:
            assert packed_cards(event.view(viewer)) <= may_see
    if not any(hand.shown):
        assert packed_cards(m.view(None)) <= board  # a spectator: no hole card before the showdown


@SETTINGS
@given(matches(), st.data())
def test_views_hold_no_deck_and_no_hidden_hole_card(m, data):
    check_views(m, [])
    for _ in range(MAX_STEPS // 2):
        if m.finished:
            break
        events = step(m, data)
        check_views(m, events)


@SETTINGS
@given(matches(), st.data())
def test_turn_order_is_legal(m, data):
    last: tuple[int, int, int] | None = None  # (hand, street, index of the last actor)
    for _ in range(MAX_STEPS):
        if m.finished:
            break
        if m.pending:
            m.advance()
            continue
        hand = m.hand
        r = hand.round
        n = len(hand.players)
        i = hand.players.index(m.to_act)
        assert not r.folded[i] and r.stacks[i] > 0
        if last is None or last[:2] != (hand.number, hand.street):
            # the first to act this street: skip players who cannot act
            if hand.street == 0:
                start = (hand.players.index(hand.big_blind) + 1) % n
            else:
                start = 0
            if not m.phh or hand.street:
                for k in range(n):
                    j = (start + k) % n
                    if j == i:
                        break
                    assert r.folded[j] or r.stacks[j] == 0 or m.phh, (j, i)
        else:
            prev = last[2]
            j = (prev + 1) % n
            while j != i:
                assert r.folded[j] or r.stacks[j] == 0 or r.bets[j] >= r.current, (prev, j, i)
                j = (j + 1) % n
        last = (hand.number, hand.street, i)
        m.apply(m.to_act, pick(data, m))
