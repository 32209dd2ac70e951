"""``cardhall bench bots`` runs end to end on a small load: it starts its server, creates the bot
tables from several addresses (all accepted within the per-address limit), probes a person's
``ping`` and ``/healthz`` in both phases and reads the server's actions (the loaded phase starts
once the tables have played: its actions per second may still be 0 on a machine busy enough)."""

from __future__ import annotations

import json
import subprocess
import sys


def test_bench_bots_measures_a_small_crowd():
    out = subprocess.run([sys.executable, "-m", "cardhall.clients.cli", "bench", "bots", "--tables", "20",
                          "--addresses", "2", "--seats", "3", "--duration", "1", "--warmup", "0.5", "--json"],
                         capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr[-2000:]
    figures = json.loads(out.stdout.strip().splitlines()[-1])
    assert figures["created"]["statuses"] == {"201": 20}
    for phase in ("idle", "loaded"):
        assert figures[phase]["ping"]["n"] > 0 and figures[phase]["healthz"]["n"] > 0
        assert figures[phase]["ping"]["max_ms"] < 30_000  # every probe answered
    assert figures["actions_total"] > 0 and figures["actions_per_s"] >= 0 and "server" in figures["cores"]
