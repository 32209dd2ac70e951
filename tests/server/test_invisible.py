"""Invisible characters in names, chat and text options (server/names.py rule 2,
engine/options.py :func:`~cardhall.engine.options.invisible_character`).

Every code point of Unicode's ``Default_Ignorable_Code_Point`` set (read from
the ``regex`` package, as the server reads it), put between two letters, is
refused as a name, as chat text and as a text option, with the message naming
it. The emoji sequences people type keep their invisible parts (UTS #51: ZWJ
sequences, variation selectors 15 and 16 after an emoji, keycaps, subdivision
flags); the same characters anywhere else are refused. And through a real
server: ``hello`` and ``chat`` carrying one are answered ``bad_request`` with
the request's ``re``.
"""

from __future__ import annotations

import unicodedata

import pytest
import regex

from cardhall.clients.client import Client, ServerError
from cardhall.engine.options import Option, OptionError
from cardhall.protocol.errors import ProtocolError
from cardhall.server.chat import checked_text
from cardhall.server.names import checked_name, visible
from tests.server.conftest import LiveServer

#: every code point of Default_Ignorable_Code_Point, in the Unicode version of the installed regex
DEFAULT_IGNORABLE = [cp for cp in range(0x110000) if regex.match(r"\p{Default_Ignorable_Code_Point}", chr(cp))]
#: a text option (NL-6's ``item_stakes`` is one)
TEXT_OPTION = Option("item_stakes", None, "text", "free text shown to everyone", max=200, nullable=True)

#: the Scotland flag: U+1F3F4 WAVING BLACK FLAG, the tags of "gbsct", U+E007F CANCEL TAG
SCOTLAND = "\U0001f3f4" + "".join(chr(0xE0000 + ord(c)) for c in "gbsct") + "\U000e007f"
#: emoji sequences whose invisible characters are kept: (what, text)
EMOJI = [
    ("ZWJ sequence", "👩\u200d💻"),
    ("ZWJ after a skin tone", "🧑🏽\u200d💻"),
    ("ZWJ after VS16", "🏳\ufe0f\u200d🌈"),
    ("VS16 after an emoji", "❤\ufe0f"),
    ("VS15 after an emoji", "☺\ufe0e"),
    ("VS16 after a symbol with an emoji form", "©\ufe0f"),
    ("keycap", "1\ufe0f\u20e3"),
    ("subdivision flag", SCOTLAND),
    ("subdivision flags side by side", SCOTLAND + "\U0001f3f4" + "".join(chr(0xE0000 + ord(c)) for c in "gbeng")
     + "\U000e007f"),
]
#: invisible characters outside the sequences they belong to: (what, text, the code point the refusal names)
MISUSED = [
    ("VS16 after a plain letter", "ab\ufe0f", "U+FE0F (VARIATION SELECTOR-16)"),
    ("VS15 after a plain letter", "a\ufe0eb", "U+FE0E (VARIATION SELECTOR-15)"),
    ("VS16 after a digit, no keycap", "bob1\ufe0f", "U+FE0F"),
    ("VS16 after a skin tone", "👍🏽\ufe0f", "U+FE0F"),
    ("VS16 twice", "❤\ufe0f\ufe0f", "U+FE0F"),
    ("a lone tag character", "a\U000e0067b", "U+E0067 (TAG LATIN SMALL LETTER G)"),
    ("tags after another emoji", "😀" + SCOTLAND[1:], "U+E0067"),
    ("tags after a letter", "a" + SCOTLAND[1:], "U+E0067"),
    ("tags without CANCEL TAG", SCOTLAND[:-1] + "x", "U+E0067"),
    ("CANCEL TAG alone after the flag", "\U0001f3f4\U000e007f", "U+E007F (CANCEL TAG)"),
    ("tags spelling more than a subdivision", "\U0001f3f4" + "".join(chr(0xE0000 + ord(c)) for c in "gbscotland")
     + "\U000e007f", "U+E0067"),
    ("ZWJ between letters", "a\u200db", "U+200D (ZERO WIDTH JOINER)"),
    ("ZWJ after an emoji, before a letter", "👩\u200db", "U+200D"),
    ("ZWJ at the end", "👩\u200d", "U+200D"),
    ("ZWNJ between emoji", "👩\u200c💻", "U+200C (ZERO WIDTH NON-JOINER)"),
]


def _refusal(check, text: str) -> str | None:
    """The message ``check`` refuses ``text`` with (``bad_request``), or None when it accepts it."""
    try:
        check(text)
    except ProtocolError as err:
        assert err.code == "bad_request", err
        return err.message
    return None


def _option_refuses(text: str) -> bool:
    try:
        TEXT_OPTION.check(text)
    except OptionError:
        return True
    return False


