"""Game options described as data: one :class:`Option` per name.

Each engine lists its options (``Engine.options_spec``); its
``default_options`` are derived from that list, ``Engine.resolve_options``
checks every value given against it (type, range, allowed values) and the
server's game catalogue (``GET /api/games``) describes the same list. What an
option means together with the seats or the other options (a ``button`` that
must be one of the seats, ``small_blind`` <= ``big_blind``, Alamo's jokers for
three players) stays in the engine's ``new``.

Every ``int`` and ``number`` option has both bounds (``min`` and ``max``, as
data: the catalogue and the schemas show them, ``check`` refuses what lies
outside): a table never gets a value its arithmetic or a JSON client could
not hold exactly. Chip amounts are at most :data:`MAX_CHIPS`, so every sum of
a match's chips (at most 9 seats of :data:`MAX_CHIPS`, and the rising blinds
of NL-7, which stop at twice the chips in play) stays far below 2^53.

>>> o = Option("points_to_win", 3, "int", "points that win the match", "LO-6", min=1, max=1000)
>>> o.check(5)
5
>>> o.check(0)
Traceback (most recent call last):
...
cardhall.engine.options.OptionError: points_to_win: must be an integer in [1, 1000] (LO-6)
>>> o.describe()["min"], o.describe()["rule"]
(1, 'LO-6')
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import regex

#: the kinds of value an option takes (``Option.type``)
TYPES = ("int", "number", "bool", "choice", "text", "seat")
#: the numeric kinds: an option of one of them declares ``min`` and ``max``
NUMERIC = ("int", "number")

#: the largest chip amount any option may name (stacks, blinds, antes, bets), chips
MAX_CHIPS = 1_000_000_000
#: the largest count of hands an option may name (a match's length, hands per blind level), hands
MAX_HANDS = 100_000


#: Unicode general categories no text shown to others may hold: control, format (bidi overrides,
#: zero-width), line and paragraph separators, surrogates, private use
UNPRINTABLE = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co"})
#: the emoji sequences of Unicode Technical Standard #51 whose invisible characters are kept, each
#: matched whole (the ZERO WIDTH JOINER alone, with what must surround it)
EMOJI_SEQUENCES = r"""
    \U0001F3F4 (?:[\U000E0061-\U000E007A]{2}|[\U000E0030-\U000E0039]{3})
        [\U000E0030-\U000E0039\U000E0061-\U000E007A]{1,4} \U000E007F       # subdivision flag: 1F3F4, the tags of
                                                                           # a subdivision id ("gbsct"), CANCEL TAG
  | [0-9\#*] \uFE0F \u20E3                                                 # keycap
  | (?!\p{Emoji_Component}) \p{Emoji} [\uFE0E\uFE0F]                       # text or emoji presentation
  | (?<=\p{Extended_Pictographic} \p{Grapheme_Cluster_Break=Extend}*)
        \u200D (?=\p{Extended_Pictographic})                               # ZWJ between two emoji (UAX #29 GB11)
"""
_INVISIBLE = regex.compile(
    EMOJI_SEQUENCES + "| (?P<invisible>[" + "".join(rf"\p{{{c}}}" for c in sorted(UNPRINTABLE))
    + r"\p{Default_Ignorable_Code_Point}])", regex.VERBOSE)
#: what a character without a name in Python's Unicode data is called, by its category there
_UNNAMED = {"Cc": "a control character", "Cs": "a surrogate", "Co": "a private-use character",
            "Cn": f"unassigned in Unicode {unicodedata.unidata_version}"}


def invisible_character(text: str) -> str | None:
    """The first character of ``text`` that text shown to others may not hold,
    as ``"U+001B (ESCAPE)"`` (its name, or what it is when it has none), or
    None when there is none. Refused: a character of a category of
    :data:`UNPRINTABLE` (controls, bidi overrides and isolates, zero-width
    spaces and joiners, the BOM, soft hyphens, line and paragraph separators,
    surrogates, private use) and every code point of Unicode's
    ``Default_Ignorable_Code_Point`` (UAX #44; it adds the Hangul fillers,
    U+034F COMBINING GRAPHEME JOINER, the Khmer inherent vowels, the
    variation selectors, the tag characters and the reserved ranges kept for
    more of them), but where they belong to one of the emoji sequences of
    UTS #51 people type (:data:`EMOJI_SEQUENCES`): U+200D ZERO WIDTH JOINER
    between two emoji (woman, ZWJ, laptop: a technologist), U+FE0E/U+FE0F
    after an emoji (its text or emoji form) or in a keycap (digit, U+FE0F,
    U+20E3), tag characters spelling a subdivision after U+1F3F4 WAVING
    BLACK FLAG (the flags of Scotland, England, Wales).

    The properties (categories, ``Default_Ignorable_Code_Point``, ``Emoji``,
    ``Emoji_Component``, ``Extended_Pictographic``, ``Grapheme_Cluster_Break``)
    are the ``regex`` package's, of the Unicode version its release states (it
    does not expose it: 18.0.0 for regex 2026.11.19, 14.0.0 for 2022.9.11, the
    lower bound of pyproject.toml); the names are those of Python's ``unicodedata``
    (``unicodedata.unidata_version``: 14.0.0 on Python 3.11), no newer than
    regex's (tests/server/test_invisible.py checks that regex knows every
    character it does and puts the same ones in these categories).

    >>> invisible_character("a\u202eb"), invisible_character("bob\u1160"), invisible_character("👩\u200d💻")
    ('U+202E (RIGHT-TO-LEFT OVERRIDE)', 'U+1160 (HANGUL JUNGSEONG FILLER)', None)
    """
    for found in _INVISIBLE.finditer(text):
        ch = found.group("invisible")
        if ch is not None:
            return f"U+{ord(ch):04X} ({unicodedata.name(ch, '') or _UNNAMED.get(unicodedata.category(ch), 'no name')})"
    return None


def plain_text(value: str) -> bool:
    """True when ``value`` holds no character :func:`invisible_character`
    refuses: text an option carries to every viewer (NL-6's ``item_stakes``)
    is data, never terminal escapes, bidi overrides or invisible characters,
    as names and chat are (:mod:`cardhall.server.names`).

    >>> plain_text("a signed ball ⚽"), plain_text("x\x1b[2J"), plain_text("\u202eevil"), plain_text("a\u17b4b")
    (True, False, False, False)
    """
    return invisible_character(value) is None


class OptionError(ValueError):
    """An option value the rules refuse; ``option`` names it. The message
    starts with ``"<name>:"`` (the option-error convention of ``Engine.new``)."""

    def __init__(self, option: str, message: str) -> None:
        self.option = option
        super().__init__(f"{option}: {message}")


@dataclass(frozen=True, slots=True)
class Option:
    """One option of a game (or of a table, ``cardhall.server.options``).

    ``type``: ``int`` (an integer, not a bool, in ``min``..``max``, both
    required: ValueError without them; with
    ``per_seat`` a list of such integers, one per seat in seat order, is
    accepted too), ``number`` (int or float in ``min``..``max``, both
    required), ``bool``,
    ``choice`` (one of ``choices``, compared with its type: ``2`` is not
    ``"2"``), ``text`` (a string of at most ``max`` characters) or ``seat``
    (a seat number >= 1; the engine checks it is one of the match's seats).
    ``nullable``: None is allowed (its meaning is in ``meaning``).
    ``meaning``: one line; ``rule``: the RULES.md tag it comes from, or None.
    Units (chips, cards, seconds) are in ``meaning``.
    """

    name: str
    default: Any
    type: str
    meaning: str
    rule: str | None = None
    min: float | None = None
    max: float | None = None
    choices: tuple[Any, ...] = ()
    nullable: bool = False
    per_seat: bool = False

    def __post_init__(self) -> None:
        if self.type not in TYPES:
            raise ValueError(f"option {self.name}: unknown type {self.type!r}")
        if self.type in NUMERIC and (self.min is None or self.max is None):
            raise ValueError(f"option {self.name}: a numeric option declares its min and max")

    def check(self, value: Any) -> Any:
        """``value`` when this option accepts it; raises :class:`OptionError` otherwise."""
        if value is None and self.nullable:
            return value
        if self.per_seat and isinstance(value, (list, tuple)):
            if not value or not all(self._ok(v) for v in value):
                raise self._error(" (or a list of them, one per seat)")
            return value
        if not self._ok(value):
            raise self._error("")
        return value

    def _ok(self, value: Any) -> bool:
        kind = self.type
        if kind == "bool":
            return isinstance(value, bool)
        if kind == "choice":
            return any(type(value) is type(c) and value == c for c in self.choices)
        if kind == "text":
            return isinstance(value, str) and (self.max is None or len(value) <= self.max) and plain_text(value)
        if isinstance(value, bool):
            return False
        if kind == "number":
            ok = isinstance(value, (int, float)) and value == value  # not NaN
        else:  # int, seat
            ok = isinstance(value, int)
        low = 1 if kind == "seat" else self.min
        return ok and (low is None or value >= low) and (self.max is None or value <= self.max)

    def _error(self, suffix: str) -> OptionError:
        kind = self.type
        if kind == "bool":
            what = "true or false"
        elif kind == "choice":
            what = "one of " + ", ".join(repr(c) for c in self.choices)
        elif kind == "text":
            what = ("text" + (f" of at most {self.max:g} characters" if self.max is not None else "")
                    + ", without control or invisible characters")
        elif kind == "seat":
            what = "a seat number"
        else:
            what = "an integer" if kind == "int" else "a number"
            if self.min is not None and self.max is not None:
                what += f" in [{self.min:g}, {self.max:g}]"
            elif self.min is not None:
                what += f" >= {self.min:g}"
            elif self.max is not None:
                what += f" <= {self.max:g}"
        if self.nullable:
            what += ", or null"
        rule = f" ({self.rule})" if self.rule else ""
        return OptionError(self.name, f"must be {what}{suffix}{rule}")

    def describe(self) -> dict[str, Any]:
        """The catalogue entry (``GET /api/games``): ``name``, ``type``,
        ``default``, ``nullable``, ``meaning``, and when they apply ``min``,
        ``max`` (numbers; ``max`` is the length limit of ``text``),
        ``choices``, ``per_seat``, ``rule``."""
        out: dict[str, Any] = {"name": self.name, "type": self.type, "default": self.default,
                               "nullable": self.nullable, "meaning": self.meaning}
        if self.min is not None:
            out["min"] = self.min
        if self.max is not None:
            out["max"] = self.max
        if self.choices:
            out["choices"] = list(self.choices)
        if self.per_seat:
            out["per_seat"] = True
        if self.rule:
            out["rule"] = self.rule
        return out


def json_schema(option: Option) -> dict[str, Any]:
    """The JSON Schema (2020-12) of ``option``'s values, as
    ``protocol/schemas`` spells it (``seat`` refers to ``server.json``'s); the
    schemas' ``match_options`` are built from these (a test keeps them equal).

    >>> json_schema(Option("cap", 4, "int", "bets per round", min=1, max=100))
    {'type': 'integer', 'minimum': 1, 'maximum': 100}
    """
    kind = option.type
    schema: dict[str, Any]
    if kind == "bool":
        schema = {"type": "boolean"}
    elif kind == "choice":
        schema = {"enum": list(option.choices)}
    elif kind == "text":
        schema = {"type": "string"} | ({"maxLength": int(option.max)} if option.max is not None else {})
    elif kind == "seat":
        schema = {"$ref": "server.json#/$defs/seat"}
    else:
        schema = {"type": "integer" if kind == "int" else "number"}
        if option.min is not None:
            schema["minimum"] = option.min
        if option.max is not None:
            schema["maximum"] = option.max
    if option.per_seat:
        schema = {"anyOf": [schema, {"type": "array", "items": schema, "minItems": 1}]}
    if option.nullable:
        schema = {"anyOf": [schema, {"type": "null"}]} if "anyOf" in schema or "$ref" in schema or "enum" in schema \
            else {**schema, "type": [schema["type"], "null"]}
    return schema


def options_schema(spec: Iterable[Option], description: str) -> dict[str, Any]:
    """The JSON Schema of a map holding every option of ``spec``, nothing
    else (``match_started.options``): the ``match_options`` definitions of
    ``protocol/schemas``."""
    spec = list(spec)
    return {"type": "object", "description": description,
            "properties": {o.name: json_schema(o) for o in spec},
            "required": [o.name for o in spec], "additionalProperties": False}


def defaults(spec: Iterable[Option]) -> dict[str, Any]:
    """``{name: default}`` of ``spec`` (an engine's ``default_options``)."""
    return {o.name: o.default for o in spec}


def check_all(spec: Iterable[Option], values: Mapping[str, Any]) -> None:
    """Check every value of ``values`` whose name ``spec`` lists; raises
    :class:`OptionError` at the first refused."""
    by_name = {o.name: o for o in spec}
    for name, value in values.items():
        option = by_name.get(name)
        if option is not None:
            option.check(value)
