"""The toy game registered for a test, and a person's play of it through the Python client."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from cardhall.clients.client import Client, ServerError
from cardhall.engine import plugins

Frame = dict[str, Any]


@pytest.fixture
def toy() -> Iterator[plugins.GameSpec]:
    """High Card registered in this process for the test (as ``CARDHALL_GAMES=tests.toygame``
    would), then unregistered; yields its spec."""
    (spec,) = plugins.load_module("tests.toygame")
    with plugins.registered(spec):
        yield spec


async def play_matches(client: Client, table: str, seat: int, matches: int, timeout: float = 60.0) -> list[Frame]:
    """Play ``seat`` at ``table`` through ``client`` for ``matches`` matches: ``continue``
    when the table waits for it, else fold in the first hand and bet the most it may
    afterwards (so both legal actions are played, the one with a field included), asking
    for the rematch in between (G-7). Returns the ``match_ended`` events."""
    ended: list[Frame] = []
    while len(ended) < matches:
        frame = await client.next_event(table, timeout=timeout)
        event, turn = frame["event"], frame.get("turn")
        if event["type"] == "match_ended":
            ended.append(event)
            if len(ended) < matches:
                try:
                    await client.act(table, {"type": "rematch"})
                except ServerError as exc:  # a bot asked first
                    assert exc.code == "bad_state", exc
            continue
        if not turn or turn["seat"] != seat:
            continue
        if turn.get("continue"):
            await client.act(table, {"type": "continue"}, turn=turn["id"])
        elif "legal" in frame:
            legal = {a["type"]: a for a in frame["legal"]}
            assert set(legal) == {"bet", "fold"} and legal["bet"]["min"] == 1, legal
            action = {"type": "fold"} if event.get("hand") == 1 else {"type": "bet", "amount": legal["bet"]["max"]}
            await client.act(table, action, turn=turn["id"])
    return ended
