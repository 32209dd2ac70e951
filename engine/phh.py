"""PHH hand histories: read and write the text, map a hand onto engine options.

PHH (poker hand history, spec uoftcprg/phh-std; reference implementation
pokerkit's ``HandHistory``) is TOML. A ``.phh`` file holds one hand as
top-level keys; a ``.phhs`` file holds several, each a table (``[1]``,
``[2]``, ...). Fields this module knows (variants ``FT`` and ``NT``):

``variant``                 ``"FT"`` fixed-limit or ``"NT"`` no-limit Texas Hold'em
``antes``                   list, one per player, in pokerkit's positional order
``blinds_or_straddles``     list, one per player, positional (see below)
``small_bet``, ``big_bet``  FT stakes; ``min_bet`` NT stakes (chips)
``starting_stacks``         list of chips, p1..pn
``actions``                 list of action strings (below)
``finishing_stacks``        optional, p1..pn after the hand
``ante_trimming_status``    optional bool (pokerkit's default: false)
``_...``                    user-defined fields (phh-std: a name with a
                            leading underscore; parsers ignore them); ours are
                            ``_cardhall_game``, ``_cardhall_hand``,
                            ``_cardhall_seats`` (PHH player index -> seat),
                            ``_cardhall_button``, ``_cardhall_burns`` (the
                            cards burned before the flop, turn and river the
                            hand reached, in order: PHH has no burn action,
                            FL-5) and ``_cardhall_options`` (engine options)

Players are ``p1`` .. ``pn`` in dealing order: p1 is the first seat left of
the button and pn the button. Positional lists follow pokerkit 0.7.7: with
three or more players index 0 is the small blind and index 1 the big blind;
heads-up pokerkit swaps them (player index 0, the big blind, posts
``blinds_or_straddles[1]`` and ``antes[1]``), so in both cases list index 1
is the big blind's.

Actions: ``d dh p1 AcKd`` (hole cards, ``????`` when unknown), ``d db Jc3d5c``
(board), ``p1 f`` (fold), ``p1 cc`` (check or call), ``p1 cbr 60`` (bet or
raise to 60 in total for the street), ``p1 sm AcKd`` / ``p1 sm`` (show, or
muck), ``p1 sm -`` (muck). Text after ``#`` is a comment.

Numbers: TOML floats are read as :class:`decimal.Decimal` (exact, as pokerkit
does), so a recorded half chip such as ``10112.5`` stays exact.

>>> hand = loads('''variant = "NT"
... antes = [0, 0]
... blinds_or_straddles = [10, 20]
... min_bet = 20
... starting_stacks = [1000, 1000]
... actions = ["d dh p1 AhAd", "d dh p2 KhKd", "p2 f"]''')
>>> engine_setup(hand)
('no_limit_holdem', [1, 2], {'starting_stacks': [1000, 1000], 'small_blind': 10, 'big_blind': 20, 'ante': 0, 'big_blind_ante': 0, 'button': 2, 'profile': 'phh', 'ante_trimming': False, 'min_bet': 20, 'blind_levels': None})
>>> parse_action("p2 cbr 60 # a raise")
Action(actor=2, op='cbr', cards=None, amount=60, text='p2 cbr 60 # a raise')
>>> deck_order(hand)[:4]
['Ah', 'Kh', 'Ad', 'Kd']
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any

from cardhall.engine.cards import CardError, standard_deck, validate
from cardhall.engine.phh_actions import Action, PHHError, parse_action, parse_amount
from cardhall.engine.phh_toml import simple_toml

__all__ = ["Action", "PHHError", "parse_action", "parse_amount", "simple_toml"]

Hand = dict[str, Any]
_DECK = tuple(standard_deck())

#: PHH variant code -> our game name.
VARIANTS: dict[str, str] = {"FT": "fixed_limit_holdem", "NT": "no_limit_holdem"}
#: our game name -> PHH variant code.
GAME_VARIANTS: dict[str, str] = {game: code for code, game in VARIANTS.items()}

#: fields a hand of each variant must have (pokerkit's ``required_field_names``).
REQUIRED: dict[str, tuple[str, ...]] = {
    "FT": ("variant", "antes", "blinds_or_straddles", "small_bet", "big_bet", "starting_stacks", "actions"),
    "NT": ("variant", "antes", "blinds_or_straddles", "min_bet", "starting_stacks", "actions"),
}

#: engine options that a hand's standard PHH fields decide (a ``_cardhall_options``
#: field never overrides these).
STANDARD_OPTIONS = frozenset(
    {"starting_stacks", "small_blind", "big_blind", "ante", "big_blind_ante",
     "small_bet", "big_bet", "min_bet", "button", "ante_trimming", "blind_levels", "dead_small_blind"}
)

PHH_SUFFIXES = (".phh", ".phhs")


# -- reading -----------------------------------------------------------------
def loads(text: str) -> Hand:
    """One hand from ``.phh`` text, as a dict of its fields; raises
    :class:`PHHError` when the text is not TOML."""
    fast = simple_toml(text)
    if fast is not None:
        return fast
    import tomllib  # the general reader, for text outside simple_toml's subset

    try:
        return tomllib.loads(text, parse_float=Decimal)
    except tomllib.TOMLDecodeError as exc:
        raise PHHError(f"not valid TOML: {exc}") from None


def loads_all(text: str) -> list[tuple[str, Hand]]:
    """The hands of ``.phhs`` text as ``(section name, hand)`` pairs in file
    order; raises :class:`PHHError` when the text is not TOML or a top-level
    value is not a table."""
    doc = loads(text)
    out = []
    for name, hand in doc.items():
        if not isinstance(hand, dict):
            raise PHHError(f".phhs top-level key {name!r} is not a hand table")
        out.append((name, hand))
    return out


def load_file(path: str | os.PathLike[str]) -> list[tuple[str | None, Hand]]:
    """The hands of one file: ``[(None, hand)]`` for ``.phh``, ``[(section,
    hand), ...]`` for ``.phhs``. Raises OSError when unreadable, PHHError when malformed."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".phhs":
        return list(loads_all(text))
    return [(None, loads(text))]


