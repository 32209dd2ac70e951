"""``cardhall phh replay`` with expected differences (clients/commands/phh.py,
clients/commands/phh_expected.py), run as a process as a user runs it.

The real hands beside the repository (``../shared/phh``, whose README lists the
differences a correct replay has: 8 split pots in half chips, one file whose
ante trimming is wrong, one without finishing stacks) are replayed with the
expectations cardhall ships for them: every difference is named as expected,
with its reason, and the command exits 0. A copy with stacks altered exits 1
and names those unexpected; so does an expectation whose kind does not
describe the difference. ``--expected FILE``, a ``phh-expected.toml`` beside
the hands, ``--no-expected``, an unreadable expectations file (exit 2) and a
README no expectations are known for (a note) are covered too.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import require

ROOT = Path(__file__).resolve().parents[2]
#: the real hand histories (as tests/engine/test_phh_real_hands.py finds them)
SHARED = Path(os.environ.get("CARDHALL_PHH_DIR") or ROOT.parent / "shared" / "phh")
SHIPPED = ROOT / "clients" / "commands" / "phh-expected-shared.toml"

HALF_CHIPS = [f"pluribus/{name}.phh" for name in ("102/0", "32/23", "41b/204", "60/88", "75b/76", "88/128", "91/43",
                                                  "91/53")]
TRIMMED = "phh-dataset/data/wsop/2019/42/3/00-01-07.phh"
UNCHECKED = "dwan-ivey-2009.phh"
MATCHING = "wsop/2023/43/5/1.phh"


def _shared() -> Path:
    require(SHARED.is_dir(), f"the shared hand histories are not at {SHARED} (set CARDHALL_PHH_DIR)")
    return SHARED


def _cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cardhall.clients.cli", "phh", "replay", *map(str, args)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)


def _lines(done: subprocess.CompletedProcess[str], status: str) -> dict[str, str]:
    """Relative file -> its line, of the hand lines with ``status``."""
    out = {}
    for line in done.stdout.splitlines():
        if line.split(" ", 1)[0] == status:
            path = line.split(" ", 1)[1].strip().split(": ", 1)[0]
            out[path] = line
    return out


def _relative(lines: dict[str, str], base: Path) -> dict[str, str]:
    return {Path(p).relative_to(base).as_posix(): line for p, line in lines.items()}


def _alter(path: Path, old: str, new: str) -> None:
    """Replace ``old`` by ``new`` in the ``finishing_stacks`` line of PHH file ``path``."""
    text = path.read_text()
    line = re.search(r"^finishing_stacks = .*$", text, re.M)
    assert line is not None and old in line.group(0), line
    path.write_text(text.replace(line.group(0), line.group(0).replace(old, new, 1)))


def test_the_shared_folder_exits_0_naming_each_expected_difference():
    shared = _shared()
    done = _cli(shared)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    assert done.stderr.strip().endswith(f"phh-expected-shared.toml (for {shared.resolve()})"), done.stderr
    assert done.stderr.startswith("cardhall phh replay: expectations: ") and len(done.stderr.splitlines()) == 1
    lines = done.stdout.splitlines()
    assert lines[-1] == "37 hands in 37 files: 27 match, 9 expected differences, 0 unexpected, 1 unchecked, 0 illegal, 0 error"
    expected = _relative(_lines(done, "expected"), shared)
    assert sorted(expected) == sorted([*HALF_CHIPS, TRIMMED])
    for name in HALF_CHIPS:
        assert "+0.5" in expected[name] and "[expected: a split pot recorded in half chips" in expected[name]
    assert "[expected: the file says ante_trimming_status = true" in expected[TRIMMED]
    unchecked = _relative(_lines(done, "unchecked"), shared)
    assert list(unchecked) == [UNCHECKED] and "[expected: the file records no finishing stacks" in unchecked[UNCHECKED]
    assert not _lines(done, "unexpected") and not _lines(done, "mismatch")
    # without the expectations: the bare statuses, exit 1
    bare = _cli("--no-expected", shared)
    assert bare.returncode == 1
    assert bare.stdout.splitlines()[-1] == "37 hands in 37 files: 27 match, 9 mismatch, 1 unchecked, 0 illegal, 0 error"
    assert not _lines(bare, "expected") and "[expected" not in bare.stdout and not bare.stderr


def test_a_copy_with_stacks_altered_names_them_unexpected_and_exits_1(tmp_path: Path):
    copy = tmp_path / "phh"
    shutil.copytree(_shared(), copy)
    _alter(copy / MATCHING, "7340000", "7340001")  # a file that matched
    _alter(copy / HALF_CHIPS[0], "10000.0", "10100.0")  # a half-chip file, now 100 off elsewhere too
    done = _cli(copy)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr
    assert done.stdout.splitlines()[-1] == (
        "37 hands in 37 files: 26 match, 8 expected differences, 2 unexpected, 1 unchecked, 0 illegal, 0 error")
    unexpected = _relative(_lines(done, "unexpected"), copy)
    assert sorted(unexpected) == sorted([MATCHING, HALF_CHIPS[0]])
    assert "p1 7340000 (file 7340001, -1)" in unexpected[MATCHING] and "[" not in unexpected[MATCHING].split(": ", 1)[1]
    assert "[not the expected difference: a split pot recorded in half chips" in unexpected[HALF_CHIPS[0]]
    rows = [json.loads(line) for line in _cli("--json", copy).stdout.splitlines()]
    by_file = {Path(r["file"]).relative_to(copy).as_posix(): r for r in rows}
    assert by_file[MATCHING]["difference"] == "unexpected" and "expectation" not in by_file[MATCHING]
    assert by_file[HALF_CHIPS[0]]["expectation"] == {
        "kind": "half_chip", "holds": False,
        "reason": "a split pot recorded in half chips: a whole-chip replay pays the odd chip to one winner, "
                  "each differing stack 0.5 away"}
    assert by_file[HALF_CHIPS[1]]["difference"] == "expected" and by_file[HALF_CHIPS[1]]["expectation"]["holds"]
    assert "difference" not in by_file["wsop/2023/43/5/2.phh"]


def test_expected_file_named_or_found_beside_the_hands(tmp_path: Path):
    """``--expected FILE`` matches the hands by the end of their paths; a
    ``phh-expected.toml`` in the folder is found by itself; an expectation of
    the wrong kind does not excuse a difference."""
    hands = tmp_path / "hands"
    (hands / "pluribus" / "102").mkdir(parents=True)
    shutil.copy(_shared() / HALF_CHIPS[0], hands / HALF_CHIPS[0])
    bare = _cli(hands)
    assert bare.returncode == 1 and list(_relative(_lines(bare, "mismatch"), hands)) == [HALF_CHIPS[0]]
    assert not bare.stderr  # no README nor expectations file above it
    named = _cli("--expected", SHIPPED, hands)
    assert named.returncode == 0, named.stdout + named.stderr
    assert named.stderr == f"cardhall phh replay: expectations: {SHIPPED}\n"
    assert named.stdout.splitlines()[-1] == "1 hand in 1 file: 0 match, 1 expected differences, 0 unexpected, 0 unchecked, 0 illegal, 0 error"
    (hands / "phh-expected.toml").write_text('[[hand]]\npath = "pluribus/102/0.phh"\nkind = "ante_trimming"\n')
    beside = _cli(hands / "pluribus")  # a subfolder: the file is found in the folder above
    assert beside.returncode == 1, beside.stdout + beside.stderr
    assert beside.stderr == f"cardhall phh replay: expectations: {hands.resolve() / 'phh-expected.toml'} (for {hands.resolve()})\n"
    assert "unexpected" in beside.stdout and "[not the expected difference: the file says ante_trimming_status" in beside.stdout
    (hands / "phh-expected.toml").write_text('[[hand]]\npath = "pluribus/102/0.phh"\nkind = "half_chip"\nreason = "ours"\n')
    assert "[expected: ours]" in _cli(hands).stdout


def test_an_unreadable_expectations_file_exits_2_and_an_unknown_readme_gets_a_note(tmp_path: Path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[[hand]]\npath = "x.phh"\nkind = "lucky"\n')
    hands = tmp_path / "hands"
    hands.mkdir()
    shutil.copy(_shared() / HALF_CHIPS[0], hands / "0.phh")
    done = _cli("--expected", bad, hands)
    assert done.returncode == 2 and "hand 1 (x.phh): kind must be one of half_chip" in done.stderr, done.stderr
    assert _cli("--expected", tmp_path / "missing.toml", hands).returncode == 2
    # a README that speaks of finishing_stacks, none of whose expectations are known
    (hands / "README.md").write_text("These hands match their finishing_stacks, except 0.phh.\n")
    noted = _cli(hands)
    assert noted.returncode == 1 and "mismatch" in noted.stdout
    assert f"{hands.resolve() / 'README.md'} may list expected results" in noted.stderr, noted.stderr
