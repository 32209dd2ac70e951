"""The fast reader of the plain TOML that ``cardhall.engine.phh.dumps`` writes.

:func:`simple_toml` reads ``tomli_w``'s layout of a PHH hand line by line
with string methods alone: bare keys, ``[table]`` headers one level deep,
integers, plain basic strings, booleans, ``[]`` or one array element per
line. It returns exactly what ``tomllib.loads`` returns for such text, and
None for anything else, so that its caller (``cardhall.engine.phh.loads``)
then runs ``tomllib``, which gives the result or the error. Nothing here is
a TOML rule of its own: text it is unsure of is always handed back.
"""

from __future__ import annotations

from typing import Any


def _key(word: str) -> bool:
    """A TOML bare key: ``[A-Za-z0-9_-]+``."""
    return word.isascii() and word.replace("_", "a").replace("-", "a").isalnum()


def _value(word: str) -> Any:
    """A scalar of :func:`simple_toml`'s subset (an integer ``-?(0|[1-9][0-9]*)``,
    a basic string without escapes or control characters, ``true``,
    ``false``), or raises LookupError."""
    first = word[:1]
    if first == '"':
        inner = word[1:-1]
        if len(word) >= 2 and word[-1] == '"' and '"' not in inner and "\\" not in inner and inner.isprintable():
            return inner
        raise LookupError(word)
    digits = word[1:] if first == "-" else word
    if digits.isascii() and digits.isdigit() and (digits[0] != "0" or len(digits) == 1):
        return int(word)
    if word == "true":
        return True
    if word == "false":
        return False
    raise LookupError(word)


def simple_toml(text: str) -> dict[str, Any] | None:
    """``tomllib.loads(text)`` for text in the subset this module reads (see
    the module docstring), else None."""
    if "\r" in text or "\t" in text:
        return None
    doc: dict[str, Any] = {}
    table = doc
    lines = text.split("\n")
    k = 0
    count = len(lines)
    try:
        while k < count:
            line = lines[k].strip(" ")
            k += 1
            if not line:
                continue
            if line[0] == "[":
                name = line[1:-1]
                if line[-1] != "]" or not _key(name) or name in doc:
                    return None
                table = doc[name] = {}
                continue
            key, sep, value = line.partition(" = ")
            if not sep or not _key(key) or key in table:
                return None
            if value == "[":
                items = []
                while True:
                    item = lines[k].strip(" ")
                    k += 1
                    if item == "]":
                        break
                    if item[-1:] != ",":
                        return None
                    items.append(_value(item[:-1]))
                table[key] = items
            elif value == "[]":
                table[key] = []
            else:
                table[key] = _value(value)
    except (LookupError, IndexError):
        return None
    return doc
