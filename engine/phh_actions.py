"""PHH actions: the parsed form of one action string and its parser.

``parse_action("p2 cbr 60")`` gives an :class:`Action`. The forms a hand
history mostly holds (``d dh p1 AhKd``, ``d db Jc3d5c``, ``p1 f``, ``p1 cc``,
``p2 cbr 60``, ``p1 sm AhKd``, ``p1 sm``) are read with plain string
operations and card runs parsed once; every other text goes through the full
parser, which gives the same result or the :class:`PHHError`
(``cardhall.engine.phh``'s error type, defined here for it).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from cardhall.engine.cards import CardError, parse_cards


class PHHError(ValueError):
    """A hand history that is malformed, or uses something the engines do not
    support (a variant other than FT/NT, straddles, uneven antes)."""


@dataclass(frozen=True, slots=True)
class Action:
    """One parsed PHH action.

    ``actor``: ``"d"`` for the dealer or the player number (1-based, p1 = 1).
    ``op``: ``dh``, ``db``, ``f``, ``cc``, ``cbr`` or ``sm``. ``cards``: for
    ``dh``/``db``/``sm`` the cards (``"??"`` for an unknown card; None for a
    muck). ``amount``: for ``cbr`` the bet or raise-to total (int, or Decimal
    when the text is not whole). ``text``: the original string.
    """

    actor: str | int
    op: str
    cards: list[str] | None
    amount: int | Decimal | None
    text: str


def parse_amount(text: str) -> int | Decimal:
    """An amount as pokerkit reads it: ``int`` when whole, else Decimal
    (commas ignored); raises PHHError when not a number."""
    raw = text.replace(",", "")
    try:
        return int(raw)
    except ValueError:
        pass
    try:
        return Decimal(raw)
    except ArithmeticError:
        raise PHHError(f"not an amount: {text!r}") from None


#: card runs parsed so far (``"AhKd"`` -> ``("Ah", "Kd")``): the same few recur hand after hand
_CARD_RUNS: dict[str, tuple[str, ...]] = {}


def _card_run(word: str) -> list[str] | None:
    """``parse_cards(word)`` for a run of well-formed cards without spaces, or None (let the full parser decide)."""
    run = _CARD_RUNS.get(word)
    if run is None:
        if len(word) % 2 or " " in word:
            return None
        try:
            run = tuple(parse_cards(word))
        except CardError:
            return None
        if len(_CARD_RUNS) > 8192:
            _CARD_RUNS.clear()
        _CARD_RUNS[word] = run
    return list(run)


def _player_number(word: str) -> int | None:
    """The number of player label ``word`` (``"p3"`` -> 3), or None."""
    digits = word[1:]
    if word[:1] == "p" and digits.isascii() and digits.isdigit():
        number = int(digits)
        if number >= 1:
            return number
    return None


def parse_action(text: str) -> Action:
    """Parse one action string; raises :class:`PHHError` on a malformed one
    or an operation outside FT/NT (``sd`` draws, ``pb`` bring-ins)."""
    if type(text) is str and "#" not in text:
        # the forms our writer and most files use, read with plain string operations
        words = text.split()
        size = len(words)
        if size == 2:
            op = words[1]
            if op == "f" or op == "cc" or op == "sm":
                who = _player_number(words[0])
                if who is not None:
                    return Action(who, op, None, None, text)
        elif size == 3:
            first, op, last = words
            if op == "cbr":
                who = _player_number(first)
                if who is not None and last.isascii() and last.isdigit():
                    return Action(who, "cbr", None, int(last), text)
            elif op == "db" and first == "d":
                run = _card_run(last)
                if run is not None:
                    return Action("d", "db", run, None, text)
            elif op == "sm" and last != "-":
                who = _player_number(first)
                run = _card_run(last)
                if who is not None and run is not None:
                    return Action(who, "sm", run, None, text)
        elif size == 4 and words[0] == "d" and words[1] == "dh":
            who = _player_number(words[2])
            run = _card_run(words[3])
            if who is not None and run is not None:
                return Action(who, "dh", run, None, text)
    return _parse_action(text)


def _parse_action(text: str) -> Action:
    """:func:`parse_action`, every form and every error."""
    if not isinstance(text, str):
        raise PHHError(f"an action must be a string, not {text!r}")
    words = text.split("#", 1)[0].split()

    def player(word: str) -> int:
        if len(word) < 2 or word[0] != "p" or not word[1:].isdigit() or int(word[1:]) < 1:
            raise PHHError(f"not a player label {word!r} in action {text!r}")
        return int(word[1:])

    def cards(word: str) -> list[str]:
        try:
            return parse_cards(word)
        except CardError as exc:
            raise PHHError(f"bad cards in action {text!r}: {exc}") from None

    match words:
        case ["d", "dh", who, dealt]:
            return Action(player(who), "dh", cards(dealt), None, text)
        case ["d", "db", dealt]:
            return Action("d", "db", cards(dealt), None, text)
        case [who, "f"]:
            return Action(player(who), "f", None, None, text)
        case [who, "cc"]:
            return Action(player(who), "cc", None, None, text)
        case [who, "cbr", amount]:
            return Action(player(who), "cbr", None, parse_amount(amount), text)
        case [who, "sm"] | [who, "sm", "-"]:
            return Action(player(who), "sm", None, None, text)
        case [who, "sm", shown]:
            return Action(player(who), "sm", cards(shown), None, text)
        case [who, ("sd" | "pb"), *_] if who != "d":
            raise PHHError(f"action {text!r}: {words[1]!r} is not part of Texas Hold'em")
        case _:
            raise PHHError(f"malformed action {text!r}")
