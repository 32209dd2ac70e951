"""pokerkit 0.7.7, the PHH standard's reference implementation, as a yardstick.

Used by the differential tests (``tests/engine/test_pokerkit_differential.py``),
the real-hand tests and ``cardhall bench engine``; never by the engines or the
server. pokerkit is a test dependency and the optional extra ``bench``
(``pip install 'cardhall[bench]'``).

Two ways in:

* :func:`replay` plays a whole hand (a dict of PHH fields, as
  ``cardhall.engine.phh.loads`` returns) through pokerkit's own reader
  (``HandHistory.loads`` of our writer's text, then its state iterator):
  the reference answer for a file.
* :class:`PokerkitHand` plays a hand action by action and answers, between
  actions, what the player to act may do (:meth:`PokerkitHand.bounds`), for
  the step-by-step comparison with our engines.
* :meth:`PokerkitHand.play_dealt` lets pokerkit play a hand by itself, dealt
  from a given deck as our engines deal, each decision made by a callback
  from pokerkit's own legal actions (:meth:`PokerkitHand.legal_actions`, in
  our engines' shape): the benchmark's like-for-like figure.
"""

from __future__ import annotations

import copy
import functools
import warnings
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from typing import Any

from cardhall.engine import phh
from cardhall.engine.base import LegalAction
from cardhall.engine.cards import standard_deck


def require() -> Any:
    """The ``pokerkit`` module; raises RuntimeError with the install hint when missing."""
    try:
        import pokerkit
    except ImportError:  # pragma: no cover - depends on the environment
        raise RuntimeError("pokerkit is not installed: pip install 'cardhall[bench]'") from None
    return pokerkit


def hand_history(hand: Mapping[str, Any]) -> Any:
    """A ``pokerkit.HandHistory`` for ``hand`` (read by pokerkit's own reader
    from ``cardhall.engine.phh.dumps`` text); raises ValueError/TypeError if pokerkit
    rejects the fields."""
    pokerkit = require()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pokerkit.HandHistory.loads(phh.dumps(hand))


def replay(hand: Mapping[str, Any]) -> list[int | Decimal]:
    """The finishing stacks (p1..pn) of ``hand`` as pokerkit plays it.

    Raises ValueError when pokerkit finds an action illegal (pokerkit's
    message). pokerkit's reader repairs some incomplete histories (it checks
    or folds for a player a file skips); our replay does not.
    """
    history = hand_history(hand)
    state = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for state in history:  # noqa: B007 (iterating replays the hand: the last state is the end)
            pass
    assert state is not None
    return list(state.stacks)


