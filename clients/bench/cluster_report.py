"""The text report of ``cardhall bench cluster`` (:func:`report`): the figures of
:func:`~.cluster.run` as the command prints them without ``--json``."""

from __future__ import annotations

from typing import Any

from cardhall.clients.bench import cluster_faults, rebalance_figures, redis_cluster


def _where(p: dict[str, Any]) -> str:
    samples = sum(p["cpus"].values()) or 1
    cpus = " ".join(f"CPU{cpu} {100 * n // samples}%" for cpu, n in p["cpus"].items()) or "not seen"
    return f"{p['name']} pid {p['pid']}: {p['cpu_s']} CPU s, on {cpus} (may run on {p['affinity']})"


def report(out: dict[str, Any]) -> str:
    """The figures of :func:`~.cluster.run` as text."""
    m, shards = out["machine"], out.get("redis_cluster")
    store = "one private redis-server" if shards is None else \
        f"one private redis-server, then a private Redis Cluster of {shards['masters']} masters"
    lines = [f"game {out['game']}: {out['tables']} tables x {out['seats']} bots, think {out['think_s']} s, "
             f"{out['spectators_per_table']} spectators per table spread over the nodes; "
             + (f"{out['duration_s']} s measured after {out['warmup_s']} s" if out["runs"] else f"warmup {out['warmup_s']} s")
             + f"; {store}; machine: {m['cpus']} CPUs "
             f"({m['usable_cpus']} usable), load average {m['load_average']}"]
    for r in out["runs"]:
        hop, cpu = r["hop"], r["cpu"]
        on = "" if "store" not in r else f" on {redis_cluster.STORE_NAMES.get(r['store'], r['store'])}, round {r['round']}"
        lines += [f"-- {r['nodes']} node(s){on}: tables per node {r['tables_per_node']}",
                  f"  actions/s          {r['actions_per_s']:>10}",
                  f"  events delivered/s {r['events_per_s']:>10}   ({r['connections']} of {r['planned_connections']} "
                  f"spectators held to the end of the window; {r['connected']} connected)",
                  f"  latency ms         p50 {r['p50_ms']}  p95 {r['p95_ms']}  p99 {r['p99_ms']}  max {r['max_ms']}",
                  f"  errors {r['errors'] or 'none'}  server errors {r['server_errors'] or 'none'}  "
                  f"seq gaps {r['seq_gaps']}  owner changes {r['owner_changes']}",
                  "  server side p99 <= (bucket bounds, ms): " + ", ".join(
                      f"{n} action {v['action_latency']} commit {v['commit']}" for n, v in r["server_p99_le_ms"].items())]
        for g, label in (("owner", "on the owner"), ("other", "on another node")):
            h = hop[g]
            if "p50_ms" in h:
                lines.append(f"  spectators {label:<16} p50 {h['p50_ms']} ms  p99 {h['p99_ms']} ms  "
                             f"({h['connections']} connections)")
        if "extra_p50_ms" in hop:
            lines.append(f"  cross-node hop     {hop['extra_p50_ms']:+} ms at p50, {hop['extra_p99_ms']:+} ms at p99")
        lines += [f"  CPU s              nodes {cpu['nodes_s']} ({cpu['nodes_cores']} cores), redis {cpu['redis_s']}, "
                  f"load {cpu['load_s']}; the machine was busy {cpu['machine_busy_s']} CPU s "
                  f"({cpu['others_s']} of them other processes)",
                  f"  actions per node CPU-second {cpu['actions_per_node_cpu_s']} "
                  f"({cpu['actions_per_cpu_s_with_redis']} counting Redis); ratio to 1 node {cpu['ratio_to_1']}"]
        if "redis_shards" in r:
            lines.append("  Redis shards: " + ", ".join(f"{k} (slots {v['slots']}) {v['tables']} tables {v['cpu_s']} CPU s"
                                                     for k, v in r["redis_shards"]["masters"].items()))
        lines += [f"  {_where(p)}" for p in r["processes"]]
    if shards is None and out["runs"]:
        lines.append("-- work per CPU-second at the same offered load (target: 2 nodes keep >= 0.8 of 1 node)")
        lines.append("  nodes  actions/s  node CPU s  redis CPU s  actions/node-CPU-s  ratio")
    for r in out["runs"] if shards is None else ():
        c = r["cpu"]
        lines.append(f"  {r['nodes']:>5}  {r['actions_per_s']:>9}  {c['nodes_s']:>10}  {c['redis_s']:>11}  "
                     f"{c['actions_per_node_cpu_s']!s:>18}  {c['ratio_to_1']}")
    f = out["failover"]
    if f is not None:
        lines += [f"-- failover: kill -9 of {f['node']} ({f['tables']} tables), lease TTL {f['lease_ttl_s']} s "
                  f"(renewed every {f['lease_renew_s']} s)",
                  f"  kill -> first event on a surviving node: p50 {f['p50_s']} s, max {f['max_s']} s "
                  f"({f['resumed']} of {f['observed']} watched tables resumed)",
                  f"  claimed by {f['claimed_by']}; seq gaps {f.get('seq_gaps')}; "
                  f"{f.get('connections_lost')} spectators lost (those connected to {f['node']})"]
    h = out["handover"]
    if h is not None:
        hist, cl = h["histogram"], h["clients"]
        lines += [f"-- handover: SIGTERM of {h['node']} ({h['tables']} tables); it exited after {h['exit_s']} s; "
                  f"claimed by {h['claimed_by']}",
                  f"  cardhall_handover_seconds on the receivers: {hist['count']} tables {hist['received_by']}, "
                  f"mean {hist['mean_ms']} ms, p99 <= {hist['p99_le_ms']} ms (target < 500 ms)",
                  f"  clients: longest wait between two events of a handed-over table p50 {cl['longest_wait_p50_ms']} ms, "
                  f"p99 {cl['longest_wait_p99_ms']} ms, max {cl['longest_wait_max_ms']} ms "
                  f"({cl['resumed']} of {cl['observed']} watched tables resumed)",
                  f"  (the other tables, same interval: p50 {cl['other_tables_longest_wait_p50_ms']} ms, "
                  f"max {cl['other_tables_longest_wait_max_ms']} ms); SIGTERM -> first event after it p50 "
                  f"{cl['first_event_after_sigterm_p50_ms']} ms, max {cl['first_event_after_sigterm_max_ms']} ms; "
                  f"seq gaps {h['seq_gaps']}",
                  f"  spectators: {h['connections']['connected']} of {h['connections']['planned']} connected"]
    lines += cluster_faults.report_lines(out.get("faults")) + rebalance_figures.report_lines(out.get("rebalance"))
    lines += redis_cluster.report_lines(shards)
    if out.get("shortfalls"):
        lines.append("-- WARNING: fewer spectators than intended; the figures above cover only those connected:")
        lines += [f"  {line}" for line in out["shortfalls"]]
    else:
        lines.append("-- every intended spectator connected and was held to the end of its window")
    return "\n".join(lines)
