"""Recovery by replay (``server/STORAGE.md``, "The input log"): for every game,
a table played with people, bots, spectators, clocks running out, pauses,
chat, renames, disconnects and leaves; at random kill points its last full state with
the log steps after it (both through their stored bytes) replays to exactly
the state the table had after that step, and every step's digest matches."""

from __future__ import annotations

from typing import Any

import pytest

from cardhall.engine.bots.registry import make_bot
from cardhall.engine.rng import FairRandom
from cardhall.server.store.format import FORMAT_VERSION, pack_entry, pack_state, unpack_entry, unpack_state
from cardhall.server.table.inputs import Act, Chat, Disconnect, Join, Leave, Rename
from cardhall.server.table.log import ReplayError
from cardhall.server.table.outputs import Outputs
from cardhall.server.table.replay import replay
from tests.games import GAMES, quick
from tests.server.table.harness import Bench

Data = dict[str, Any]

#: log steps between full states in this test (small, so kill points fall between many of them)
EVERY = 7


def _table(data: Data) -> Data:
    return {k: v for k, v in data.items() if k != "replay"}


class Recording(Bench):
    """A bench that keeps what a store would: each full state (when the actor
    would write one) and each log step's stored entry, and the state after
    every logged step (the truth a replay must give)."""

    def __init__(self, game: str, seats: int, bots: list[str | None], options: Data) -> None:
        self.fulls: list[Data] = []
        self.entries: list[Data] = []
        self.truth: dict[int, Data] = {}
        self.since_full = 0
        super().__init__(game, seats=seats, bots=bots, options=options, owner="ann")
        self.m.verify_log = True
        self.fulls.append(unpack_state(pack_state(self.m.to_data(self.mono))))

    def deliver(self) -> Outputs:
        machine = self.m
        out = super().deliver()
        for step in out.log:
            self.entries.append(unpack_entry(pack_entry(step.entry())))
        if out.log:
            self.truth[out.log[-1].n] = _table(machine.to_data(out.log[-1].now.mono))
        if out.whole_state_due(self.since_full, EVERY):  # where the actor writes a whole state
            self.fulls.append(unpack_state(pack_state(machine.to_data(self.mono))))
            self.since_full = 0
        else:
            self.since_full += len(out.log)
        return out


def _drive(game: str, seed: int, steps: int) -> Recording:
    seats = 3 if game != "alamo" else 2
    # quick matches, so the kill points see rematches and new server seeds too
    bench = Recording(game, seats, ["random"] * (seats - 2),
                      quick(game, pause=0.5, bot_think=0.2, action_clock=3, time_bank=2))
    rng = FairRandom(seed.to_bytes(8, "big"))
    mover = make_bot(game, "random", FairRandom(b"mover" + seed.to_bytes(8, "big")))
    people = {1: ("a", "ann"), 2: ("b", "bob")}
    bench.join("a", "ann", role="player", seat=1)
    bench.join("w", "wes")  # a spectator
    bench.join("b", "bob", role="player", seat=2)
    for _ in range(steps):
        m = bench.m
        roll = rng.randbelow(100)
        if m.status == "finished":
            bench.act("a", "ann", {"type": "rematch"}) if roll < 50 else bench.wait(1)
            if bench.timer is not None:
                bench.fire()
            continue
        sitting = [seat for seat in people if seat in m.seats and m.seats[seat].sitting_out]
        if roll < 10 and sitting:
            sub, player = people[sitting[0]]
            bench.step(Act(sub, player, "r", {"type": "sit_in"}))
        elif roll < 70 and m.turn_kind in ("human", "continue") and m.turn_seat in people:
            sub, player = people[m.turn_seat]
            if m.turn_kind == "continue":
                action: Data = {"type": "continue"}
            else:
                view = m.engine.view(m.turn_seat) if m.engine is not None else {}
                action = mover.choose(view, [dict(a) for a in m.turn_legal or []])
            bench.wait(rng.randbelow(1500) / 1000)
            bench.step(Act(sub, player, "r", action, m.turn_id))
        elif roll < 85 and bench.timer is not None:
            bench.fire()
        elif roll < 86:
            bench.wait(rng.randbelow(5000) / 1000)
            if bench.timer is not None:
                bench.fire()
        elif roll < 87:
            seat = 1 + rng.randbelow(2)
            bench.step(Disconnect(people[seat][0]))
        elif roll < 90:
            seat = 1 + rng.randbelow(2)
            sub, player = people[seat]
            bench.step(Join(sub, player, player, "j", role="player", seat=seat, since=m.seq))
        elif roll < 91:
            bench.step(Chat("w", "wes", "wes", "c", text="hello"))
        elif roll < 92:  # a seated player's or the spectator's (a join as a player takes its name back)
            bench.step(Rename(("ann", "wes")[rng.randbelow(2)], f"name {rng.randbelow(1000)}"))
        elif roll < 94:
            bench.act("a", "ann", {"type": "pause" if not m.paused else "resume"})
        elif roll < 96:
            bench.step(Leave("w", "wes", "l") if "w" in m.subscribers else Join("w", "wes", "wes", "j"))
        elif roll < 97 and rng.randbelow(4) == 0:
            bench.step(Leave("b", "bob", "l"))
        else:
            bench.step(Act("w", "wes", "r", {"type": "fold"}, m.turn_id))  # refused: changes nothing
    return bench


@pytest.mark.parametrize("game", GAMES)
def test_replay_at_random_kill_points_gives_the_state_the_table_had(game):
    kills = 0
    for seed in range(3):
        bench = _drive(game, seed, 600)
        assert bench.entries, "the table logged nothing"
        points = sorted(bench.truth)
        picker = FairRandom(f"kill {game} {seed}".encode())
        chosen = {points[picker.randbelow(len(points))] for _ in range(25)} | {points[-1]}
        for k in sorted(chosen):
            full = max((f for f in bench.fulls if f["log"] <= k), key=lambda f: f["log"])
            log = [e for e in bench.entries if e["n"] <= k]
            data, applied = replay(full, log)
            assert applied == k - full["log"]
            assert _table(data) == bench.truth[k], (game, seed, k)
            kills += 1
        # every step of the whole match replays with matching digests from the first full state
        data, applied = replay(bench.fulls[0], bench.entries)
        assert _table(data) == bench.truth[points[-1]]
    assert kills >= 30


def test_a_log_with_a_gap_or_from_other_code_is_refused():
    bench = _drive("no_limit_holdem", 7, 80)
    first = bench.fulls[0]
    entries = [e for e in bench.entries if e["n"] > first["log"]]
    assert len(entries) >= 3
    with pytest.raises(ReplayError, match="gap"):
        replay(first, entries[:1] + entries[2:])
    other = dict(first, replay=dict(first["replay"], version="0.0.9+0123456789abcdef"))
    with pytest.raises(ReplayError, match="only the code that wrote it"):
        replay(other, entries)
    forged = [dict(entries[0], h="0" * 32), *entries[1:]]
    with pytest.raises(ReplayError, match="another state"):
        replay(first, forged)
    assert replay(first, [])[1] == 0 and first["v"] == FORMAT_VERSION
