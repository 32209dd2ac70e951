"""Hold'em: what each viewer sees, the chip audit and the hand record.

``view(viewer)`` is the one place state is redacted (G-2: never the deck,
burns or hole cards not shown); ``audit()`` checks chip conservation;
``hand_record()`` is the last completed hand as PHH fields, with the burns
(FL-5) and the options that replay it.
"""

from __future__ import annotations

from cardhall.engine.base import Data
from cardhall.engine.holdem_hand import STREETS, Hand, HoldemBase
from cardhall.engine.phh import burned_cards


class HoldemViews(HoldemBase):
    """Views, audit, results and records of :class:`cardhall.engine.holdem.HoldemEngine`."""

    def in_match(self, seat: int) -> bool:
        """False once ``seat`` busted (no chips at a hand's end)."""
        return not any(seat in group for group in self.eliminated)

    @property
    def button(self) -> int | None:
        """The current hand's button seat (None before the first hand)."""
        return self.positions.button if self.positions else None

    def stacks(self) -> dict[int, int]:
        """Seat -> chips behind (during a hand: not counting chips already bet)."""
        out = dict(self.chips)
        hand = self.hand
        if hand is not None and not hand.over:
            live = hand.round.stacks if hand.round is not None else hand.stacks
            for i, s in enumerate(hand.players):
                out[s] = live[i]
        return out

    def result(self) -> Data | None:
        """None until finished; then ``ranking`` (groups of seats, best first;
        players out in the same hand share a place), ``winners``, ``loser`` (the
        first out), ``hands`` played, ``item_stakes`` (NL-6)."""
        if not self.is_finished:
            return None
        alive = [s for s in self.seats if self.chips[s] > 0]
        ranking = [alive] + [list(g) for g in reversed(self.eliminated)]
        out: Data = {
            "ranking": ranking,
            "winners": list(alive),
            "hands": self.hand_number,
            "item_stakes": self.options["item_stakes"],
        }
        if self.eliminated:
            out["loser"] = list(self.eliminated[0])
        return out

    def view(self, viewer: int | None) -> Data:
        """The table as ``viewer`` (a seat, or None for a spectator) sees it:
        stacks, bets this street, pots, board, positions, stakes, whose turn,
        the street, cards shown at showdown, and the viewer's own hole cards.
        Never the deck, burns, or hole cards not shown (mucked cards stay
        hidden, G-2)."""
        hand = self.hand
        to_act = self.to_act
        data: Data = {
            "game": self.game,
            "seats": list(self.seats),
            "started": self.started,
            "finished": self.is_finished,
            "hand": self.hand_number,
            "level": self.level,
            "stakes": self._stakes(self.level),
            "blind_levels": self.options["blind_levels"],
            "item_stakes": self.options["item_stakes"],
            "to_act": to_act,
            "pending": self._pending,
            "stacks": {str(s): c for s, c in self.stacks().items()},
            "eliminated": [list(g) for g in self.eliminated],
            "result": self.result(),
        }
        if hand is None:
            return data
        r = hand.round
        players = hand.players
        n = len(players)
        bets = r.bets if r is not None else [0] * n
        stacks = r.stacks if r is not None else hand.stacks
        folded = r.folded if r is not None else hand.folded
        data.update(
            {
                "button": hand.button,
                "small_blind": hand.small_blind,
                "big_blind": hand.big_blind,
                "players": list(players),
                "street": None if hand.over else STREETS[hand.street],
                "board": list(hand.board),
                "bets": {str(s): bets[i] for i, s in enumerate(players)},
                "folded": [s for i, s in enumerate(players) if folded[i]],
                "all_in": [s for i, s in enumerate(players) if not folded[i] and stacks[i] == 0],
                "pots": [] if hand.over else [{"amount": p.amount, "eligible": [players[j] for j in p.eligible]}
                                              for p in self._pots(hand, hand.contrib)],
                "pot": 0 if hand.over else sum(hand.contrib) + sum(bets),
                "shown": {str(s): list(hand.hole[i]) for i, s in enumerate(players) if hand.shown[i]},
            }
        )
        if viewer in players:
            i = players.index(viewer)
            data["hole"] = list(hand.hole[i])
            data["show"] = hand.show_pref[i]
        if viewer is not None and viewer == to_act:
            data["legal"] = [a.to_data() for a in self.legal_actions()]
        return data

    def audit(self) -> Data:
        """Chip conservation: stacks behind + bets this round + the pot equal the
        chips the match started with."""
        hand = self.hand
        where = {"stacks": 0, "bets": 0, "pot": 0}
        if hand is None or hand.over:
            where["stacks"] = sum(self.chips.values())
        else:
            r = hand.round
            where["stacks"] = sum(self.stacks().values())
            where["bets"] = sum(r.bets) if r is not None else 0
            where["pot"] = sum(hand.contrib)
        return {"unit": "chips", "expected": self.total_chips, "counted": sum(where.values()), "where": where}

    # -- hand history -------------------------------------------------------------
    def hand_record(self) -> Data | None:
        """The last completed hand as PHH fields (contract: ``variant``,
        ``antes``, ``blinds_or_straddles``, ``small_bet``/``big_bet`` or
        ``min_bet``, ``starting_stacks``, ``actions``, ``finishing_stacks``,
        ``ante_trimming_status``, ``_cardhall_*``), players in PHH order;
        ``antes``/``blinds_or_straddles`` in pokerkit's positional convention
        (heads-up reversed). PHH has no burn action, so the cards burned
        before the flop, turn and river the hand reached (FL-5) are the
        user-defined field ``_cardhall_burns`` (a list of 0 to 3 cards, in
        order). None before a hand has completed."""
        hand = self.hand
        if hand is None or not hand.over:
            return None
        n = len(hand.players)
        blinds = list(hand.blinds)
        antes = list(hand.antes_nominal)
        if n == 2:  # pokerkit: player i posts blinds_or_straddles[not i] heads-up
            blinds.reverse()
            antes.reverse()
        record: Data = {
            "variant": self.variant,
            "ante_trimming_status": bool(self.options["ante_trimming"]),
            "antes": antes,
            "blinds_or_straddles": blinds,
        }
        record.update(self._record_stakes(hand))
        record.update(
            {
                "starting_stacks": list(hand.start),
                "actions": list(hand.actions),
                "finishing_stacks": list(hand.finish or hand.stacks),
                "_cardhall_game": self.game,
                "_cardhall_hand": hand.number,
                "_cardhall_seats": list(hand.players),
                "_cardhall_button": hand.button,
                "_cardhall_burns": burned_cards(hand.deck, n, len(hand.board)),
                "_cardhall_options": self._replay_options(hand),
            }
        )
        return record

    def _replay_options(self, hand: Hand) -> Data:
        """Options that replay this one hand: its stakes fixed, its button, its
        starting stacks per seat (seats = ``_cardhall_seats``, sorted)."""
        opts = {k: v for k, v in self.options.items() if k not in ("starting_stacks", "button", "blind_levels")}
        stakes = hand.stakes
        for k in stakes:
            if k in opts:
                opts[k] = stakes[k]
        by_seat = dict(zip(hand.players, hand.start))
        opts["starting_stacks"] = [by_seat[s] for s in sorted(hand.players)]
        opts["button"] = hand.button if hand.button in hand.players else None
        opts["blind_levels"] = None
        return opts
