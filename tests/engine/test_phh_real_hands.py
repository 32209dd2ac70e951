"""The real hands in ``../shared/phh`` replayed through our engines.

What a correct replay gives (``shared/phh/README.md``, checked with pokerkit
0.7.7): 27 files match their finishing stacks; 9 mismatch exactly so: the 8
Pluribus split pots recorded in half chips differ by exactly 0.5 on each
differing stack, and ``phh-dataset/.../00-01-07.phh`` (ante trimming on, as
the file says) has p1 and p2 500k away; ``dwan-ivey-2009.phh`` records no
finishing stacks (unchecked). All 37 are legal. On every hand our stacks
must also equal pokerkit's own replay.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from cardhall.engine import phh
from cardhall.engine.replay import replay_hand
from tests.conftest import require

ROOT = Path(__file__).resolve().parents[2]
#: the project's real hand histories, kept beside the repository (``../shared/phh``);
#: ``CARDHALL_PHH_DIR`` points elsewhere (a clone that is not beside ``shared/``)
SHARED = Path(os.environ.get("CARDHALL_PHH_DIR") or ROOT.parent / "shared" / "phh")

HALF_CHIPS = {f"pluribus/{name}.phh" for name in ("102/0", "32/23", "41b/204", "60/88", "75b/76", "88/128", "91/43", "91/53")}
TRIMMED = "phh-dataset/data/wsop/2019/42/3/00-01-07.phh"
UNCHECKED = "dwan-ivey-2009.phh"


def shared_files() -> list[Path]:
    """Every ``.phh``/``.phhs`` file of :data:`SHARED` (skipped, or failed under CI=true, when it is missing)."""
    require(SHARED.is_dir(), f"the shared hand histories are not at {SHARED} (set CARDHALL_PHH_DIR)")
    return list(phh.find_files([SHARED]))


def hand_of(name: str) -> dict:
    shared_files()
    return phh.load_file(SHARED / name)[0][1]


def expected_status(name: str) -> str:
    if name in HALF_CHIPS or name == TRIMMED:
        return "mismatch"
    return "unchecked" if name == UNCHECKED else "match"


def test_the_shared_folder_holds_the_37_files_the_readme_describes():
    names = {p.relative_to(SHARED).as_posix() for p in shared_files()}
    assert len(names) == 37 and HALF_CHIPS | {TRIMMED, UNCHECKED} <= names


@pytest.mark.parametrize("name", sorted(
    ["dwan-ivey-2009.phh", TRIMMED, *HALF_CHIPS]
    + [f"wsop/2023/43/5/{n}.phh" for n in (1, 2, 3, 4, 34, 35, 36, 37, 38, 39, 40, 62, 63, 64, 65, 66, 67, 68)]
    + [f"pluribus/{n}.phh" for n in ("30/0", "30/1", "30/10", "100/61", "100b/75", "103/3", "103/15", "103b/151", "104/47")]
))
def test_each_real_hand_replays_as_the_readme_says(name):
    hand = hand_of(name)
    result = replay_hand(hand)
    assert result.status == expected_status(name), result.detail
    from cardhall.clients.bench import pokerkit_ref

    assert result.stacks == pokerkit_ref.replay(hand)  # our stacks equal the reference implementation's
    expected = hand.get("finishing_stacks")
    if name in HALF_CHIPS:
        diffs = [Decimal(ours) - theirs for ours, theirs in zip(result.stacks, expected)]
        assert {abs(d) for d in diffs if d} == {Decimal("0.5")}, diffs
        assert sum(diffs) == 0 and sum(1 for d in diffs if d) == 2
        assert "+0.5" in result.detail and "-0.5" in result.detail
    elif name == TRIMMED:
        diffs = [ours - theirs for ours, theirs in zip(result.stacks, expected)]
        assert diffs == [-500_000, 500_000, 0, 0, 0, 0, 0, 0]
        assert result.notes == ["p8 did not act before action 14 'p1 cc': taken as a fold (pokerkit's repair)"]
    elif name == UNCHECKED:
        assert expected is None and result.stacks == [572_100, 1_997_500, 1_109_500]
    else:
        assert result.stacks == expected


def test_the_trimmed_file_matches_with_ante_trimming_off():
    """The README's reading of 00-01-07: its stacks are reached with ante trimming off."""
    hand = {**hand_of(TRIMMED), "ante_trimming_status": False}
    assert replay_hand(hand).status == "match"