def find_files(paths: Iterable[str | os.PathLike[str]]) -> Iterator[Path]:
    """Every ``.phh``/``.phhs`` file named in ``paths`` or found under a folder
    of ``paths`` (recursively, sorted naturally: ``2.phh`` before ``10.phh``).
    A named file is yielded whatever its suffix; a missing path raises
    FileNotFoundError."""
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = [p for p in path.rglob("*") if p.suffix in PHH_SUFFIXES and p.is_file()]
            yield from sorted(found, key=_natural_key)
        elif path.exists():
            yield path
        else:
            raise FileNotFoundError(f"no such file or folder: {raw}")


def _natural_key(path: Path) -> list[tuple[int, str]]:
    """Path parts split into digit runs compared as numbers: ``41b/204`` after ``32/23``."""
    return [(int(run), "") if run.isdigit() else (-1, run) for run in re.split(r"(\d+)", path.as_posix()) if run]


# -- mapping onto the engine -------------------------------------------------
def _whole(value: Any, what: str) -> int:
    """``value`` as an int chip count; PHHError if it is not a whole number >= 0."""
    if isinstance(value, bool) or not isinstance(value, (int, Decimal)):
        raise PHHError(f"{what} must be a number, not {value!r}")
    if value != int(value):
        raise PHHError(f"{what} = {value} is not a whole number of chips (the engines count whole chips)")
    if value < 0:
        raise PHHError(f"{what} = {value} is negative")
    return int(value)


def _positional(hand: Hand, name: str, count: int) -> list[int]:
    """A positional list field (``antes``, ``blinds_or_straddles``) as ints,
    ``count`` long; a single number means every player (pokerkit)."""
    raw = hand[name]
    values = [raw] * count if isinstance(raw, (int, Decimal)) and not isinstance(raw, bool) else raw
    if not isinstance(values, list):
        raise PHHError(f"{name} must be a list or a number, not {raw!r}")
    whole = [_whole(v, f"{name}[{i}]") for i, v in enumerate(values)]
    if len(whole) > count:
        if any(whole[count:]):
            raise PHHError(f"{name} has {len(whole)} entries for {count} players")
        whole = whole[:count]
    return whole + [0] * (count - len(whole))


