"""The table's timer slot (``server/table/alarm.py``): the last ``set`` wins,
never fires before its time, and a time moved later keeps the loop timer."""

from __future__ import annotations

import asyncio
import time

from cardhall.server.table.alarm import Alarm


async def _fired(alarm_box: list[tuple[str, float]]) -> tuple[str, float]:
    while not alarm_box:
        await asyncio.sleep(0.001)
    return alarm_box[0]


async def test_a_later_time_fires_once_at_that_time_on_the_loop_timer_already_there():
    fired: list[tuple[str, float]] = []
    alarm: Alarm[str] = Alarm(lambda due: fired.append((due, time.monotonic())))
    start = time.monotonic()
    alarm.set(start + 0.01, "clock 1")
    alarm.set(start + 0.05, "clock 2")  # every action moves the clock later
    due, at = await _fired(fired)
    assert due == "clock 2" and at >= start + 0.05 and not alarm.armed
    marker: Alarm[str] = Alarm(lambda due: fired.append((due, time.monotonic())))
    marker.set(time.monotonic() + 0.01, "marker")  # the loop has run past the first time again once this fires
    while len(fired) < 2:
        await asyncio.sleep(0.001)
    assert [due for due, _ in fired] == ["clock 2", "marker"]


async def test_an_earlier_time_replaces_the_loop_timer():
    fired: list[tuple[str, float]] = []
    alarm: Alarm[str] = Alarm(lambda due: fired.append((due, time.monotonic())))
    alarm.set(time.monotonic() + 3600, "far")
    alarm.set(time.monotonic(), "now")  # passed already: fires in a later loop iteration
    assert not fired
    due, _ = await _fired(fired)
    assert due == "now"


async def test_clear_and_close_fire_nothing():
    fired: list[str] = []
    alarm: Alarm[str] = Alarm(fired.append)
    alarm.set(time.monotonic(), "cleared")
    alarm.clear()
    other: Alarm[str] = Alarm(fired.append)
    other.set(time.monotonic(), "closed")
    other.close()
    marker: Alarm[str] = Alarm(fired.append)
    marker.set(time.monotonic() + 0.01, "marker")  # the loop ran past both times once this fires
    while not fired:
        await asyncio.sleep(0.001)
    assert fired == ["marker"] and not alarm.armed and not other.armed
