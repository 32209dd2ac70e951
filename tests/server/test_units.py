"""The small pure parts: codecs, clocks, rate limiting, options (their doctests
plus the cases that matter)."""

from __future__ import annotations

import doctest

import msgpack
import pytest

import cardhall.protocol.codec
import cardhall.protocol.errors
import cardhall.server.options
import cardhall.server.ratelimit
import cardhall.server.table.clock
from cardhall.protocol.codec import CODECS, JSON, MSGPACK, choose_subprotocol
from cardhall.protocol.errors import CODES, ProtocolError
from cardhall.server.options import split_options
from cardhall.server.table.clock import TurnClock


@pytest.mark.parametrize("module", [cardhall.protocol.codec, cardhall.protocol.errors, cardhall.server.table.clock, cardhall.server.options, cardhall.server.ratelimit])
def test_doctests(module):
    assert doctest.testmod(module).failed == 0


@pytest.mark.parametrize("name", [MSGPACK, JSON])
def test_batch_of_many_frames_decodes_in_order(name):
    codec = CODECS[name]
    for n in (0, 1, 15, 16, 300, 70_000):
        frames = [codec.encode({"type": "event", "seq": i}) for i in range(n)]
        out = codec.decode(codec.batch(frames), 1 << 30)
        assert out["type"] == "batch" and [f["seq"] for f in out["frames"]] == list(range(n))


def test_decode_limits_and_kinds():
    m = CODECS[MSGPACK]
    with pytest.raises(ProtocolError) as err:
        m.decode(msgpack.packb({"x": "y" * 100}), limit=50)
    assert err.value.code == "frame_too_large"
    with pytest.raises(ProtocolError) as err:
        m.decode(b"\x92\x01\x02")
    assert err.value.code == "malformed"


def test_subprotocol_choice():
    assert choose_subprotocol([]) == JSON
    assert choose_subprotocol(["x", MSGPACK, JSON]) == MSGPACK
    assert choose_subprotocol(["x"]) is None


def test_every_error_code_is_documented_in_the_spec():
    from pathlib import Path

    spec = (Path(cardhall.protocol.codec.__file__).parent / "SPEC.md").read_text()
    for code in CODES:
        assert f"`{code}`" in spec, code


def test_time_bank_is_used_only_after_the_action_clock_G3():
    clock = TurnClock.begin(now=0.0, action_clock=30.0, bank=60.0)
    assert clock.bank_after(29.0) == 60.0
    assert clock.bank_after(50.0) == 40.0
    assert clock.bank_after(500.0) == 0.0
    paused = clock.pause(40.0)
    assert (paused.clock, paused.bank) == (0.0, 50.0)
    assert paused.resume(100.0).deadline == 150.0


def test_table_options_are_checked():
    table, game = split_options({"pause": 0, "auto_rematch": True, "stakes": "x"})
    assert table["pause"] == 0.0 and table["auto_rematch"] is True and game == {"stakes": "x"}
    for bad in ({"pause": -1}, {"action_clock": "30"}, {"auto_rematch": 1}, {"time_bank": True}):
        with pytest.raises(ProtocolError) as err:
            split_options(bad)
        assert err.value.code == "bad_options"
