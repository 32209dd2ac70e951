"""The connection gate's pure parts (``server/gate.py``) and the doctests of
the modules around it; the gate at work is in ``tests/security/test_gate.py``."""

from __future__ import annotations

import doctest

import pytest

import cardhall.clients.load.run
import cardhall.server.gate
import cardhall.server.ws_protocol
from cardhall.server.gate import Gate


@pytest.mark.parametrize("module", [cardhall.server.gate, cardhall.server.ws_protocol, cardhall.clients.load.run])
def test_doctests(module):
    assert doctest.testmod(module).failed == 0


def test_a_trusted_proxy_counts_in_the_total_only_and_the_ceilings_drop_without_an_answer():
    gate = Gate(3, 1, ("10.0.0.0/8",))
    assert [gate.admit(i, "10.1.2.3") for i in range(3)] == [None, None, None]  # the proxy: no per-address count
    assert gate.from_address("10.1.2.3") == 0 and getattr(gate.admit(3, "192.0.2.1"), "status", None) == 503
    gate.release(0)
    gate.release(3)  # a refused connection counts until it closes
    assert gate.admit(4, "192.0.2.1") is None and getattr(gate.admit(5, "192.0.2.1"), "status", None) == 403
    refusal = gate.admit(6, "192.0.2.1")  # twice the per-address limit: aborted without an answer
    assert refusal is not None and refusal.answer is False
    for key in range(7):
        gate.release(key)
    assert gate.open == 0 and gate.admitted == 0 and gate.per_address == {}
