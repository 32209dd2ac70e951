"""``cardhall simulate``: whole matches, a conservation check, reproducible seeds."""

from __future__ import annotations

import json

import pytest

from cardhall.clients.cli import main
from cardhall.engine.registry import engine_class
from tests.games import GAMES


def run_json(capsys, *argv: str) -> tuple[int, list[dict]]:
    status = main(["simulate", *argv, "--json"])
    lines = capsys.readouterr().out.strip().splitlines()
    return status, [json.loads(line) for line in lines]


@pytest.mark.parametrize("game", GAMES)
def test_every_game_plays_whole_matches_with_nothing_lost(capsys, game):
    status, reports = run_json(capsys, "--game", game, "--players", "3", "--matches", "3", "--seed", "t")
    assert status == 0
    assert len(reports) == 3
    for report in reports:
        assert report["finished"] and report["winners"]
        audit = report["conservation"]
        assert audit["violations"] == [] and audit["counted"] == audit["expected"] and audit["checks"] > 1


def test_seed_makes_a_run_reproducible(capsys):
    first = run_json(capsys, "--game", "avalanche", "--players", "4", "--matches", "2", "--seed", "same")
    again = run_json(capsys, "--game", "avalanche", "--players", "4", "--matches", "2", "--seed", "same")
    other = run_json(capsys, "--game", "avalanche", "--players", "4", "--matches", "2", "--seed", "other")
    assert first == again
    assert first != other


def test_a_conservation_violation_fails_the_run(capsys, monkeypatch):
    cls = engine_class("loco_poker")
    honest = cls.audit
    monkeypatch.setattr(cls, "audit", lambda self: {**honest(self), "counted": 51})
    status, reports = run_json(capsys, "--game", "loco_poker", "--players", "2", "--matches", "1", "--seed", "v")
    assert status == 1
    assert reports[0]["conservation"]["violations"]


def test_text_output_names_hands_winners_and_the_check(capsys):
    assert main(["simulate", "--game", "loco_poker", "--players", "3", "--matches", "2", "--seed", "x"]) == 0
    out = capsys.readouterr().out
    assert "hands" in out and "winner(s)" in out and "conservation 52/52 cards" in out
    assert "2 matches, 0 with violations" in out


def test_players_out_of_range_is_refused(capsys):
    assert main(["simulate", "--game", "avalanche", "--players", "9", "--matches", "1"]) == 2
