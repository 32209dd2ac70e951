"""``create_table`` inputs a table would show or allocate from: free text in
options is data (no control, format or invisible characters: NL-6's
``item_stakes`` is shown to everyone), and ``bots`` is bounded before
anything is built from it."""

from __future__ import annotations

import pytest

from cardhall.clients.client import ServerError

TEXTS = ["\x1b[2Jgone", "a\x00b", "\u202eevil", "zero\u200bwidth", "line\u2028break", "a\u17b4b"]


async def test_option_text_with_control_or_invisible_characters_is_refused(live):
    ann = await live.client("ann")
    for text in TEXTS:
        with pytest.raises(ServerError) as err:
            await ann.create_table("no_limit_holdem", seats=2, bots=1, options={"item_stakes": text})
        assert err.value.code == "bad_options" and err.value.frame.get("option") == "item_stakes", text
    table = await ann.create_table("no_limit_holdem", seats=2, bots=1, options={"item_stakes": "a signed ball ⚽"})
    assert table.startswith("t_")
    await ann.close()


async def test_a_bot_count_out_of_range_is_refused(live):
    ann = await live.client("ann")
    for bots in (-1, 4, 10**12, 2**63):
        with pytest.raises(ServerError) as err:
            await ann.create_table("loco_poker", seats=3, bots=bots)
        assert err.value.code == "bad_request", bots
    assert (await ann.ping())["type"] == "pong"
    await ann.close()
