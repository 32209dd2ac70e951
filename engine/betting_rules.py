"""The rules a betting round plays by, and the shapes it answers with.

:class:`BettingRules` (frozen data, fixed across a match) and its four
presets; :class:`Move` (what an action did), :class:`Options` and ``Turn``
(what the player to act may do); the legal-action lists, shared because the
same few recur turn after turn. The round itself is
:class:`cardhall.engine.betting.BettingRound`.

Betting structures (rules as data, in the spirit of pokerkit's, our own code)
    ``limit="fixed"``     bet and raise by the round's ``size`` (FL seed: 10
                          preflop and flop, 20 turn and river), ``cap``
                          counted bets per round (FL-2).
    ``limit="no_limit"``  bet at least ``size`` (the minimum bet, NL-2), raise
                          by at least the last full bet or raise, up to all-in.

Short all-ins (``reopen``)
    ``"half_bet"``    FL-3: an all-in raise of at least half a bet counts as a
                      full raise (reopens, counts toward the cap, next raise =
                      all-in total + one bet); less does not reopen for players
                      who already acted, and a player yet to act may complete
                      to the full bet; several short all-ins that reach half a
                      bet together reopen (for a player who acted, the total
                      raised since they acted must reach half a bet).
    ``"full_raise"``  NL-3 / TDA 47A: a raise that is not a full raise does not
                      reopen for players who already acted; raises since a
                      player acted that add up to a full raise do; the minimum
                      raise stays the last full one.
    ``"pokerkit"``    the ``phh`` profile: the betting of pokerkit 0.7.7
                      exactly (its completion amount, acted set and
                      consecutive short all-ins; blinds do not count as a bet
                      for the cap or the minimum raise; the amount to call is
                      the largest bet actually posted).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from cardhall.engine.base import LegalAction

Data = dict[str, Any]

FIXED = "fixed"
UNLIMITED = "no_limit"
REOPEN_MODES = ("half_bet", "full_raise", "pokerkit")


@dataclass(frozen=True, slots=True)
class BettingRules:
    """How betting works (fixed across a match).

    ``limit``: ``"fixed"`` or ``"no_limit"``. ``reopen``: ``"half_bet"``
    (FL-3), ``"full_raise"`` (NL-3, TDA 47A) or ``"pokerkit"`` (the ``phh``
    profile). ``free_fold``: whether a player may fold when checking is free
    (False at the Hold'em tables; True for Alamo, AL-5: "At any time a player
    may fold"; pokerkit allows it in cash-game mode, so True under ``phh``). ``amount_rule``, ``reopen_rule``, ``cap_rule``: the RULES tags
    quoted in :class:`IllegalAction` messages (Alamo passes ``"AL-5"``).
    The per-round numbers (bet size or minimum bet, cap) are given to
    :meth:`BettingRound.begin`.
    """

    limit: str
    reopen: str
    free_fold: bool = False
    amount_rule: str = "NL-2"
    reopen_rule: str = "NL-3"
    cap_rule: str = "FL-2"

    def __post_init__(self) -> None:
        if self.limit not in (FIXED, UNLIMITED):
            raise ValueError(f"limit must be 'fixed' or 'no_limit', not {self.limit!r}")
        if self.reopen not in REOPEN_MODES:
            raise ValueError(f"reopen must be one of {REOPEN_MODES}, not {self.reopen!r}")

    def to_data(self) -> Data:
        return {
            "limit": self.limit,
            "reopen": self.reopen,
            "free_fold": self.free_fold,
            "amount_rule": self.amount_rule,
            "reopen_rule": self.reopen_rule,
            "cap_rule": self.cap_rule,
        }

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> BettingRules:
        return cls(**data)


#: Fixed-limit Hold'em at the tables (seed 001, FL-2, FL-3).
FIXED_LIMIT = BettingRules(FIXED, "half_bet", amount_rule="FL-2", reopen_rule="FL-3")
#: No-limit Hold'em at the tables (seed 004, NL-2, NL-3).
NO_LIMIT = BettingRules(UNLIMITED, "full_raise")
#: Fixed-limit under the ``phh`` profile (pokerkit 0.7.7 semantics).
FIXED_LIMIT_PHH = BettingRules(FIXED, "pokerkit", free_fold=True, amount_rule="phh", reopen_rule="phh", cap_rule="phh")
#: No-limit under the ``phh`` profile (pokerkit 0.7.7 semantics).
NO_LIMIT_PHH = BettingRules(UNLIMITED, "pokerkit", free_fold=True, amount_rule="phh", reopen_rule="phh", cap_rule="phh")


_FOLD = LegalAction("fold")
_CHECK = LegalAction("check")


#: the shared, immutable legal actions built so far: the same few recur turn
#: after turn, and building a frozen dataclass costs more than finding it again
_LEGAL_ACTIONS: dict[tuple[str, int, int, str | None], LegalAction] = {}


def legal_action(kind: str, low: int, high: int, as_kind: str | None = None) -> LegalAction:
    """The legal action ``kind`` from ``low`` to ``high`` (``extra["as"] = as_kind`` when given), shared."""
    key = (kind, low, high, as_kind)
    action = _LEGAL_ACTIONS.get(key)
    if action is None:
        if len(_LEGAL_ACTIONS) > 4096:
            _LEGAL_ACTIONS.clear()
        action = _LEGAL_ACTIONS[key] = LegalAction(kind, low, high, {"as": as_kind} if as_kind else {})
    return action


def legal_list(fold: bool, call: int, allin: int, low: int | None, high: int | None, kind: str) -> list[LegalAction]:
    """The legal actions, in :meth:`cardhall.engine.betting.BettingRound.legal`'s order: ``fold`` (when
    ``fold``), ``call`` (``call`` chips) or ``check``, ``kind`` (``bet`` or
    ``raise``) from ``low`` to ``high`` when raising is open (``low`` not
    None), ``all_in`` as ``kind`` (or as a call when raising is closed) when
    ``allin`` (the all-in total) is not -1."""
    legal: list[LegalAction] = [_FOLD] if fold else []
    legal.append(legal_action("call", call, call) if call else _CHECK)
    if low is not None:
        assert high is not None
        legal.append(legal_action(kind, low, high))
    if allin >= 0:
        legal.append(legal_action("all_in", allin, allin, kind))
    return legal


class Move(NamedTuple):
    """What an action did: ``player`` (index), ``kind`` (``fold``, ``check``,
    ``call``, ``bet``, ``raise``; an ``all_in`` input resolves to one of
    them), ``added`` (chips moved from the stack into the bet), ``total`` (the
    player's bet this round afterwards), ``all_in`` (nothing left behind)."""

    player: int
    kind: str
    added: int
    total: int
    all_in: bool


class Options(NamedTuple):
    """The open choices of the player to act (internal shape, also public).

    ``call``: chips a call adds (0: checking is free). ``raise_min`` /
    ``raise_max``: raise-to totals, or None when betting/raising is closed.
    ``closed_by``: why raising is closed (an IllegalAction code) or None.
    """

    call: int
    raise_min: int | None
    raise_max: int | None
    closed_by: str | None


#: what the player to act may do (:meth:`BettingRound.turn`): ``(player, call,
#: raise_min, raise_max, closed_by, legal actions)``
Turn = tuple[int, int, "int | None", "int | None", "str | None", list[LegalAction]]