def test_the_set_is_the_whole_property():
    # the property as Unicode 15.0 lists it (DerivedCoreProperties.txt) is all there, and no more than
    # the reserved planes' worth of code points
    for cp in (0x00AD, 0x034F, 0x061C, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180B, 0x180E, 0x180F, 0x200B, 0x200F,
               0x202A, 0x2060, 0x2065, 0x206F, 0x3164, 0xFE00, 0xFE0F, 0xFEFF, 0xFFA0, 0xFFF0, 0x1BCA0, 0x1D173,
               0xE0000, 0xE0001, 0xE0020, 0xE007F, 0xE0100, 0xE01EF, 0xE0FFF):
        assert cp in DEFAULT_IGNORABLE, hex(cp)
    assert 4000 < len(DEFAULT_IGNORABLE) < 4300


@pytest.mark.parametrize(("what", "check"), [("name", checked_name), ("chat", checked_text)])
def test_every_default_ignorable_code_point_between_letters_is_refused(what, check):
    taken, unclear = [], []
    for cp in DEFAULT_IGNORABLE:
        message = _refusal(check, f"a{chr(cp)}b")
        if message is None:
            taken.append(f"U+{cp:04X}")
        elif f"U+{cp:04X} (" not in message or "invisible" not in message:
            unclear.append(message)
    assert not taken, f"{what} took {len(taken)} default-ignorable code points: {taken[:20]}"
    assert not unclear, f"{what} refusals that do not name the code point: {unclear[:5]}"


def test_every_default_ignorable_code_point_is_refused_in_a_text_option():
    taken = [f"U+{cp:04X}" for cp in DEFAULT_IGNORABLE if not _option_refuses(f"a{chr(cp)}b")]
    assert not taken, f"the text option took {len(taken)} default-ignorable code points: {taken[:20]}"


@pytest.mark.parametrize(("text", "said"), [
    ("bob\u1160", "U+1160 (HANGUL JUNGSEONG FILLER)"),
    ("a\u17b4b", "U+17B4 (KHMER VOWEL INHERENT AQ)"),
    ("\u3164", "U+3164 (HANGUL FILLER)"),
    ("a\u2065b", "U+2065 ("),  # unassigned, default-ignorable all the same
])
def test_the_reported_ones_are_refused_with_their_name(text, said):
    for check in (checked_name, checked_text):
        message = _refusal(check, text)
        assert message is not None and said in message, (check, message)


@pytest.mark.parametrize(("what", "text"), EMOJI)
def test_emoji_sequences_keep_their_invisible_parts(what, text):
    assert checked_name(f"ann {text}") == f"ann {text}"
    assert checked_text(f"gg {text} wp") == f"gg {text} wp"
    assert TEXT_OPTION.check(text) == text


@pytest.mark.parametrize(("what", "text", "said"), MISUSED)
def test_the_same_characters_outside_their_sequences_are_refused(what, text, said):
    for check in (checked_name, checked_text):
        message = _refusal(check, text)
        assert message is not None and said in message, (what, check.__name__, message)
    assert _option_refuses(text), what


def test_the_blank_braille_pattern_is_still_blank():
    # not default-ignorable, a symbol that draws nothing: rule 5 refuses it
    assert not visible("\u2800\u2800")
    message = _refusal(checked_name, "\u2800")
    assert message is not None and "blank" in message


def test_regex_knows_every_character_unicodedata_knows_and_refuses_the_same_categories():
    """Rule 2 reads the Unicode properties from ``regex``, normalisation and
    names come from Python's ``unicodedata``: ``regex``'s Unicode version is
    at least ``unicodedata.unidata_version``, and the two agree on which
    characters are in the refused categories."""
    refused = regex.compile(r"[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Co}]")
    unknown, disagree = [], []
    for cp in range(0x110000):
        ch = chr(cp)
        category = unicodedata.category(ch)
        if category == "Cn":
            continue
        if regex.match(r"\p{Cn}", ch):
            unknown.append(f"U+{cp:04X}")
        elif (category in ("Cc", "Cf", "Zl", "Zp", "Cs", "Co")) != bool(refused.match(ch)):
            disagree.append(f"U+{cp:04X} {category}")
    assert not unknown, f"regex does not know characters of Unicode {unicodedata.unidata_version}: {unknown[:10]}"
    assert not disagree, disagree[:10]


async def test_a_real_server_refuses_them_in_hello_and_chat_with_the_requests_re(live: LiveServer):
    async with Client(live.url, codec="json", record=True) as c:
        with pytest.raises(ServerError) as err:
            await c.request({"type": "hello", "name": "bob\u1160"})
        frame = err.value.frame
        assert frame["code"] == "bad_request" and frame["re"] == c.sent[-1]["id"], frame
        assert "U+1160 (HANGUL JUNGSEONG FILLER)" in frame["message"], frame
        assert (await c.hello("bob"))["name"] == "bob"  # the connection goes on
        table = await c.create_table("loco_poker", seats=3, bots=1, options={"pause": 0, "bot_think": 0})
        await c.join(table, role="player", seat=1)
        with pytest.raises(ServerError) as err:
            await c.chat(table, "a\u17b4b")
        frame = err.value.frame
        assert frame["code"] == "bad_request" and frame["re"] == c.sent[-1]["id"], frame
        assert "U+17B4 (KHMER VOWEL INHERENT AQ)" in frame["message"], frame
        assert (await c.chat(table, "👩\u200d💻 " + SCOTLAND))["type"] == "ok"
