"""Player names: text shown to everyone at a table, so data, never markup or control.

:func:`checked_name` turns the ``name`` of a ``hello`` into the name the
server keeps, or refuses it with ProtocolError ``bad_request`` and the reason
(protocol/SPEC.md "Fields and types", "Limits"). The rules, in order:

1. a string of at most :data:`MAX_CHARS` characters (Unicode code points) as sent;
2. no control or invisible character anywhere: categories ``Cc`` (NUL,
   newlines, tabs, ESC of ANSI sequences), ``Cf`` (bidi overrides and
   isolates, zero-width spaces and joiners, the BOM, soft hyphens), ``Zl``/``Zp``
   (line and paragraph separators), ``Cs`` (surrogates), ``Co`` (private use),
   and every code point of Unicode's ``Default_Ignorable_Code_Point`` (the
   Hangul fillers, the Khmer inherent vowels, variation selectors, tag
   characters, ...), read from the ``regex`` package (Unicode 18.0.0 for regex
   2026.11.19; Python's ``unicodedata`` has no such property); kept where they
   belong to the emoji sequences people type (UTS #51): U+200D ZERO WIDTH
   JOINER between two emoji, U+FE0E/U+FE0F after an emoji or in a keycap, the
   tags of a subdivision flag after U+1F3F4 (Scotland's, England's, Wales').
   The rule is the engines' text options' too
   (:func:`cardhall.engine.options.invisible_character`);
3. normalised: Unicode NFC, surrounding white space stripped, every run of
   white space inside turned into one ASCII space;
4. after that at most :data:`MAX_CHARS` characters and :data:`MAX_BYTES` bytes
   of UTF-8, and no character carrying more than :data:`MAX_MARKS` combining marks;
5. not blank: at least one letter, digit, punctuation mark or symbol (of
   ``regex``'s Unicode version) that draws something: neither
   default-ignorable (the Hangul fillers are letters) nor
   :data:`BLANK_LOOKING`;
6. not a server bot's name: server bots are named ``bot N`` (N its seat,
   :mod:`cardhall.server.table.machine`), so a name is refused when its
   letters and digits alone, after NFKC and case folding, with the lookalikes
   of :data:`LOOKALIKES` read as Latin letters, are ``bot`` followed by one or
   more digits (``Bot 2``, ``b0t-2``, ``ＢＯＴ２``, ``bot²``, Cyrillic ``ВОТ 3``).
   ``bot`` without a number is a fine name (the ``cardhall bot`` default).

>>> checked_name("  Zoë   the\u00a0great ")
'Zoë the great'
>>> checked_name("[/]")
'[/]'
>>> checked_name("bot 2")
Traceback (most recent call last):
...
cardhall.protocol.errors.ProtocolError: name 'bot 2' reads as a server bot's name ('bot' and a number)
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

import regex

from cardhall.engine.options import invisible_character
from cardhall.protocol.errors import ProtocolError

#: longest name, in characters (Unicode code points), as sent and as kept
MAX_CHARS = 40
#: longest name in UTF-8 bytes: any 40 characters of the Basic Multilingual Plane fit
MAX_BYTES = 120
#: most combining marks on one character (NFC leaves at most two on real text)
MAX_MARKS = 4
#: the name of a ``hello`` without one
DEFAULT_NAME = "player"

#: symbols that draw nothing and are not default-ignorable (rule 2 refuses those): the blank Braille pattern
BLANK_LOOKING = frozenset("\u2800")
#: a character that draws something (rule 5)
_DRAWS = regex.compile(r"[[\p{L}\p{N}\p{P}\p{S}]--[\p{Default_Ignorable_Code_Point}"
                       + "".join(sorted(BLANK_LOOKING)) + "]]", regex.V1)
#: Cyrillic and Greek letters (after case folding) read as the Latin letters of "bot", and zero as o
LOOKALIKES = str.maketrans({"в": "b", "β": "b", "ь": "b", "о": "o", "ο": "o", "0": "o", "т": "t", "τ": "t"})
_BOT = re.compile(r"(.+?)([0-9]+)")


def checked_name(value: Any) -> str:
    """The name to keep for ``hello.name`` ``value`` (a str; see the module
    docstring for the rules, which it applies in order). Raises ProtocolError
    ``bad_request`` naming the rule broken."""
    name = plain_text(value, "name", MAX_CHARS, MAX_BYTES)
    if impersonates_bot(name):
        raise ProtocolError("bad_request", f"name {name!r} reads as a server bot's name ('bot' and a number)")
    return name


def normalised(text: str) -> str:
    """``text`` in NFC, white space around it removed and each run of white
    space inside it made one ASCII space (rule 3)."""
    return " ".join(unicodedata.normalize("NFC", text).split())


def too_many_marks(text: str) -> bool:
    """True when a character of ``text`` carries more than :data:`MAX_MARKS`
    combining marks (rule 4: stacked marks draw over the lines around them)."""
    marks = 0
    for ch in text:
        marks = marks + 1 if unicodedata.category(ch).startswith("M") else 0
        if marks > MAX_MARKS:
            return True
    return False


def visible(text: str) -> bool:
    """True when ``text`` has a letter, digit, punctuation mark or symbol that
    draws something (rule 5).

    >>> visible("\u2800 ab"), visible("\u2800\u3164 ")
    (True, False)
    """
    return _DRAWS.search(text) is not None


def plain_text(value: Any, what: str, max_chars: int, max_bytes: int) -> str:
    """``value`` as text shown to a table (rules 1 to 5 of the module
    docstring, with ``max_chars`` characters and ``max_bytes`` bytes of UTF-8),
    normalised. Raises ProtocolError ``bad_request`` naming ``what`` (the
    field) and the rule broken.

    >>> plain_text("  gg   wp ", "text", 200, 600)
    'gg wp'
    """
    if not isinstance(value, str) or not value:
        raise ProtocolError("bad_request", f"{what} must be a string of 1 to {max_chars} characters")
    if len(value) > max_chars:
        raise ProtocolError("bad_request", f"{what} is {len(value)} characters; at most {max_chars}")
    bad = invisible_character(value)
    if bad is not None:
        raise ProtocolError("bad_request", f"{what} contains the control or invisible character {bad}")
    text = normalised(value)
    if len(text) > max_chars or len(text.encode()) > max_bytes:
        raise ProtocolError("bad_request", f"{what} must be at most {max_chars} characters and {max_bytes} bytes")
    if too_many_marks(text):
        raise ProtocolError("bad_request", f"{what} has more than {MAX_MARKS} combining marks on one character")
    if not visible(text):
        raise ProtocolError("bad_request", f"{what} is blank: it needs a visible letter, digit or symbol")
    return text


def impersonates_bot(name: str) -> bool:
    """True when ``name`` reads as a server bot's ``bot N`` (rule 6 of the
    module docstring: letters and digits only, NFKC, case folded, lookalikes
    read as Latin).

    >>> [impersonates_bot(n) for n in ("Bot 2", "b0t_12", "ВОТ 3", "bot 0", "b0t 02", "bot", "robot 2", "Abbott")]
    [True, True, True, True, True, False, False, False]
    """
    folded = unicodedata.normalize("NFKC", name).casefold()
    key = "".join(str(unicodedata.digit(ch)) if ch.isdigit() else ch for ch in folded if ch.isalnum())
    found = _BOT.fullmatch(key)  # the lookalikes are read in the letters only: "bot 0" is bot and 0
    return found is not None and found.group(1).translate(LOOKALIKES) == "bot"
