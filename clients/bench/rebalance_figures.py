"""The figures of ``cardhall bench cluster``'s rebalance round
(:mod:`.cluster_rebalance`), computed from what the round recorded: when the
nodes were balanced, which tables changed node, the metrics' increases over
node processes that restarted, the played seats' acknowledged actions checked
against the stored streams, and the report's lines. Pure: no process, no I/O.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any

from cardhall.clients.load.probe import metric

#: the share of an even share a node may be off by and count as balanced (the issue's 10 %)
TOLERANCE = 0.10
#: the issue's target: balanced within this many seconds of the last node ready again
TARGET_S = 60.0

MOVES = "cardhall_rebalance_moves_total"
PAUSE = "cardhall_rebalance_pause_seconds"
HANDOVER = "cardhall_handover_seconds"


def within(counts: dict[str, int], nodes: int, total: int, tolerance: float | None = TOLERANCE) -> bool:
    """Every one of ``nodes`` is listed in ``counts`` and holds within
    ``tolerance`` (a share of the even share ``total / nodes``) of it; with
    ``tolerance`` None, within one table of it.

    >>> within({"b1": 60, "b2": 70, "b3": 70}, 3, 200), within({"b1": 59, "b2": 70, "b3": 71}, 3, 200)
    (True, False)
    >>> within({"b1": 100, "b2": 100}, 3, 200), within({"b1": 66, "b2": 67, "b3": 67}, 3, 200, None)
    (False, True)
    """
    if len(counts) != nodes or nodes == 0:
        return False
    even = total / nodes
    margin = 1.0 if tolerance is None else tolerance * even
    return all(abs(c - even) <= margin + 1e-9 for c in counts.values())


def balance_times(timeline: list[tuple[float, dict[str, int]]], nodes: int, total: int, since: float,
                  tolerance: float | None = TOLERANCE) -> tuple[float | None, float | None]:
    """From polls ``(time, counts per node)``, those at or after ``since``:
    when the last run of balanced polls (:func:`within`) began, and the first
    balanced poll, each minus ``since`` (None: not balanced at the last poll,
    never balanced).

    >>> tl = [(0.0, {"a": 10, "b": 0}), (1.0, {"a": 6, "b": 4}), (2.0, {"a": 7, "b": 3}), (3.0, {"a": 5, "b": 5}),
    ...       (4.0, {"a": 5, "b": 5})]
    >>> balance_times(tl, 2, 10, 0.5), balance_times(tl, 2, 10, 0.5, None), balance_times(tl, 2, 10, 0.5, 0.5)
    ((2.5, 2.5), (2.5, 0.5), (0.5, 0.5))
    >>> balance_times(tl[:3], 2, 10, 0.0, 0.0), balance_times([], 2, 10, 0.0)
    ((None, None), (None, None))
    """
    first = since_ok = None
    for at, counts in timeline:
        if at < since:
            continue
        if within(counts, nodes, total, tolerance):
            first = at if first is None else first
            since_ok = at if since_ok is None else since_ok
        else:
            since_ok = None
    return (None if since_ok is None else round(since_ok - since, 2)), (None if first is None else round(first - since, 2))


def owner_changes(polls: list[tuple[float, dict[str, set[str]]]]) -> list[tuple[float, str, str, str]]:
    """From polls ``(time, node -> the tables it says it serves)``: each change
    of a table's node, ``(time, table, from, to)``. A table listed by two
    nodes in one poll (caught mid-move) or by none tells nothing.

    >>> owner_changes([(0, {"a": {"t1", "t2"}, "b": set()}), (1, {"a": {"t1", "t2"}, "b": {"t2"}}),
    ...                (2, {"a": {"t1"}, "b": {"t2"}}), (3, {"a": set(), "b": {"t2"}}), (4, {"b": {"t1", "t2"}})])
    [(2, 't2', 'a', 'b'), (4, 't1', 'a', 'b')]
    """
    last: dict[str, str] = {}
    out = []
    for at, listed in polls:
        seen: dict[str, str | None] = {}
        for node, tables in listed.items():
            for t in tables:
                seen[t] = None if t in seen else node
        for t, node in seen.items():
            if node is None:
                continue
            if t in last and last[t] != node:
                out.append((at, t, last[t], node))
            last[t] = node
    return out


def _buckets(text: str, name: str) -> dict[float, float]:
    return {float("inf") if le == "+Inf" else float(le): float(v)
            for le, v in re.findall(rf'^{re.escape(name)}_bucket{{le="([^"]+)"}} ([0-9.e+-]+)$', text, re.M)}


def increase(segments: list[tuple[str, str]], name: str) -> float:
    """The increase of counter ``name`` summed over processes, each given as
    ``(its first scrape, its last)`` ("" for a process that started after the
    first: its counters began at 0).

    >>> a0, a1, b1 = "x_total 3.0", "x_total 10.0", "x_total 4.0"
    >>> increase([(a0, a1), ("", b1)], "x_total")
    11.0
    """
    return sum(max(0.0, metric(after, name) - metric(before, name)) for before, after in segments)


def histogram_increase(segments: list[tuple[str, str]], name: str) -> dict[str, Any]:
    """Histogram ``name``'s increase summed over processes (as :func:`increase`):
    ``count``, ``mean_ms``, ``p50_le_ms`` and ``p99_le_ms`` (the upper bound of
    the bucket holding the quantile; "+Inf" past the last bound; None without
    an observation).

    >>> def h(n1, n2, total): return (f'y_bucket{{le="0.05"}} {n1}\\ny_bucket{{le="0.5"}} {n2}\\n'
    ...                                f'y_bucket{{le="+Inf"}} {n2}\\ny_count {n2}\\ny_sum {total}')
    >>> histogram_increase([(h(1, 1, 0.01), h(5, 6, 0.5)), ("", h(0, 4, 0.4))], "y")
    {'count': 9, 'mean_ms': 98.89, 'p50_le_ms': 500.0, 'p99_le_ms': 500.0}
    >>> histogram_increase([("", "")], "y")
    {'count': 0, 'mean_ms': None, 'p50_le_ms': None, 'p99_le_ms': None}
    """
    buckets: Counter[float] = Counter()
    count = total = 0.0
    for before, after in segments:
        b0, b1 = _buckets(before, name), _buckets(after, name)
        buckets.update({le: max(0.0, v - b0.get(le, 0.0)) for le, v in b1.items()})
        count += max(0.0, metric(after, f"{name}_count") - metric(before, f"{name}_count"))
        total += max(0.0, metric(after, f"{name}_sum") - metric(before, f"{name}_sum"))

    def bound(q: float) -> float | str | None:
        if not count:
            return None
        le = next((le for le in sorted(buckets) if buckets[le] >= q * count), math.inf)
        return "+Inf" if le == math.inf else round(le * 1000, 2)

    return {"count": int(count), "mean_ms": round(total / count * 1000, 2) if count else None,
            "p50_le_ms": bound(0.5), "p99_le_ms": bound(0.99)}


def check_history(acks: list[tuple[int, int | None]], received: dict[int, float], stored: dict[int, float]) -> dict[str, int]:
    """A player's acknowledged actions against its table's stored events.
    ``acks``: ``(turn id, the last seq its connection had received when the
    ``ok`` came)`` per acknowledged action (a turn's id is the ``seq`` of the
    event that began it: the action's events follow it); ``received``: seq ->
    ``ts`` of every event the connection received; ``stored``: seq -> ``ts`` of
    the table's stored events. ``lost``: acks none of whose events was received
    before the ``ok`` or one of which is not stored as received; ``diverged``:
    received events not stored as received.

    >>> check_history([(4, 6), (7, 8), (9, 9)], {5: 1.0, 6: 1.1, 8: 1.3, 9: 1.4},
    ...               {4: 0.9, 5: 1.0, 6: 1.1, 7: 1.2, 8: 9.9, 9: 1.4})
    {'acks': 3, 'lost': 2, 'diverged': 1, 'events': 4}
    """
    diverged = {s for s, ts in received.items() if s not in stored or abs(stored[s] - ts) > 1e-6}
    lost = 0
    for turn, seq in acks:
        mine = [s for s in received if seq is not None and turn < s <= seq]
        lost += not mine or any(s in diverged for s in mine)
    return {"acks": len(acks), "lost": lost, "diverged": len(diverged), "events": len(received)}


def quantile(values: list[float], q: float) -> float | None:
    """Nearest-rank quantile (None when empty).

    >>> quantile([0.3, 0.1, 0.2], 0.99), quantile([], 0.5)
    (0.3, None)
    """
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))], 4)


def ms(x: float | None) -> float | None:
    return None if x is None else round(x * 1000, 1)


# -- what runs beside the round ----------------------------------------------------------------

def timeline_rows(polls: list[tuple[float, dict[str, int]]], began: float, every: float = 1.0) -> list[list[Any]]:
    """The polls from ``began`` on, one per ``every`` s: ``[seconds since began, counts]``.

    >>> timeline_rows([(9.0, {"a": 1}), (10.2, {"a": 2}), (10.7, {"a": 3}), (11.3, {"a": 4})], 10.0)
    [[0.2, {'a': 2}], [1.3, {'a': 4}]]
    """
    out: list[list[Any]] = []
    for at, counts in polls:
        if at >= began and (not out or at - began >= out[-1][0] + every):
            out.append([round(at - began, 2), counts])
    return out


def shortfalls(r: dict[str, Any] | None) -> list[str]:
    """Lines for :func:`~.cluster.shortfalls`: the round's spectators or players that did not join."""
    if r is None:
        return []
    c, p = r["connections"], r["players"]
    if c["connected"] < c["planned"] or p["seated"] < p["planned"]:
        return [f"rebalance: {c['connected']} of {c['planned']} spectators connected "
                f"({c.get('failure_kinds') or 'none refused'}), {p['seated']} of {p['planned']} players seated "
                f"{p['failures'] or ''}".rstrip()]
    return []


def report_lines(r: dict[str, Any] | None) -> list[str]:
    """The round as text (:func:`~.cluster_report.report`)."""
    if r is None:
        return []
    b, m, p, h, cl, co, pl = r["balance"], r["moves"], r["pause"], r["handover"], r["clients"], r["connections"], r["players"]
    rate = "the server's default" if r["rebalance_rate"] is None else f"{r['rebalance_rate']:g}/s per node"
    hold = "the server's default" if r["rebalance_hold_s"] is None else f"{r['rebalance_hold_s']:g} s"
    lines = [f"-- rebalance: a fresh {r['nodes']}-node cluster, {r['tables']} bot tables and {pl['seated']} with a bench "
             f"player, {co['connected']} spectators (reconnecting); rolling restart of every node (SIGTERM, started "
             f"again, ready, listed); rebalance rate {rate}, hold {hold}"]
    for x in r["restarts"]:
        lines.append(f"  {x['node']}: held {x['held']} tables at SIGTERM, exited after {x['exit_s']} s"
                     f"{'' if x['exited'] else ' (killed)'}, ready {x['ready_s']} s after its start, listed "
                     f"{x['listed_s']} s later; tables then {x['counts_then']}")

    def when(v: float | None, first: float | None) -> str:
        return "not reached" if v is None else f"after {v} s" + (f" (first reached {first} s)" if first != v else "")

    lines += [f"  from the last node ready again, observed {r['observed_s']} s: every node within 10 % of the even share "
              f"({b['even_share']}) {when(b['within_10pct_s'], b['first_within_10pct_s'])}, for good "
              f"(target {b['target_s']:g} s: {'met' if b['target_met'] else 'NOT met'}); within one table "
              f"{when(b['within_one_s'], b['first_within_one_s'])}",
              f"  tables per node when balanced {b['counts_when_balanced']}, at the end {b['counts_at_end']}",
              f"  moves (cardhall_rebalance_moves_total): {m['total']} in the round, {m['after_last_restart']} after the "
              f"last restart; seen changing node after it {m['observed']}, of them moved twice {m['moved_twice']}, "
              f"after balanced {m['after_balanced']}",
              f"  pause per move (cardhall_rebalance_pause_seconds): {p['count']} moves, mean {p['mean_ms']} ms, "
              f"p50 <= {p['p50_le_ms']} ms, p99 <= {p['p99_le_ms']} ms (target p99 < 500 ms); the SIGTERM handovers "
              f"(cardhall_handover_seconds): {h['count']} tables, mean {h['mean_ms']} ms, p99 <= {h['p99_le_ms']} ms",
              f"  clients: longest wait between two events of a table moved after the last restart p50 "
              f"{cl['longest_wait_p50_ms']} ms, p99 {cl['longest_wait_p99_ms']} ms, max {cl['longest_wait_max_ms']} ms "
              f"({cl['moved_tables']} tables); the other tables p50 {cl['other_longest_wait_p50_ms']} ms, max "
              f"{cl['other_longest_wait_max_ms']} ms; tables with a wait over 5 s: {len(cl['tables_waiting_over_5s'])}",
              f"  connections: {co['connected']} of {co['planned']} spectators connected; closed by the server during "
              f"the round {co['closed']} {co['close_codes']}, {co['reconnected']} open again ({co['resumed']} resumed, "
              f"{co['silent_over_5s']} silent over 5 s), {co['lost']} lost; seq gaps {r['seq_gaps']}, repeats "
              f"{r['repeats']}; the reopened connections' silence over the round (longest time without an event while "
              f"their table went on, their node's restart included) p50 {cl['resumed_silence_p50_ms']} ms, p99 "
              f"{cl['resumed_silence_p99_ms']} ms, max {cl['resumed_silence_max_ms']} ms",
              f"  players: {pl['seated']} of {pl['planned']} seated; {pl['acks']} acknowledged actions, {pl['acks_lost']} "
              f"lost ({pl['checked_acks']} looked up in {pl['tables_checked']} tables' stored events); {pl['diverged']} "
              f"events received not in the history as received; repeats {pl['repeats']}, seq gaps {pl['seq_gaps']}, "
              f"errors {pl['errors'] or 'none'}"]
    if r["poll_failures"]:
        lines.append(f"  ({r['poll_failures']} /api/cluster polls unanswered: nodes stopping or starting)")
    return lines
