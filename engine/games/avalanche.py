"""Avalanche (seed ``003_f65e338f73f2ceae.txt``, RULES AV-1..AV-7).

A match is one game: deal 10 cards each, play until at most one player holds
cards, most stored cards wins. The rematch (G-7) is a new engine with option
``dealer`` = the next seat clockwise.

Options
    ``decks``   2 (110 cards: two 52-card decks + 6 jokers, 2-6 players) or 3
                (165 cards: three decks + 9 jokers, any 2-8 players: required
                for 7 or 8, allowed for fewer); None (default) picks 2 for up
                to 6 players and 3 for 7 or 8 (AV-1).
    ``dealer``  the dealer's seat, or None (default) to choose one uniformly
                through the injected random source (AV-1). A rematch (G-7)
                passes the seat after the previous match's first dealer.

Randomness and the deal (G-2), in this order: if ``dealer`` is None,
``randbelow(len(seats))`` indexes the sorted seats; then
``cardhall.engine.cards.multi_deck(decks, 3 * decks)`` is shuffled; the shuffled list is
dealt from its front (index 0 is the top of the deck), one card at a time
clockwise starting left of the dealer, ten rounds. Snowfalls and refills take
cards from the top.

Ranks are the card-string rank characters ``2 3 4 5 6 7 8 9 T J Q K A X``
(``X`` = joker), lowest to highest; suits do not matter (AV-1). Hands are
multisets of card strings (cards repeat across decks), kept sorted by rank and,
within a rank, by the card string (suits ``c d h s``, jokers ``Xb`` before
``Xr``: :func:`card_key`).

Actions (``apply(seat, action)``)
    =====================================================  ==========================================
    ``{"type": "snowfall"}``                                 draw the top card; only with no avalanche
                                                             in progress and a non-empty deck (AV-4/5)
    ``{"type": "play", "rank": "9", "count": 2}``            play the first ``count`` cards of ``rank``
                                                             in the sorted hand (the timeout action)
    ``{"type": "play", "cards": ["9h", "9s"]}``              play exactly these cards (one rank); both
                                                             forms may be combined if they agree
    =====================================================  ==========================================

Legal actions (``legal_actions()``, as ``LegalAction.to_data()``)
    ``{"type": "snowfall"}`` when allowed;
    ``{"type": "play", "min": 1, "max": largest group, "groups": {rank: cards of that rank in hand}}``.

Events (``Event.data`` is public; "private" fields go only to the seat named)
    ==============  =============================================================  ==================
    type            public fields                                                  private (to seat)
    ==============  =============================================================  ==================
    ``game_start``  ``seats``, ``dealer``, ``decks``, ``deck_total`` (cards)       --
    ``deal``        ``hands`` {seat: count}, ``deck`` (cards left)                 each seat: ``cards``
    ``snowfall``    ``seat``, ``hand`` (size after), ``deck``                      drawer: ``card``
    ``play``        ``seat``, ``cards``, ``rank``, ``count``, ``outcome``          --
                    (``start``/``grow``/``stop``/``fall``, AV-2), ``hand`` (size
                    after), ``avalanche`` (cards face up with this play, before a
                    stop or fall clears them)
    ``stopped``     ``seat`` (who stopped), ``cards`` (all avalanche cards),      --
                    ``count``, ``neutral`` (neutral pile size after) (AV-3)
    ``fallen``      ``seat`` (who let it fall), ``to`` (previous player),          --
                    ``cards``, ``count``, ``stored`` (``to``'s pile after) (AV-3)
    ``refill``      ``seat``, ``count``, ``hand``, ``deck`` (AV-5)                 drawer: ``cards``
    ``out``         ``seat``: hand empty and deck empty, turns skipped (AV-5)      --
    ``turn``        ``seat`` to act, ``avalanche`` (true: must add to it),         --
                    ``snowfall`` (true: snowfall allowed)
    ``game_end``    ``last`` (seat whose hand was stored, or None), ``last_hand``  --
                    (cards it added), ``to_neutral`` (unresolved avalanche
                    cards), ``stored`` {seat: count}, ``neutral``, ``ranking``,
                    ``winners`` (AV-6)
    ==============  =============================================================  ==================

One action's events come in this order: ``snowfall`` or ``play``; ``stopped``
or ``fallen``; ``refill`` or ``out``; then ``turn`` or ``game_end``. ``start()``
returns ``game_start``, ``deal``, ``turn``.

Illegal actions raise ``IllegalAction(code, message, rule)``: ``not_started``
(AV-1), ``game_over`` (AV-6), ``not_your_turn``, ``bad_action``,
``unknown_action``, ``snowfall_not_allowed`` (AV-4 during an avalanche, AV-5
with the deck empty), ``bad_rank``, ``bad_count``, ``bad_card``, ``empty_play``,
``mixed_ranks``, ``not_in_hand`` (AV-2).

View (``view(viewer)``): ``game``, ``seats``, ``decks``, ``deck_total``,
``dealer``, ``started``, ``finished``, ``turn`` = ``to_act``, ``hand_sizes``
{seat: count}, ``deck`` (count), ``avalanche`` [{``seat``, ``cards``, ``rank``,
``count``}] oldest first, ``stored`` {seat: count}, ``neutral`` (count),
``out`` (seats dropped out), ``result`` (None until the end); a seated viewer
also gets ``hand`` (its cards, sorted by rank). Nothing else: never the deck
order, another hand or stored cards (AV-7).

Seat-keyed maps use string keys (``"3"``) so JSON and msgpack carry them alike.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar, Self

from cardhall.engine.base import Data, Engine, Event, IllegalAction, LegalAction
from cardhall.engine.cards import JOKER_RANK, RANK_VALUES, CardError, multi_deck, rank_value, validate
from cardhall.engine.options import Option, defaults
from cardhall.engine.plugins import Example, GameSpec, builtin_rules, builtin_schema
from cardhall.engine.rng import RandomSource
from cardhall.engine.seats import check_seats, clockwise, next_seat

HAND_SIZE = 10
#: jokers added per deck: 6 with two decks, 9 with three (AV-1).
JOKERS_PER_DECK = 3
#: ``decks`` option -> most players (AV-1).
MAX_PLAYERS = {2: 6, 3: 8}
#: rank characters lowest to highest (``X`` is the joker).
RANK_ORDER = "23456789TJQKA" + JOKER_RANK
STATE_VERSION = 1


def deck_size(decks: int) -> int:
    """Cards in play with ``decks`` decks: 52 each plus 3 jokers each (AV-1: 110 or 165)."""
    return (52 + JOKERS_PER_DECK) * decks


def card_key(card: str) -> tuple[int, str]:
    """Sort key: rank, then the card string (suits do not matter, AV-1)."""
    return rank_value(card), card


def outcome(prev_count: int, prev_rank: str, count: int, rank: str) -> str:
    """What a play of ``count`` cards of ``rank`` does to an avalanche whose last
    play was ``prev_count`` cards of ``prev_rank`` (RULES AV-2): ``"grow"``,
    ``"stop"`` or ``"fall"``.

    >>> outcome(1, "K", 1, "3"), outcome(2, "5", 2, "8"), outcome(4, "6", 4, "4")
    ('fall', 'grow', 'stop')
    >>> outcome(3, "Q", 1, "A"), outcome(1, "X", 2, "5"), outcome(2, "9", 2, "9")
    ('fall', 'grow', 'grow')
    """
    if count > prev_count:
        return "grow"
    if count < prev_count:
        return "fall"
    if RANK_VALUES[rank] >= RANK_VALUES[prev_rank]:
        return "grow"
    return "stop" if prev_count >= 2 else "fall"


def remove_cards(hand: list[str], cards: Iterable[str]) -> None:
    """Remove one occurrence of each of ``cards`` from ``hand`` (a multiset)."""
    for card in cards:
        hand.remove(card)


class Avalanche(Engine):
    """One game of Avalanche. See the module docstring for actions, events and options.

    State: ``deck`` (top first), ``hands`` / ``stored`` (seat -> cards),
    ``avalanche`` (the plays face up, oldest first: ``{"seat", "cards"}``),
    ``neutral`` (cards), ``turn``; plus the opening deal and a move log for
    :meth:`hand_record`.
    """

    game = "avalanche"
    title = "Avalanche"
    min_seats = 2
    max_seats = 8
    options_spec = (
        Option("decks", None, "choice", "2 decks (110 cards, up to 6 players) or 3 (165 cards, up to 8); "
               "automatic: 3 only for 7 or 8 players", "AV-1", choices=tuple(MAX_PLAYERS), nullable=True),
        Option("dealer", None, "seat", "the dealer's seat (the next seat plays first); automatic: a random seat; "
               "a rematch moves one seat on (G-7)", "AV-1", nullable=True),
    )
    default_options: ClassVar[Data] = defaults(options_spec)

    def __init__(self, seats: Sequence[int], options: Data, rng: RandomSource) -> None:
        self.seats = sorted(seats)
        self.options = options
        self.decks: int = options["decks"]
        self.rng = rng
        self.dealer: int | None = options["dealer"]
        self.deck: list[str] = []
        self.hands: dict[int, list[str]] = {s: [] for s in self.seats}
        self.stored: dict[int, list[str]] = {s: [] for s in self.seats}
        self.avalanche: list[Data] = []
        self.neutral: list[str] = []
        self.out: list[int] = []
        self.turn: int | None = None
        self.started = False
        self.is_finished = False
        # record only (hand_record): shuffled deck, opening hands, move log, end
        self.shuffled: list[str] = []
        self.opening: dict[int, list[str]] = {}
        self.moves: list[Data] = []
        self.ending: Data | None = None

    # -- construction -------------------------------------------------------
    @classmethod
    def new(cls, seats: Sequence[int], options: Mapping[str, Any] | None, rng: RandomSource) -> Self:
        """A game for ``seats`` (2..8 distinct numbers >= 1). Raises ValueError
        naming the option: ``seats`` (count or numbers), ``decks`` (not 2 or 3, or
        too few for the players, AV-1), ``dealer`` (not one of ``seats``)."""
        opts = cls.resolve_options(options)
        seat_list = check_seats(seats, cls.min_seats, cls.max_seats)
        decks = opts["decks"]
        if decks is None:
            decks = 2 if len(seat_list) <= MAX_PLAYERS[2] else 3
        if len(seat_list) > MAX_PLAYERS[decks]:
            raise ValueError(f"decks: {decks} decks allow at most {MAX_PLAYERS[decks]} players (AV-1)")
        dealer = opts["dealer"]
        if dealer is not None and dealer not in seat_list:
            raise ValueError("dealer: must be one of the seats or None")
        return cls(seat_list, {"decks": decks, "dealer": dealer}, rng)

    # -- inputs -------------------------------------------------------------
    def start(self) -> list[Event]:
        """Choose the dealer if needed, shuffle, deal ten each (AV-1, seed)."""
        if self.started:
            raise IllegalAction("already_started", "the game has already started", "AV-1")
        self.started = True
        if self.dealer is None:
            self.dealer = self.seats[self.rng.randbelow(len(self.seats))]
        deck = multi_deck(self.decks, JOKERS_PER_DECK * self.decks)
        self.rng.shuffle(deck)
        self.shuffled = list(deck)
        order = clockwise(self.seats, after=self.dealer)
        for i in range(HAND_SIZE * len(order)):
            self.hands[order[i % len(order)]].append(deck[i])
        self.deck = deck[HAND_SIZE * len(order) :]
        for hand in self.hands.values():
            hand.sort(key=card_key)
        self.opening = {s: list(h) for s, h in self.hands.items()}
        self.turn = next_seat(self.seats, after=self.dealer)
        return [
            Event(
                {
                    "type": "game_start",
                    "seats": list(self.seats),
                    "dealer": self.dealer,
                    "decks": self.decks,
                    "deck_total": len(self.shuffled),
                }
            ),
            Event(
                {
                    "type": "deal",
                    "hands": {str(s): len(h) for s, h in self.hands.items()},
                    "deck": len(self.deck),
                },
                {s: {"cards": list(h)} for s, h in self.hands.items()},
            ),
            self._turn_event(),
        ]

    def apply(self, seat: int, action: Mapping[str, Any]) -> list[Event]:
        """Apply ``seat``'s snowfall or play. Raises :class:`IllegalAction` (state
        unchanged) with codes ``not_started``, ``game_over`` (AV-6),
        ``not_your_turn`` (AV-4), ``bad_action`` / ``unknown_action``,
        ``snowfall_not_allowed`` (AV-4 during an avalanche, AV-5 with the deck
        empty), ``bad_card``, ``bad_rank``, ``bad_count``, ``empty_play``,
        ``mixed_ranks``, ``not_in_hand`` (AV-2)."""
        self._check_turn(seat)
        if not isinstance(action, Mapping):
            raise IllegalAction("bad_action", "an action is a map with a 'type'", "AV-4")
        kind = action.get("type")
        if kind == "snowfall":
            return self._snowfall(seat)
        if kind == "play":
            return self._play(seat, self._parse_play(seat, action))
        raise IllegalAction("unknown_action", f"unknown action type {kind!r}: snowfall or play", "AV-4")

    def advance(self) -> list[Event]:
        """Avalanche has no dealer steps (``pending`` is always None): raises IllegalAction."""
        raise IllegalAction("nothing_pending", "avalanche has no dealer steps")

    # -- questions ----------------------------------------------------------
    @property
    def to_act(self) -> int | None:
        return None if self.is_finished else self.turn

    @property
    def pending(self) -> str | None:
        """Always None: every step follows a player's action at once."""
        return None

    @property
    def finished(self) -> bool:
        return self.is_finished

    def legal_actions(self) -> list[LegalAction]:
        """``snowfall`` (no avalanche, deck not empty: AV-4, AV-5) and ``play``
        with ``min`` 1, ``max`` the largest group and ``extra["groups"]``: rank ->
        cards of that rank in hand. Empty when nobody is to act."""
        seat = self.to_act
        if seat is None:
            return []
        out = []
        if self._snowfall_allowed():
            out.append(LegalAction("snowfall"))
        groups = self._groups(seat)
        out.append(LegalAction("play", 1, max(groups.values()), {"groups": groups}))
        return out

    def result(self) -> Data | None:
        """None until finished; then ``{"ranking": [[seat, ...], ...]`` best first
        (equal stored counts share a place), ``"winners"``, ``"stored"`` {seat:
        count}, ``"neutral"`` count} (AV-6)."""
        if not self.is_finished:
            return None
        counts = {s: len(self.stored[s]) for s in self.seats}
        ranking: list[list[int]] = []
        for value in sorted(set(counts.values()), reverse=True):
            ranking.append([s for s in self.seats if counts[s] == value])
        return {
            "ranking": ranking,
            "winners": list(ranking[0]),
            "stored": {str(s): c for s, c in counts.items()},
            "neutral": len(self.neutral),
        }

    def view(self, viewer: int | None) -> Data:
        """What ``viewer`` may see (AV-7): its own ``hand`` (seats only), every
        hand's size, the deck size, the avalanche (each play with its seat), the
        stored-pile and neutral-pile counts, turn, dealer. Never the deck order,
        another seat's hand or the stored cards. A viewer that is not a seat gets
        the spectator view."""
        data: Data = {
            "game": self.game,
            "seats": list(self.seats),
            "decks": self.decks,
            "deck_total": deck_size(self.decks),
            "dealer": self.dealer,
            "started": self.started,
            "finished": self.is_finished,
            "turn": self.to_act,
            "to_act": self.to_act,
            "hand_sizes": {str(s): len(h) for s, h in self.hands.items()},
            "deck": len(self.deck),
            "avalanche": [self._play_data(p) for p in self.avalanche],
            "stored": {str(s): len(c) for s, c in self.stored.items()},
            "neutral": len(self.neutral),
            "out": list(self.out),
            "result": self.result(),
        }
        if viewer in self.hands:
            data["hand"] = list(self.hands[viewer])
        return data

    def timeout_action(self, seat: int) -> Data:
        """RULES G-3: snowfall if legal, else one card of the lowest rank in hand
        (the legal play with the fewest cards, then the lowest rank). Raises
        IllegalAction if ``seat`` is not to act."""
        self._check_turn(seat)
        if self._snowfall_allowed():
            return {"type": "snowfall"}
        lowest = min(self._groups(seat), key=RANK_VALUES.__getitem__)
        return {"type": "play", "rank": lowest, "count": 1}

    def audit(self) -> Data:
        """Card conservation (AV-6 check): ``{"unit": "cards", "expected": 110 or
        165 (0 before the deal), "counted": sum of "where", "where": {"hands",
        "deck", "avalanche", "stored", "neutral"}}``. At the end hands, deck
        and avalanche are 0."""
        where = {
            "hands": sum(len(h) for h in self.hands.values()),
            "deck": len(self.deck),
            "avalanche": sum(len(p["cards"]) for p in self.avalanche),
            "stored": sum(len(c) for c in self.stored.values()),
            "neutral": len(self.neutral),
        }
        expected = deck_size(self.decks) if self.started else 0
        return {"unit": "cards", "expected": expected, "counted": sum(where.values()), "where": where}

    def hand_record(self) -> Data | None:
        """The finished game in full, or None before the end: ``seats``,
        ``dealer``, ``decks``, ``deck_order`` (the shuffled deck, top first),
        ``deal`` {seat: opening hand}, ``moves`` (in order: ``{"seat", "type":
        "snowfall", "card"}``, ``{"seat", "type": "play", "cards", "outcome"}``
        (a fall adds ``"to"``), ``{"seat", "type": "refill", "cards"}``,
        ``{"seat", "type": "out"}``), ``end`` (as the ``game_end`` event plus the
        cards), ``stored`` {seat: cards}, ``neutral`` (cards), ``result``."""
        if not self.is_finished:
            return None
        return {
            "game": self.game,
            "seats": list(self.seats),
            "dealer": self.dealer,
            "decks": self.decks,
            "deck_order": list(self.shuffled),
            "deal": {str(s): list(h) for s, h in self.opening.items()},
            "moves": [dict(m) for m in self.moves],
            "end": dict(self.ending or {}),
            "stored": {str(s): list(c) for s, c in self.stored.items()},
            "neutral": list(self.neutral),
            "result": self.result(),
        }

    # -- persistence --------------------------------------------------------
    def to_data(self) -> Data:
        return {
            "game": self.game,
            "version": STATE_VERSION,
            "seats": list(self.seats),
            "options": dict(self.options),
            "dealer": self.dealer,
            "deck": list(self.deck),
            "hands": {str(s): list(h) for s, h in self.hands.items()},
            "stored": {str(s): list(c) for s, c in self.stored.items()},
            "avalanche": [{"seat": p["seat"], "cards": list(p["cards"])} for p in self.avalanche],
            "neutral": list(self.neutral),
            "out": list(self.out),
            "turn": self.turn,
            "started": self.started,
            "finished": self.is_finished,
            "shuffled": list(self.shuffled),
            "opening": {str(s): list(h) for s, h in self.opening.items()},
            "moves": [_copy_move(m) for m in self.moves],
            "ending": None if self.ending is None else _copy_move(self.ending),
            "rng": self.rng_to_data(self.rng),
        }

    @classmethod
    def from_data(cls, data: Data) -> Self:
        try:
            if data["game"] != cls.game or data["version"] != STATE_VERSION:
                raise ValueError(f"not an avalanche state of version {STATE_VERSION}")
            seats = [int(s) for s in data["seats"]]
            self = cls(seats, dict(data["options"]), cls.rng_from_data(data["rng"]))
            self.dealer = data["dealer"]
            self.deck = [validate(c) for c in data["deck"]]
            self.hands = {int(s): [validate(c) for c in h] for s, h in data["hands"].items()}
            self.stored = {int(s): [validate(c) for c in h] for s, h in data["stored"].items()}
            self.avalanche = [
                {"seat": int(p["seat"]), "cards": [validate(c) for c in p["cards"]]} for p in data["avalanche"]
            ]
            self.neutral = [validate(c) for c in data["neutral"]]
            self.out = [int(s) for s in data["out"]]
            self.turn = data["turn"]
            self.started = bool(data["started"])
            self.is_finished = bool(data["finished"])
            self.shuffled = [validate(c) for c in data["shuffled"]]
            self.opening = {int(s): [validate(c) for c in h] for s, h in data["opening"].items()}
            self.moves = [_copy_move(m) for m in data["moves"]]
            self.ending = None if data["ending"] is None else _copy_move(data["ending"])
        except (KeyError, TypeError, AttributeError, CardError) as exc:
            raise ValueError(f"malformed avalanche state: {exc!r}") from exc
        if set(self.hands) != set(seats) or set(self.stored) != set(seats):
            raise ValueError("malformed avalanche state: hands and stored piles must cover the seats")
        return self

    # -- internals ----------------------------------------------------------
    def _check_turn(self, seat: int) -> None:
        if not self.started:
            raise IllegalAction("not_started", "the game has not started", "AV-1")
        if self.is_finished:
            raise IllegalAction("game_over", "the game is over", "AV-6")
        if seat != self.turn:
            raise IllegalAction("not_your_turn", f"it is seat {self.turn}'s turn", "AV-4")

    def _snowfall_allowed(self) -> bool:
        return not self.avalanche and bool(self.deck)

    def _groups(self, seat: int) -> dict[str, int]:
        """Rank -> cards of that rank in ``seat``'s hand, lowest rank first."""
        return dict(Counter(card[0] for card in self.hands[seat]))

    @staticmethod
    def _play_data(play: Data) -> Data:
        cards = play["cards"]
        return {"seat": play["seat"], "cards": list(cards), "rank": cards[0][0], "count": len(cards)}

    def _turn_event(self) -> Event:
        return Event(
            {
                "type": "turn",
                "seat": self.turn,
                "avalanche": bool(self.avalanche),
                "snowfall": self._snowfall_allowed(),
            }
        )

    def _parse_play(self, seat: int, action: Mapping[str, Any]) -> list[str]:
        """The cards a ``play`` action names, taken from ``seat``'s hand (AV-2)."""
        hand = self.hands[seat]
        rank = action.get("rank")
        count = action.get("count")
        cards = action.get("cards")
        if rank is not None and (not isinstance(rank, str) or rank not in RANK_VALUES):
            raise IllegalAction("bad_rank", f"rank must be one of {RANK_ORDER!r} (T = ten, X = joker)", "AV-2")
        if count is not None and (type(count) is not int or count < 1):
            raise IllegalAction("bad_count", "count must be a whole number >= 1", "AV-2")
        if cards is not None:
            if not isinstance(cards, list | tuple):
                raise IllegalAction("bad_card", "cards must be a list of card strings", "AV-2")
            try:
                chosen = [validate(c) for c in cards]
            except CardError as exc:
                raise IllegalAction("bad_card", str(exc), "AV-2") from exc
            if not chosen:
                raise IllegalAction("empty_play", "a play needs at least one card", "AV-2")
            ranks = {c[0] for c in chosen}
            if len(ranks) > 1 or (rank is not None and ranks != {rank}):
                raise IllegalAction("mixed_ranks", "a play is one card or several of one rank", "AV-2")
            if count is not None and count != len(chosen):
                raise IllegalAction("bad_count", "count does not match the cards named", "AV-2")
            needed = Counter(chosen)
            held = Counter(hand)
            if any(held[c] < n for c, n in needed.items()):
                raise IllegalAction("not_in_hand", "those cards are not all in your hand", "AV-2")
            return sorted(chosen, key=card_key)
        if rank is None or count is None:
            raise IllegalAction("bad_action", "a play names 'cards', or 'rank' and 'count'", "AV-2")
        same = [c for c in hand if c[0] == rank]
        if len(same) < count:
            raise IllegalAction("not_in_hand", f"you hold {len(same)} card(s) of rank {rank}", "AV-2")
        return same[:count]

    def _snowfall(self, seat: int) -> list[Event]:
        if self.avalanche:
            raise IllegalAction("snowfall_not_allowed", "no drawing while an avalanche is in progress", "AV-4")
        if not self.deck:
            raise IllegalAction("snowfall_not_allowed", "the deck is empty: start an avalanche", "AV-5")
        card = self.deck.pop(0)
        hand = self.hands[seat]
        hand.append(card)
        hand.sort(key=card_key)
        self.moves.append({"seat": seat, "type": "snowfall", "card": card})
        events = [
            Event(
                {"type": "snowfall", "seat": seat, "hand": len(hand), "deck": len(self.deck)},
                {seat: {"card": card}},
            )
        ]
        return events + self._next_turn(seat)

    def _play(self, seat: int, cards: list[str]) -> list[Event]:
        hand = self.hands[seat]
        remove_cards(hand, cards)
        rank, count = cards[0][0], len(cards)
        if self.avalanche:
            prev = self.avalanche[-1]
            what = outcome(len(prev["cards"]), prev["cards"][0][0], count, rank)
        else:
            what = "start"
        self.avalanche.append({"seat": seat, "cards": list(cards)})
        pile = [c for p in self.avalanche for c in p["cards"]]
        move: Data = {"seat": seat, "type": "play", "cards": list(cards), "outcome": what}
        events = [
            Event(
                {
                    "type": "play",
                    "seat": seat,
                    "cards": list(cards),
                    "rank": rank,
                    "count": count,
                    "outcome": what,
                    "hand": len(hand),
                    "avalanche": len(pile),
                }
            )
        ]
        if what == "stop":
            self.neutral.extend(pile)
            self.avalanche = []
            events.append(
                Event(
                    {"type": "stopped", "seat": seat, "cards": pile, "count": len(pile), "neutral": len(self.neutral)}
                )
            )
        elif what == "fall":
            to = prev["seat"]
            self.stored[to].extend(pile)
            self.avalanche = []
            move["to"] = to
            events.append(
                Event(
                    {
                        "type": "fallen",
                        "seat": seat,
                        "to": to,
                        "cards": pile,
                        "count": len(pile),
                        "stored": len(self.stored[to]),
                    }
                )
            )
        self.moves.append(move)
        if not hand:
            if self.deck:
                drawn = self.deck[:HAND_SIZE]
                del self.deck[:HAND_SIZE]
                hand.extend(sorted(drawn, key=card_key))
                self.moves.append({"seat": seat, "type": "refill", "cards": list(drawn)})
                events.append(
                    Event(
                        {
                            "type": "refill",
                            "seat": seat,
                            "count": len(drawn),
                            "hand": len(hand),
                            "deck": len(self.deck),
                        },
                        {seat: {"cards": list(drawn)}},
                    )
                )
            else:
                self.out.append(seat)
                self.moves.append({"seat": seat, "type": "out"})
                events.append(Event({"type": "out", "seat": seat}))
        return events + self._next_turn(seat)

    def _next_turn(self, seat: int) -> list[Event]:
        """End the game if at most one player holds cards (AV-6), else pass the
        turn to the next seat holding cards (AV-4, AV-5)."""
        holders = [s for s in self.seats if self.hands[s]]
        if len(holders) <= 1:
            return [self._end(holders[0] if holders else None)]
        self.turn = next_seat(self.seats, after=seat, eligible=set(holders))
        return [self._turn_event()]

    def _end(self, last: int | None) -> Event:
        """AV-6: the last holder stores its hand; an unresolved avalanche goes to the neutral pile."""
        last_cards: list[str] = []
        if last is not None:
            last_cards = self.hands[last]
            self.stored[last].extend(last_cards)
            self.hands[last] = []
        leftover = [c for p in self.avalanche for c in p["cards"]]
        self.neutral.extend(leftover)
        self.avalanche = []
        self.turn = None
        self.is_finished = True
        result = self.result()
        assert result is not None
        self.ending = {"last": last, "last_hand": list(last_cards), "to_neutral": list(leftover)}
        return Event(
            {
                "type": "game_end",
                "last": last,
                "last_hand": len(last_cards),
                "to_neutral": len(leftover),
                "stored": result["stored"],
                "neutral": result["neutral"],
                "ranking": result["ranking"],
                "winners": result["winners"],
            }
        )


def _copy_move(move: Mapping[str, Any]) -> Data:
    """A copy of a move-log entry (lists copied, so state never shares lists)."""
    return {k: list(v) if isinstance(v, list) else v for k, v in move.items()}


#: this game's registration (:mod:`cardhall.engine.plugins`)
GAME = GameSpec(
    name="avalanche", engine=Avalanche, order=50,
    bots={"heuristic": "cardhall.engine.bots.avalanche:AvalancheBot"}, default_bot="heuristic",
    schema=builtin_schema("avalanche.json"), rules=builtin_rules("avalanche"),
    example=Example(until="match_ended"),
    web_renderer="/web/js/games/avalanche.js", tui_renderer="cardhall.clients.tui.game_avalanche:TUI",
)