def check_fields(hand: Hand) -> str:
    """Check ``hand`` has a supported variant and its required fields; returns
    the variant code or raises :class:`PHHError`."""
    variant = hand.get("variant")
    if variant not in REQUIRED:
        raise PHHError(f"variant {variant!r} is not supported (only FT and NT: fixed- and no-limit Texas Hold'em)")
    missing = [name for name in REQUIRED[variant] if name not in hand]
    if missing:
        raise PHHError(f"missing required field(s) {', '.join(missing)} for variant {variant}")
    if not isinstance(hand["actions"], list):
        raise PHHError("actions must be a list of strings")
    if not isinstance(hand["starting_stacks"], list) or not 2 <= len(hand["starting_stacks"]) <= 9:
        raise PHHError("starting_stacks must list 2 to 9 players")
    return variant


def seat_map(hand: Hand) -> list[int]:
    """The seat of each PHH player (index 0 = p1): ``_cardhall_seats`` when the
    hand has it (a list, or a map with string indexes), else seats 1..n."""
    count = len(hand["starting_stacks"])
    raw = hand.get("_cardhall_seats")
    if raw is None:
        return list(range(1, count + 1))
    if isinstance(raw, Mapping):
        try:
            raw = [raw[str(i)] for i in range(count)]
        except KeyError as exc:
            raise PHHError(f"_cardhall_seats lacks player index {exc}") from None
    if not isinstance(raw, list) or len(raw) != count or len(set(raw)) != count:
        raise PHHError(f"_cardhall_seats must give {count} distinct seats")
    return [_whole(s, "_cardhall_seats") for s in raw]


def engine_setup(hand: Hand) -> tuple[str, list[int], dict[str, Any]]:
    """``(game, seats, options)`` to create an engine that plays ``hand``.

    The mapping (the Hold'em contract): p1..pn are seats 1..n
    (or ``_cardhall_seats``) and the button is pn's seat (a dead
    ``_cardhall_button`` deals and blinds the same way);
    ``blinds_or_straddles[0]`` / ``[1]`` are the small and big blind; the
    ante every player pays is ``ante`` and what index 1 (the big blind) pays
    on top is ``big_blind_ante``; ``min_bet`` (NT) or ``small_bet``/``big_bet`` (FT);
    ``starting_stacks`` per seat; ``profile`` ``"phh"`` with ``ante_trimming``
    from ``ante_trimming_status``; no blind levels. ``_cardhall_options``
    adds the options the standard fields do not decide (``profile``, ``cap``,
    ...). Raises :class:`PHHError` for what the engines cannot play:
    straddles (a blind or straddle past index 1), other uneven antes,
    fractional chips, other variants. A lone blind on p1 (``[bb, 0, ...]``,
    3+ players) is a dead small blind: option ``dead_small_blind``.
    """
    variant = check_fields(hand)
    count = len(hand["starting_stacks"])
    stacks = [_whole(v, f"starting_stacks[{i}]") for i, v in enumerate(hand["starting_stacks"])]
    blinds = _positional(hand, "blinds_or_straddles", count)
    if any(blinds[2:]):
        raise PHHError(
            f"straddles are not supported: blinds_or_straddles = {blinds} posts past the big blind"
        )
    # a lone blind on p1: the small blind is dead (FL-1) and p1 posts the big blind
    dead_small_blind = blinds[1] == 0 and blinds[0] > 0
    if dead_small_blind and count < 3:
        raise PHHError(f"blinds_or_straddles = {blinds}: heads-up both blinds are posted (FL-1)")
    big_index = 0 if dead_small_blind else 1
    antes = _positional(hand, "antes", count)
    others = {a for i, a in enumerate(antes) if i != big_index}
    ante = min(others) if others else 0
    if len(others) > 1 or antes[big_index] < ante:
        raise PHHError(
            f"antes = {antes} are not supported: only an ante for every player, "
            "plus or instead a big blind ante"
        )
    big_blind_ante = antes[big_index] - ante
    seats = seat_map(hand)
    button = seats[-1]  # pn; with a dead button the same deal, blinds and order
    options: dict[str, Any] = {
        "starting_stacks": [stacks[seats.index(s)] for s in sorted(seats)],
        "small_blind": 0 if dead_small_blind else blinds[0],
        "big_blind": blinds[big_index],
        "ante": ante,
        "big_blind_ante": big_blind_ante,
        "button": button,
        "profile": "phh",
        "ante_trimming": bool(hand.get("ante_trimming_status", False)),
    }
    if dead_small_blind:
        options["dead_small_blind"] = True
    if variant == "FT":
        options["small_bet"] = _whole(hand["small_bet"], "small_bet")
        options["big_bet"] = _whole(hand["big_bet"], "big_bet")
    else:
        options["min_bet"] = _whole(hand["min_bet"], "min_bet")
    options["blind_levels"] = None
    extra = hand.get("_cardhall_options")
    if extra is not None:
        if not isinstance(extra, Mapping):
            raise PHHError("_cardhall_options must be a table")
        options.update({k: v for k, v in extra.items() if k not in STANDARD_OPTIONS})
        if options.get("profile") != "phh":
            options.pop("ante_trimming")
    game = hand.get("_cardhall_game", VARIANTS[variant])
    if game != VARIANTS[variant]:
        raise PHHError(f"_cardhall_game {game!r} does not match variant {variant}")
    return game, sorted(seats), options