class PokerkitHand:
    """One hand in pokerkit, fed PHH action strings one at a time.

    ``PokerkitHand(hand)`` builds the game from ``hand``'s fields (its
    ``actions`` are ignored) exactly as ``HandHistory`` does (cash-game mode;
    antes, blinds, bet collection, hand killing and chip pushing automated;
    burn cards dealt face down as ``??``). Then :meth:`act` applies each
    action and :meth:`bounds` reports what the player to act may do.
    """

    __slots__ = ("state",)

    def __init__(self, hand: Mapping[str, Any] | None = None, *, game: Any = None,
                 starting_stacks: Sequence[int] | None = None) -> None:
        if game is None:
            assert hand is not None
            history = hand_history({**hand, "actions": []})
            game, starting_stacks = history.create_game(), history.starting_stacks
        assert starting_stacks is not None
        self.state = game(list(starting_stacks), len(starting_stacks))
        self._settle()

    @staticmethod
    def game_for(hand: Mapping[str, Any]) -> Any:
        """The pokerkit game object for ``hand`` (build once, then
        ``PokerkitHand(game=..., starting_stacks=...)`` per hand: the benchmark's path)."""
        return hand_history({**hand, "actions": []}).create_game()

    @staticmethod
    def self_play_game(hand: Mapping[str, Any]) -> Any:
        """The game of :meth:`game_for` with pokerkit's showdown automated
        too (it shows or mucks as it sees fit): what :meth:`play_dealt` needs,
        which leaves pokerkit only the deal and the decisions to be told."""
        pokerkit = require()
        game = copy.deepcopy(PokerkitHand.game_for(hand))
        game.automations = (*game.automations, pokerkit.Automation.HOLE_CARDS_SHOWING_OR_MUCKING)
        return game

    def _settle(self) -> None:
        state = self.state
        while state.can_burn_card():
            state.burn_card("??")

    def act(self, text: str) -> None:
        """Apply one PHH action; raises ValueError when pokerkit refuses it."""
        pokerkit = require()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pokerkit.notation.parse_action(self.state, text)
        self._settle()

    def play(self, actions: Sequence[str]) -> list[int | Decimal]:
        """Apply every action in turn, then :meth:`finish`; returns the stacks
        (the benchmark's path: one warnings context for the whole hand)."""
        parse = require().notation.parse_action
        state = self.state
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for text in actions:
                parse(state, text)
                while state.can_burn_card():
                    state.burn_card("??")
        return self.finish()

    @property
    def actor(self) -> int | None:
        """The 0-based index of the player to act, or None."""
        return self.state.actor_index

    def bounds(self) -> dict[str, Any] | None:
        """What the player to act may do, or None when nobody is to act:
        ``{"player": index, "fold": bool, "check": bool, "call": chips or None,
        "raise": (min, max) raise-to totals or None}``. ``fold`` is pokerkit's
        ``can_fold()`` in cash-game mode (it only warns about a fold that could
        check); ``call`` is the chips a call adds (at most the stack)."""
        state = self.state
        index = state.actor_index
        if index is None:
            return None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fold = state.can_fold()
        amount = state.checking_or_calling_amount
        facing = state.bets[index] < max(state.bets)
        low = state.min_completion_betting_or_raising_to_amount
        high = state.max_completion_betting_or_raising_to_amount
        return {
            "player": index,
            "fold": fold,
            "check": not facing,
            "call": amount if facing else None,
            "raise": (low, high) if low is not None else None,
        }

    def legal_actions(self) -> list[LegalAction]:
        """What the player to act may do, from pokerkit's own queries
        (``can_fold``, ``can_check_or_call``, ``checking_or_calling_amount``,
        ``can_complete_bet_or_raise_to``, ``min_``/``max_completion_betting_or_raising_to_amount``),
        in the shape of our engines' ``legal_actions()``: ``fold``; ``check``
        or ``call`` (chips added); ``bet``/``raise`` (raise-to totals);
        ``all_in`` when the largest raise, or a call, puts the whole stack in.
        Empty when nobody is to act. Call it with warnings silenced (pokerkit
        warns about a fold that could check)."""
        state = self.state
        i = state.actor_index
        if i is None:
            return []
        out: list[LegalAction] = []
        if state.can_fold():
            out.append(_FOLD)
        call = state.checking_or_calling_amount if state.can_check_or_call() else None
        if call:
            out.append(LegalAction("call", call, call))
        elif call is not None:
            out.append(_CHECK)
        allin = state.stacks[i] + state.bets[i]
        if state.can_complete_bet_or_raise_to():
            low = state.min_completion_betting_or_raising_to_amount
            high = state.max_completion_betting_or_raising_to_amount
            kind = "raise" if max(state.bets) else "bet"
            out.append(LegalAction(kind, low, high))
            if high == allin:
                out.append(LegalAction("all_in", allin, allin, {"as": kind}))
        elif call and call == state.stacks[i]:
            out.append(LegalAction("all_in", allin, allin, {"as": "call"}))
        return out

    def apply(self, action: Mapping[str, Any]) -> None:
        """Apply an action in our engines' shape (``{"type": "raise", "amount": 60}``,
        amounts raise-to totals; ``all_in`` is the largest raise when that is
        all-in, else a call). Raises ValueError when pokerkit refuses it."""
        state = self.state
        kind = action["type"]
        if kind == "fold":
            state.fold()
        elif kind in ("check", "call"):
            state.check_or_call()
        elif kind in ("bet", "raise"):
            state.complete_bet_or_raise_to(action["amount"])
        elif kind == "all_in":
            i = state.actor_index
            allin = state.stacks[i] + state.bets[i]
            if state.max_completion_betting_or_raising_to_amount == allin:
                state.complete_bet_or_raise_to(allin)
            else:
                state.check_or_call()
        else:
            raise ValueError(f"unknown action {kind!r}")

    def play_dealt(self, deck: Sequence[str],
                   choose: Callable[[list[LegalAction]], Mapping[str, Any]]) -> list[int | Decimal]:
        """Play the hand in pokerkit alone and return the finishing stacks.

        ``deck``: the shuffled deck (top first), dealt as our Hold'em engines
        deal it (``cardhall.engine.holdem``, FL-5): player ``k`` (0-based, PHH order)
        gets ``deck[k]`` and ``deck[n + k]``, then burn one card before each
        street. ``choose(legal)``: the action of the player to act, given
        :meth:`legal_actions`. Build the hand from :meth:`self_play_game`.
        Raises ValueError if pokerkit refuses an action or stops for a step
        this driver does not take.
        """
        state = self.state
        cards = [_cards()[c] for c in deck]
        n = len(state.stacks)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for k in range(n):
                state.deal_hole((cards[k], cards[n + k]), k)
            top = 2 * n
            while state.status:
                if state.actor_index is not None:
                    self.apply(choose(self.legal_actions()))
                elif state.can_burn_card():
                    state.burn_card(cards[top])
                    top += 1
                elif count := state.board_dealing_count:
                    state.deal_board(cards[top : top + count])
                    top += count
                else:
                    raise ValueError("pokerkit's hand awaits a step play_dealt does not take")
        return list(state.stacks)

    def deal_board(self, cards: str) -> None:
        """Deal board ``cards`` (``"Jc3d5c"``), first settling the show-or-muck
        choices pokerkit asks for before an all-in run-out (its default: show)."""
        state = self.state
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            while True:
                if state.can_show_or_muck_hole_cards():
                    state.show_or_muck_hole_cards()
                elif state.can_burn_card():
                    state.burn_card("??")
                else:
                    break
        self.act(f"d db {cards}")

    def finish(self) -> list[int | Decimal]:
        """Settle whatever the hand still needs without a decision (pending
        show-or-muck choices default to pokerkit's: show a hand that can win)
        and return the stacks; raises ValueError if the hand still awaits a
        player or a deal."""
        state = self.state
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            while state.status:
                if state.can_burn_card():
                    state.burn_card("??")
                elif state.can_show_or_muck_hole_cards():
                    state.show_or_muck_hole_cards()
                else:
                    raise ValueError("pokerkit's hand is not over: it awaits a decision or a deal")
        return list(state.stacks)


_FOLD = LegalAction("fold")
_CHECK = LegalAction("check")


@functools.cache
def _cards() -> dict[str, Any]:
    """Our card names (``"Ah"``) -> pokerkit ``Card`` objects, parsed once."""
    names = standard_deck()
    return dict(zip(names, require().Card.parse("".join(names))))
