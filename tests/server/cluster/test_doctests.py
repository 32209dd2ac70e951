"""The cluster's pure parts: their doctests (messages, key names, tokens, creation checks)."""

from __future__ import annotations

import doctest

import pytest

import cardhall.server.cluster.leases
import cardhall.server.cluster.naming
import cardhall.server.cluster.wire
import cardhall.server.creation
import cardhall.server.store.keys


@pytest.mark.parametrize("module", [cardhall.server.cluster.wire, cardhall.server.cluster.leases, cardhall.server.cluster.naming,
                                    cardhall.server.store.keys, cardhall.server.creation])
def test_doctests(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0
