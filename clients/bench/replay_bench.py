"""``cardhall bench engine``, part 4: ``cardhall phh replay`` against pokerkit, whole process.

:func:`write_hands` plays ``N`` random Hold'em hands (the hands of part 1:
:func:`cardhall.clients.bench.engine.play_random_hand`, fixed-limit and
no-limit alternately, 2 to 6 players drawn at random) and writes each as a
``.phh`` file (``cardhall.engine.phh.dumps`` of its ``hand_record()``).
:func:`replay_figure` then times, as child processes, ``<python> -m
cardhall.clients.cli phh replay FILES`` (start-up included) and a small
pokerkit 0.7.7 script (:data:`POKERKIT_SCRIPT`: ``HandHistory.load`` of each
file, then iterating its states, which plays the hand) on the same files,
``runs`` times each, interleaved. Each run's CPU seconds are the child's
user + system time (``os.wait4``); the figure is the median of the per-run
ratios pokerkit / ours (how many times faster our whole process is).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from cardhall.engine.rng import FairRandom

#: pokerkit's side: read every file with pokerkit's own PHH reader and play it through
POKERKIT_SCRIPT = """\
import sys
import warnings

from pokerkit import HandHistory

warnings.simplefilter("ignore")
hands = 0
for path in sys.argv[1:]:
    with open(path, "rb") as file:
        history = HandHistory.load(file)
    for state in history:  # each step plays the next action; the last state is the end
        pass
    hands += 1
print(hands, "hands")
"""

GAMES = ("fixed_limit_holdem", "no_limit_holdem")
#: files of the untimed first run of each side (it compiles and caches the bytecode)
WARM_UP_FILES = 50


@dataclass
class ReplayFigure:
    """Part 4: seconds are CPU seconds (user + system) of the child process, wall the elapsed time."""

    hands: int
    runs: int
    ours_cpu: list[float]
    pokerkit_cpu: list[float]
    ours_wall: list[float]
    pokerkit_wall: list[float]
    ratio: float  # median over runs of pokerkit CPU / ours CPU
    ours_status: int  # exit status of our last run (0: every hand matched)


def write_hands(folder: Path, count: int, seed: str = "bench") -> list[Path]:
    """Play ``count`` random hands and write each as ``folder/hand-NNNN.phh``; returns the paths."""
    from cardhall.clients.bench.engine import hand_options, play_random_hand
    from cardhall.engine import phh
    from cardhall.engine.registry import engine_class

    root = FairRandom(f"cardhall-bench/{seed}/phh-replay".encode())
    chooser = root.spawn("choose")
    paths = []
    for i in range(count):
        game = GAMES[i % 2]
        setup = root.spawn(f"options/{i}")
        players = 2 + setup.randbelow(5)
        engine = play_random_hand(engine_class(game), hand_options(game, players, setup), players,
                                  root.spawn(f"deal/{i}"), chooser)
        record = engine.hand_record()
        assert record is not None
        path = folder / f"hand-{i:04d}.phh"
        path.write_text(phh.dumps(record), encoding="utf-8")
        paths.append(path)
    return paths


def _run(argv: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """Run ``argv`` to the end (output discarded); returns (CPU seconds, wall seconds, exit status)."""
    start = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime, wall, process.returncode


def replay_figure(count: int = 600, runs: int = 3, seed: str = "bench") -> ReplayFigure:
    """Write ``count`` hands to a temporary folder, then time both replays ``runs`` times, interleaved."""
    with tempfile.TemporaryDirectory(prefix="cardhall-bench-phh-") as tmp:
        folder = Path(tmp)
        files = [str(p) for p in write_hands(folder, count, seed)]
        script = folder / "pokerkit_replay.py"
        script.write_text(POKERKIT_SCRIPT, encoding="utf-8")
        ours_argv = [sys.executable, "-m", "cardhall.clients.cli", "phh", "replay"]
        pokerkit_argv = [sys.executable, str(script)]
        # both sides start from compiled bytecode, cached in the same private folder
        # (whatever PYTHONDONTWRITEBYTECODE says) by one untimed run of each
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(folder / "pycache")
        _run(ours_argv + files[:WARM_UP_FILES], env)
        _run(pokerkit_argv + files[:WARM_UP_FILES], env)
        ours_cpu, pk_cpu, ours_wall, pk_wall = [], [], [], []
        status = 0
        for _ in range(runs):
            cpu, wall, status = _run(ours_argv + files, env)
            ours_cpu.append(cpu)
            ours_wall.append(wall)
            cpu, wall, pk_status = _run(pokerkit_argv + files, env)
            if pk_status != 0:
                raise RuntimeError(f"the pokerkit replay script failed (exit status {pk_status})")
            pk_cpu.append(cpu)
            pk_wall.append(wall)
    ratio = statistics.median(p / o for p, o in zip(pk_cpu, ours_cpu))
    return ReplayFigure(count, runs, ours_cpu, pk_cpu, ours_wall, pk_wall, ratio, status)
