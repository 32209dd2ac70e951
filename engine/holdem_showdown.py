"""Hold'em: side pots, the showdown and the end of a hand.

Side pots by contribution level (FL-6; ``phh``: antes in the main pot, as
pokerkit), the all-in reveal (FL-9, TDA 16), the showdown order and the
show-or-muck choices (FL-9), awards with odd chips (FL-7 lowest seat first,
G-6 left of the button; ``phh``: the whole remainder to the first winner in
PHH order), then the hand's end: stacks, busts and the match's end (G-7).
Hand values are :mod:`cardhall.engine.ranking`'s.
"""

from __future__ import annotations

from cardhall.engine.base import Data, Event
from cardhall.engine.betting import BettingRound
from cardhall.engine.holdem_hand import Hand, HoldemBase
from cardhall.engine.pots import Pot, index_pots, split
from cardhall.engine.ranking import hand_name, hand_value


def pot_data(pot: Pot, players: list[int]) -> Data:
    """A pot as event/view data: ``{"amount": chips, "eligible": [seats]}``
    (``pot.eligible`` holds player indices, ``players`` maps them to seats)."""
    return {"amount": pot.amount, "eligible": [players[i] for i in pot.eligible]}


class HoldemShowdown(HoldemBase):
    """Pots, showdown and hand end of :class:`cardhall.engine.holdem.HoldemEngine`."""

    def _showdown_order(self, hand: Hand, r: BettingRound, live: list[int]) -> list[int]:
        """FL-9: from the last bettor or raiser of the final betting round, else
        the first left of the button (``phh``: that round's first to act, as
        pokerkit's opener), then clockwise; live players only (indices)."""
        n = len(hand.players)
        start = r.aggressor
        if start is None:
            start = 0
            if self.phh and hand.street == 0:
                blinds = hand.blinds
                bets = r.bets
                top = max(range(n), key=lambda i: (bets[i] if blinds[i] else 0, i))  # the largest blind, the last on a tie
                start = (top + 1) % n
        live_set = set(live)
        return [j for j in ((start + k) % n for k in range(n)) if j in live_set]

    def _reveal_all(self, order: list[int]) -> list[Event]:
        """Show every hand of ``order`` (player indices): the all-in reveal (FL-9, TDA 16)."""
        hand = self.hand
        assert hand is not None
        events = []
        board = hand.board
        complete = len(board) == 5
        for i in order:
            hand.shown[i] = True
            cards = hand.hole[i]
            hand.actions.append(f"p{i + 1} sm {cards[0]}{cards[1]}")
            name = hand_name(hand_value(cards + board)) if complete else None
            events.append(Event({"type": "show", "seat": hand.players[i], "cards": list(cards), "hand": name,
                                 "reason": "all_in"}))
        return events

    def _pots(self, hand: Hand, contrib: list[int], live: list[int] | None = None) -> list[Pot]:
        """Side pots by contribution level (FL-6) among ``live`` (default: the
        players who have not folded), as player indices; under ``phh`` without
        ante trimming the antes all go to the main pot, open to every live
        player (pokerkit)."""
        if live is None:
            folded = hand.round.folded if hand.round is not None else hand.folded
            live = [i for i, f in enumerate(folded) if not f]
        # the same contributions and players give the same pots: the closing
        # round, the showdown and every view ask for them again
        key = (*contrib, -1, *live)
        pots = self._pot_memo.get(key)
        if pots is None:
            pots = self._pot_memo[key] = self._form_pots(hand, contrib, live)
        return list(pots)

    def _form_pots(self, hand: Hand, contrib: list[int], live: list[int]) -> list[Pot]:
        """:meth:`_pots`, computed."""
        if not self.phh or self.options["ante_trimming"] or not any(hand.antes):
            return index_pots(contrib, live)
        antes = sum(hand.antes)
        rest = index_pots([c - a for c, a in zip(contrib, hand.antes)], live)
        pots = [Pot(antes, tuple(live))] + rest
        merged: list[Pot] = []
        for pot in pots:
            if merged and merged[-1].eligible == pot.eligible:
                merged[-1] = Pot(merged[-1].amount + pot.amount, pot.eligible)
            else:
                merged.append(pot)
        return merged

    def _win_uncontested(self, winner: int) -> list[Event]:
        """Everyone else folded: ``winner`` (index) takes every chip in the middle."""
        hand = self.hand
        assert hand is not None
        amount = sum(hand.contrib)
        hand.stacks[winner] += amount
        seat = hand.players[winner]
        events = [Event({"type": "award", "pot": 0, "amount": amount, "winners": {str(seat): amount}, "hand": None})]
        return events + self._end_hand()

    def _showdown(self) -> list[Event]:
        """FL-9: show or muck in order (a hand that can win is always shown),
        then award each pot to its best hands (FL-7, G-6, ``phh``: pokerkit)."""
        hand = self.hand
        assert hand is not None
        events: list[Event] = []
        folded = hand.folded
        live = [i for i in range(len(folded)) if not folded[i]]
        board = hand.board
        hole = hand.hole
        players = hand.players
        values = {i: hand_value(hole[i] + board) for i in live}
        pots = self._pots(hand, hand.contrib, live)
        if not hand.revealed:
            n = len(players)
            start = hand.aggressor if hand.aggressor is not None else 0
            order = [j for j in ((start + k) % n for k in range(n)) if not folded[j]]
            best: list[int] = [-1] * len(pots)  # best value shown per pot
            for i in order:
                v = values[i]
                can_win = any(i in p.eligible and v >= best[k] for k, p in enumerate(pots))
                if can_win or hand.show_pref[i]:
                    hand.shown[i] = True
                    cards = hole[i]
                    hand.actions.append(f"p{i + 1} sm {cards[0]}{cards[1]}")
                    events.append(Event({"type": "show", "seat": players[i], "cards": list(cards), "hand": hand_name(v),
                                         "reason": "showdown" if can_win else "chose"}))
                    for k, p in enumerate(pots):
                        if v > best[k] and i in p.eligible:
                            best[k] = v
                else:
                    hand.actions.append(f"p{i + 1} sm")
                    events.append(Event({"type": "muck", "seat": players[i]}))
        phh = self.phh
        if phh:
            # pokerkit forms the pots to award after the showdown: mucked hands
            # drop out, then every hand that cannot win a pot is killed, then
            # the pots are formed again among the rest (equal pots merge); the
            # same players give the same pots, so they are formed only on a change
            shown_flags = hand.shown
            shown = [i for i in live if shown_flags[i]]
            if shown != live:
                pots = self._pots(hand, hand.contrib, shown)
            tops = [max([values[j] for j in p.eligible]) for p in pots]
            alive = [i for i in shown if any(values[i] == top and i in p.eligible for p, top in zip(pots, tops))]
            if alive != shown:
                pots = self._pots(hand, hand.contrib, alive)
            odd_order: list[int] = []
            index: dict[int, int] = {}
        else:
            odd_order = self._odd_chip_order(hand)
            index = {s: i for i, s in enumerate(players)}
        stacks = hand.stacks
        for k, pot in enumerate(pots):
            eligible = pot.eligible
            top = max([values[i] for i in eligible])
            winners = [i for i in eligible if values[i] == top]
            if phh:
                if len(winners) == 1:
                    shares = {winners[0]: pot.amount}
                else:
                    share, rest = divmod(pot.amount, len(winners))
                    shares = {i: share for i in winners}
                    shares[min(winners)] += rest
            else:
                by_seat = split(pot.amount, [players[i] for i in winners], odd_order)
                shares = {index[s]: c for s, c in by_seat.items()}
            for i, c in shares.items():
                stacks[i] += c
            events.append(Event({"type": "award", "pot": k, "amount": pot.amount,
                                 "winners": {str(players[i]): c for i, c in sorted(shares.items())},
                                 "hand": hand_name(top)}))
        return events + self._end_hand()

    def _end_hand(self) -> list[Event]:
        """Settle the stacks, record busts (their place shared) and end the
        match when one player holds every chip (G-7); else the next hand waits (G-4)."""
        hand = self.hand
        assert hand is not None
        hand.over = True
        stacks = hand.stacks
        hand.finish = list(stacks)
        chips = self.chips
        players = hand.players
        start = hand.start
        for i, s in enumerate(players):
            chips[s] = stacks[i]
        events = [Event({"type": "hand_end", "hand": hand.number,
                         "stacks": {str(s): chips[s] for s in self.seats},
                         "net": {str(s): stacks[i] - start[i] for i, s in enumerate(players)}})]
        out = [s for s in players if chips[s] == 0]
        alive = sum(1 for s in self.seats if chips[s] > 0)
        if out:
            self.eliminated.append(out)
            events.append(Event({"type": "bust", "seats": out, "place": alive + 1}))
        if alive <= 1:
            self.is_finished = True
            self._pending = None
            result = self.result()
            assert result is not None
            events.append(Event({"type": "match_end", "ranking": result["ranking"], "winners": result["winners"],
                                 "item_stakes": self.options["item_stakes"]}))
        else:
            self._pending = "hand"
        return events