def test_fixed_limit_files_are_replayed_by_the_fixed_limit_engine():
    hand = hand_of("wsop/2023/43/5/34.phh")
    result = replay_hand(hand)
    assert result.status == "match"
    assert type(result.engine).game == "fixed_limit_holdem"


def test_an_illegal_action_is_reported_with_the_action_and_the_reason():
    hand = hand_of("wsop/2023/43/5/34.phh")
    actions = list(hand["actions"])
    actions[6] = "p4 cbr 300000"  # a fixed-limit raise must go to 400000
    result = replay_hand({**hand, "actions": actions})
    assert result.status == "illegal"
    assert "action 7 'p4 cbr 300000' is illegal" in result.detail


def _edited(index: int, new: str | None, insert: bool = False) -> dict:
    hand = hand_of("wsop/2023/43/5/34.phh")
    actions = list(hand["actions"])
    if insert:
        actions.insert(index, new)
    elif new is None:
        del actions[index:]
    else:
        actions[index] = new
    return {**hand, "actions": actions}


@pytest.mark.parametrize(
    "hand, status, detail",
    [
        (lambda: _edited(12, None), "illegal", "the file ends before the hand does: p4 is still to act"),
        (lambda: _edited(5, "p4 f"), "illegal",
         "action 7 'p4 cbr 400000': p4 has folded (after: p3 did not act before action 6 'p4 f': taken as a fold"),
        (lambda: _edited(11, "d db 2c", insert=True), "illegal",
         "p2 did not act before action 12 'd db 2c': taken as a check (pokerkit's repair)"),
        (lambda: _edited(10, "p2 cc", insert=True), "illegal", "the file must deal the next street first"),
        (lambda: _edited(6, "p9 cc"), "illegal", "there are only 5 players"),
        (lambda: _edited(6, "p4 cbr 400000.5"), "illegal", "fractional chips are not supported"),
        (lambda: _edited(0, "d dh p1 Tc4c"), "error", "Tc dealt more than once"),
    ],
    ids=["ends-early", "folded-player-acts", "board-skips-players", "street-not-dealt", "no-such-player",
         "half-chip-raise", "card-twice"],
)
def test_bad_histories_get_a_clear_status_and_detail(hand, status, detail):
    result = replay_hand(hand())
    assert result.status == status and detail in result.detail, result.detail


def test_a_straddle_is_an_error_with_a_clear_detail():
    hand = hand_of("pluribus/30/0.phh")
    result = replay_hand({**hand, "blinds_or_straddles": [50, 100, 200, 0, 0, 0]})
    assert result.status == "error" and "straddles are not supported" in result.detail


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cardhall.clients.cli", "phh", "replay", *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_cli_replays_the_shared_folder_27_match_9_mismatch_1_unchecked():
    shared_files()
    done = _cli("--no-expected", str(SHARED))  # the bare statuses (expected differences: tests/clients/test_phh_replay.py)
    assert done.returncode == 1, done.stderr  # 9 mismatches
    assert done.stdout.splitlines()[-1] == (
        "37 hands in 37 files: 27 match, 9 mismatch, 1 unchecked, 0 illegal, 0 error"
    )


def test_cli_json_gives_one_object_per_hand_and_the_readme_command_exits_0():
    shared_files()
    done = _cli("--json", str(SHARED / "wsop"))
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(rows) == 18 and {r["status"] for r in rows} == {"match"}
    assert set(rows[0]) >= {"file", "hand", "status", "detail"}
    assert {r["hand"] for r in rows} == {1, 2, 3, 4, 34, 35, 36, 37, 38, 39, 40, 62, 63, 64, 65, 66, 67, 68}


def test_cli_reports_a_missing_path():
    assert _cli("no/such/folder").returncode == 2