def standard_fields(game: str, options: Mapping[str, Any], count: int) -> Hand:
    """The standard PHH fields (no actions) of a hand of ``game`` for ``count``
    players under ``options`` (the inverse of :func:`engine_setup` for a
    table of seats 1..count with the button on seat ``count``): variant,
    positional antes and blinds, stakes, starting stacks p1..pn,
    ``ante_trimming_status``."""
    stacks = options["starting_stacks"]
    stacks = [stacks] * count if isinstance(stacks, int) else list(stacks)
    antes = [options.get("ante", 0)] * count
    antes[1] += options.get("big_blind_ante", 0)
    fields: Hand = {
        "variant": GAME_VARIANTS[game],
        "ante_trimming_status": bool(options.get("ante_trimming", False)),
        "antes": antes,
        "blinds_or_straddles": [options["small_blind"], options["big_blind"]] + [0] * (count - 2),
    }
    if game == "fixed_limit_holdem":
        fields["small_bet"] = options["small_bet"]
        fields["big_bet"] = options["big_bet"]
    else:
        fields["min_bet"] = options.get("min_bet") or options["big_blind"]
    fields["starting_stacks"] = stacks
    return fields


def deck_order(hand: Hand, actions: list[Action] | None = None) -> list[str]:
    """The 52-card order that makes an engine deal ``hand``'s cards.

    Per the Hold'em dealing contract: hole cards one at a time clockwise from
    p1, two rounds (so ``order[k * n + i]`` is card ``k`` of player ``i + 1``),
    then for each board dealing a burn card and the cards dealt. The burn
    cards are the hand's ``_cardhall_burns`` when it has them (our own
    histories); unknown cards (``??``, and burns not recorded) and the rest
    of the deck are filled with the cards no action names, in canonical deck
    order; hole cards dealt unknown and shown later (``p2 sm AhKd``) are the
    shown ones. Raises :class:`PHHError` when a card is dealt twice, a
    player is dealt other than two cards or ``_cardhall_burns`` is not a list
    of cards.
    """
    count = len(hand["starting_stacks"])
    holes: list[list[str] | None] = [None] * count
    board_runs: list[list[str]] = []
    shown: dict[int, list[str]] = {}
    for action in actions if actions is not None else [parse_action(text) for text in hand["actions"]]:
        text = action.text
        if action.op == "dh":
            index = int(action.actor) - 1
            if index >= count:
                raise PHHError(f"action {text!r}: there are only {count} players")
            if holes[index] is not None:
                raise PHHError(f"action {text!r}: p{index + 1} is dealt hole cards twice")
            if len(action.cards or ()) != 2:
                raise PHHError(f"action {text!r}: Texas Hold'em deals two hole cards")
            holes[index] = action.cards
        elif action.op == "db":
            board_runs.append(action.cards or [])
        elif action.op == "sm" and action.cards and isinstance(action.actor, int) and action.actor <= count:
            shown[action.actor - 1] = action.cards
    for index, cards in shown.items():  # cards dealt face down and shown later
        dealt = holes[index]
        if len(cards) == 2 and (dealt is None or dealt == ["??", "??"]):
            holes[index] = cards
    burns = hand.get("_cardhall_burns", [])
    if not isinstance(burns, list) or not all(isinstance(c, str) for c in burns):
        raise PHHError("_cardhall_burns: not a list of cards")
    try:
        burns = [validate(c) for c in burns]
    except CardError as exc:
        raise PHHError(f"_cardhall_burns: {exc}") from None
    slots: list[str] = []
    for k in range(2):
        slots.extend(h[k] if h is not None else "??" for h in holes)
    for i, run in enumerate(board_runs):
        slots.append(burns[i] if i < len(burns) else "??")  # the burn card (FL-5)
        slots.extend(run)
    known = [c for c in slots if c != "??"]
    known_set = set(known)
    twice = sorted(card for card, times in Counter(known).items() if times > 1) if len(known_set) < len(known) else []
    if twice:
        raise PHHError(f"card(s) {', '.join(twice)} dealt more than once")
    if len(slots) > 52:
        raise PHHError("more cards dealt than a deck holds")
    unused = iter([c for c in _DECK if c not in known_set])
    order = [c if c != "??" else next(unused) for c in slots]
    order.extend(unused)
    return order


