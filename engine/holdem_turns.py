"""Hold'em: the betting decisions, one turn at a time.

The seat to act, what it may do and what its action does. What the player to
act may do is computed once per turn by the round
(:meth:`cardhall.engine.betting.BettingRound.turn`, kept until the state
changes); :meth:`HoldemTurns.legal_actions`, the check of an action in
:meth:`HoldemTurns.apply` and :meth:`HoldemTurns.timeout_action` (G-3) all
answer from it. ``apply`` updates the round's stacks and bets in place, writes
the PHH action line and builds the ``action`` and ``turn`` events once; when the
round is over it settles it (uncalled bets FL-6, the pots, the all-in reveal
FL-9/TDA 16) and hands over to the dealer (G-4) or the showdown.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cardhall.engine.base import Data, Event, IllegalAction, LegalAction
from cardhall.engine.holdem_hand import STREETS, HoldemBase

_BAD_ACTION = "an action is a map with a string 'type'"


class HoldemTurns(HoldemBase):
    """The decision path of :class:`cardhall.engine.holdem.HoldemEngine`."""

    # -- the one input -------------------------------------------------------------
    def apply(self, seat: int, action: Mapping[str, Any]) -> list[Event]:
        """Apply ``seat``'s betting action (``cardhall.engine.holdem``'s module
        docstring: fold, check, call, bet/raise to a total, all_in; chips);
        raises :class:`IllegalAction` (G-1, NL-2, FL-2, FL-3, ...) with the
        state unchanged. Returns the ``action`` event, then the next ``turn``
        or what closing the round brings."""
        hand = self.hand
        r = hand.round if hand is not None else None
        if r is None or not r.queue or self._pending is not None:
            self._no_turn()
        assert hand is not None and r is not None
        i = r.queue[0]
        players = hand.players
        if seat != players[i]:
            raise IllegalAction("not_your_turn", f"it is seat {players[i]}'s turn, not seat {seat}'s", "G-1")
        if type(action) is not dict and not isinstance(action, Mapping):
            raise IllegalAction("bad_action", _BAD_ACTION)
        kind = action.get("type")
        if type(kind) is not str:
            raise IllegalAction("bad_action", _BAD_ACTION)
        amount = action.get("amount")
        if amount is not None and type(amount) is not int:
            raise IllegalAction("bad_amount", f"amount must be a whole number of chips, not {amount!r}",
                                self.rules.amount_rule)
        _, kind, added, total, all_in = r.step(kind, amount)
        # the PHH action line of this move
        if kind == "fold":
            hand.actions.append(f"p{i + 1} f")
        elif kind == "check" or kind == "call":
            hand.actions.append(f"p{i + 1} cc")
        else:
            hand.actions.append(f"p{i + 1} cbr {total}")
        action_event = Event({"type": "action", "seat": seat, "action": kind, "amount": added, "total": total,
                              "stack": r.stacks[i], "all_in": all_in, "pot": sum(hand.contrib) + sum(r.bets)})
        queue = r.queue
        if queue:
            return [action_event, Event({"type": "turn", "seat": players[queue[0]], "street": STREETS[hand.street]})]
        return [action_event, *self._close_round()]

    def _no_turn(self) -> None:
        if not self.started:
            raise IllegalAction("not_started", "the match has not started", "G-9")
        if self.is_finished:
            raise IllegalAction("match_over", "the match is over", "G-7")
        raise IllegalAction("not_your_turn", f"nobody is to act (waiting for the dealer: {self._pending})", "G-4")

    def control(self, seat: int, action: Mapping[str, Any]) -> list[Event]:
        """``{"type": "show"}`` / ``{"type": "muck"}``: whether ``seat`` shows a
        hand that cannot win at this hand's showdown (FL-9). Returns no events
        (the choice is private until the showdown)."""
        if not isinstance(action, Mapping) or action.get("type") not in ("show", "muck"):
            raise IllegalAction("unknown_action", "controls are {'type': 'show'} and {'type': 'muck'}", "FL-9")
        hand = self.hand
        if hand is None or hand.over or not self.started:
            raise IllegalAction("not_in_hand", "no hand is in progress", "FL-9")
        if seat not in hand.players:
            raise IllegalAction("not_in_hand", f"seat {seat} is not dealt in", "FL-9")
        i = hand.players.index(seat)
        if self._folded(i):
            raise IllegalAction("not_in_hand", f"seat {seat} has folded", "FL-9")
        hand.show_pref[i] = action["type"] == "show"
        return []

    # -- questions --------------------------------------------------------------
    @property
    def to_act(self) -> int | None:
        """The seat to act, or None (the dealer is pending, the match is over)."""
        hand = self.hand
        if hand is None or self._pending is not None or self.is_finished:
            return None
        r = hand.round
        if r is None or not r.queue:
            return None
        return hand.players[r.queue[0]]

    def legal_actions(self) -> list[LegalAction]:
        """What ``to_act`` may do (amounts: raise-to totals for bet/raise/all_in,
        chips added for call); empty when nobody is to act."""
        hand = self.hand
        if hand is None or self._pending is not None or self.is_finished:
            return []
        r = hand.round
        return r.legal() if r is not None else []

    def timeout_action(self, seat: int) -> Data:
        """RULES G-3: check when checking is free, else fold. Raises
        IllegalAction if ``seat`` is not to act."""
        to_act = self.to_act
        if to_act != seat:
            if to_act is None:
                self._no_turn()
            raise IllegalAction("not_your_turn", f"it is seat {to_act}'s turn, not seat {seat}'s", "G-1")
        assert self.hand is not None and self.hand.round is not None
        call = self.hand.round.turn()[1]
        return {"type": "fold"} if call else {"type": "check"}

    def _folded(self, i: int) -> bool:
        hand = self.hand
        assert hand is not None
        return hand.round.folded[i] if hand.round is not None else hand.folded[i]

    # -- the end of a betting round ------------------------------------------------
    def _close_round(self) -> list[Event]:
        """Settle the finished round: return an uncalled bet (FL-6), move the
        bets into the pot, then award an uncontested pot, or announce the pots
        (FL-6), reveal every hand when all-in betting is over (FL-9, TDA 16)
        and wait for the dealer's next street or the showdown (G-4)."""
        hand = self.hand
        assert hand is not None and hand.round is not None
        r = hand.round
        events: list[Event] = []
        back = r.return_uncalled()
        if back is not None:
            i, chips = back
            events.append(Event({"type": "uncalled", "seat": hand.players[i], "amount": chips, "stack": r.stacks[i]}))
        hand.stacks = stacks = r.stacks
        hand.folded = folded = r.folded
        contrib = hand.contrib
        bets = r.bets
        for i in range(len(bets)):
            if bets[i]:
                contrib[i] += bets[i]
        hand.aggressor = r.aggressor
        hand.round = None
        live = [i for i in range(len(folded)) if not folded[i]]
        if len(live) == 1:
            return events + self._win_uncontested(live[0])
        players = hand.players
        events.append(Event({"type": "pots", "street": STREETS[hand.street],
                             "pots": [{"amount": p.amount, "eligible": [players[j] for j in p.eligible]}
                                      for p in self._pots(hand, contrib, live)]}))
        with_chips = 0
        for i in live:
            if stacks[i]:
                with_chips += 1
        street = hand.street
        if not hand.revealed and with_chips < len(live) and (with_chips <= 1 or street == 3):
            # FL-9 / TDA 16: once a player is all-in and betting is over, all hands face up
            hand.revealed = True
            events += self._reveal_all(self._showdown_order(hand, r, live))
        self._pending = "showdown" if street == 3 else "street"
        return events
