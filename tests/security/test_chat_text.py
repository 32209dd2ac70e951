"""Chat text is data, never markup or control, and chat carries nothing of the game (SPEC "Chat").

What ``chat`` refuses and keeps (server/chat.py, the rules names share), and
through a real server during a running match: a ``chat`` event has exactly
its documented fields, holds the text as sent, and is the same event for a
seat and a spectator (nothing private in it, nothing added by the server)."""

from __future__ import annotations

import pytest

from cardhall.protocol.errors import ProtocolError
from cardhall.server.chat import checked_text

#: (text, a part of the refusal's message): one of each class refused
REFUSED = [
    ("", "1 to 200"),
    ("x" * 201, "at most 200"),
    ("😀" * 151, "600 bytes"),
    ("hi\x00", "U+0000"),
    ("a\nb", "U+000A"),
    ("\x1b[2Jclear", "U+001B"),
    ("abc\u202egnp.exe", "U+202E (RIGHT-TO-LEFT OVERRIDE)"),
    ("x\u2066y", "U+2066"),
    ("\u200b", "U+200B"),
    ("\ufeffhi", "U+FEFF"),
    ("   ", "blank"),
    ("\u2800", "blank"),
    ("\u3164", "U+3164 (HANGUL FILLER)"),
    ("a\u17b4b", "U+17B4"),
    ("e" + "\u0301" * 6, "combining marks"),
]
#: (sent, kept): markup and HTML are kept as the characters they are
ACCEPTED = [
    ("<script>alert(1)</script>", "<script>alert(1)</script>"),
    ("<img src=x onerror=alert(1)>", "<img src=x onerror=alert(1)>"),
    ("[b]bold[/b] [@click=app.quit]q[/]", "[b]bold[/b] [@click=app.quit]q[/]"),
    ("&amp; &lt;", "&amp; &lt;"),
    ("Zoe\u0308  wins\u00a0!", "Zoë wins !"),
    ("👩\u200d💻 gg", "👩\u200d💻 gg"),
]


@pytest.mark.parametrize(("text", "said"), REFUSED)
def test_refused(text: str, said: str) -> None:
    with pytest.raises(ProtocolError) as err:
        checked_text(text)
    assert err.value.code == "bad_request" and said in err.value.message, err.value.message


@pytest.mark.parametrize(("sent", "kept"), ACCEPTED)
def test_kept_literally(sent: str, kept: str) -> None:
    assert checked_text(sent) == kept


async def test_chat_events_carry_nothing_but_the_message_during_a_match(live) -> None:
    ann = await live.client("ann")
    eve = await live.client("eve", codec="json")
    table = await ann.create_table("loco_poker", seats=2, bots=1, options={"pause": 0, "bot_think": 0.2})
    await ann.join(table, role="player", seat=1)
    await eve.join(table, role="spectator")
    texts = ["<b>nh</b>", "[red]gl[/]"]
    await ann.chat(table, texts[0])
    await eve.chat(table, texts[1])
    seen = []
    for viewer in (ann, eve):
        got = []
        while len(got) < 2:
            f = await viewer.next_event(table, where=lambda f: f["event"]["type"] == "chat")
            assert set(f) <= {"type", "table", "seq", "event", "ts"}, f  # no turn, no legal
            got.append((f["seq"], f["event"]))
        seen.append(got)
    assert seen[0] == seen[1]  # a seat and a spectator see the very same events
    assert [e for _, e in seen[0]] == [
        {"type": "chat", "seat": 1, "name": "ann", "text": texts[0], "from": ann.player},
        {"type": "chat", "seat": None, "name": "eve", "text": texts[1], "from": eve.player},
    ]
    machine = live.hall.tables[table].machine
    assert machine.engine is not None  # the match was running