def burned_cards(deck: list[str], players: int, board: int) -> list[str]:
    """The cards burned in a Hold'em hand dealt from ``deck`` (index 0 the top)
    to ``players`` players whose board reached ``board`` cards (0, 3, 4 or 5):
    ``deck[2n]`` before the flop, ``deck[2n + 4]`` before the turn,
    ``deck[2n + 6]`` before the river (FL-5; SPEC "Randomness"), one per
    street dealt. Raises ValueError for another board size.

    >>> burned_cards(standard_deck(), 2, 4)
    ['6c', 'Tc']
    """
    streets = {0: 0, 3: 1, 4: 2, 5: 3}
    if board not in streets:
        raise ValueError(f"a Hold'em board has 0, 3, 4 or 5 cards, not {board}")
    first = 2 * players
    return [deck[first + k] for k in (0, 4, 6)[: streets[board]]]


# -- writing -----------------------------------------------------------------
def _plain(value: Any) -> Any:
    """``value`` with tuples as lists and None-valued map entries dropped (TOML has no null)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def dumps(hand: Mapping[str, Any]) -> str:
    """PHH text for one hand (TOML through ``tomli_w``): the fields in the
    given order, None values left out (TOML has no null), nested maps such as
    ``_cardhall_options`` as tables. ``loads(dumps(h))`` gives ``h`` back
    (less its None entries)."""
    import tomli_w  # only writers need it

    return tomli_w.dumps(_plain(hand))


def dumps_section(index: int, hand: Mapping[str, Any]) -> str:
    """The ``.phhs`` text of one hand as table ``[index]``; the sections of
    hands 1..n joined with ``"\n"`` are exactly :func:`dumps_all` of them (a
    writer may so send a long history a few hands at a time)."""
    import tomli_w

    return tomli_w.dumps({str(index): _plain(hand)})


def dumps_all(hands: Iterable[Mapping[str, Any]]) -> str:
    """``.phhs`` text: the hands as tables ``[1]``, ``[2]``, ... (as pokerkit writes them)."""
    return "\n".join(dumps_section(i, h) for i, h in enumerate(hands, 1))


def player_label(index: int) -> str:
    """PHH label of the player at 0-based ``index``: ``player_label(0) == "p1"``."""
    return f"p{index + 1}"

