"""``cardhall simulate``: whole matches played by bots, with a conservation check.

``cardhall simulate --game GAME --players N --matches M [--seed S] [--bot NAME] [--json]``

Every match is played by :func:`cardhall.engine.play.play_match`; after the start and
after every step the engine's ``audit()`` must count every chip (or every card
of the deck) where it belongs. Per match it prints the hands played (or turns,
for Avalanche), the winner(s), the final stacks, points or stored piles, and the
audit. Exit status 1 on any violation or unfinished match. ``--seed`` makes a
run reproducible (every generator derives from it); without it the seed comes
from the OS CSPRNG and is printed so the run can be repeated.
"""

from __future__ import annotations

import argparse
import json
import secrets
import sys
from typing import Any

from cardhall.engine.bots.registry import BOTS
from cardhall.engine.play import new_match, play_match, seat_bots
from cardhall.engine.registry import GAMES, engine_class
from cardhall.engine.rng import FairRandom


def register(subparsers: Any) -> None:
    """Add ``simulate`` to ``subparsers``."""
    parser = subparsers.add_parser(
        "simulate", help="play whole matches with bots and check conservation",
        description="Play whole matches between bots; after the start and after every step the engine's audit "
        "must count every chip (or card) where it belongs. One line per match: hands (or turns), winners, final "
        "stacks or points, the audit. Exit status 1 on any violation or unfinished match, 2 for a bad argument.")
    parser.add_argument("--game", required=True, choices=sorted(GAMES))
    parser.add_argument("--players", type=int, default=3, help="seats 1..N (default 3)")
    parser.add_argument("--matches", type=_at_least_one, default=10, help="matches to play (default 10)")
    parser.add_argument("--seed", help="make the run reproducible")
    parser.add_argument("--bot", default="random",
                        help="bot in every seat: 'random' (default), a strategy name, or 'default' for the game's own")
    parser.add_argument("--json", action="store_true", help="one JSON object per match")
    parser.set_defaults(func=run)


def _at_least_one(text: str) -> int:
    """``text`` as an int >= 1 (argparse reports anything else as a usage error, status 2)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def final_standing(engine: Any, result: dict[str, Any] | None) -> dict[str, int]:
    """What each seat ends with: chips or cards behind (``stacks()``), else the
    result's stored piles (Avalanche) or points (Loco Poker)."""
    if hasattr(engine, "stacks"):
        return {str(seat): amount for seat, amount in engine.stacks().items()}
    for key in ("stacks", "stored", "points"):
        if result and key in result:
            return {str(seat): amount for seat, amount in result[key].items()}
    return {}


def simulate_match(game: str, players: int, seed: str, index: int, bot: str | None) -> dict[str, Any]:
    """Play match ``index`` of a run and return its report (plain data)."""
    root = FairRandom(f"cardhall/simulate/{seed}/{game}/{players}/{index}".encode())
    violations: list[dict[str, Any]] = []
    audits = 0

    def observe(engine: Any) -> None:
        nonlocal audits
        audit = engine.audit()
        audits += 1
        if audit["counted"] != audit["expected"] and len(violations) < 5:
            violations.append({"step": audits - 1, **audit})

    engine = new_match(game, players, root.spawn("match"))
    run = play_match(engine, seat_bots(game, players, root.spawn("bots"), bot), observe=observe)
    last = engine.audit()
    report: dict[str, Any] = {
        "game": game, "match": index + 1, "players": players,
        "finished": run.finished,
        "hands": run.hands, "turns": run.decisions,
        "winners": run.result["winners"] if run.result else [],
        "final": final_standing(engine, run.result),
        "conservation": {"unit": last["unit"], "expected": last["expected"], "counted": last["counted"],
                         "checks": audits, "violations": violations},
    }
    if run.result and "loser" in run.result:
        report["loser"] = run.result["loser"]
    return report


def run(args: argparse.Namespace) -> int:
    """Play ``args.matches`` matches and print their reports; returns the exit status
    (0 all conserved and finished, 1 otherwise, 2 for a player count or bot the game does not have)."""
    if args.players < engine_class(args.game).min_seats or args.players > engine_class(args.game).max_seats:
        cls = engine_class(args.game)
        print(f"cardhall simulate: {args.game} takes {cls.min_seats} to {cls.max_seats} players", file=sys.stderr)
        return 2
    bot = None if args.bot == "default" else args.bot
    if bot is not None and bot not in BOTS[args.game]:
        print(f"cardhall simulate: no bot {bot!r} for {args.game} (have: {', '.join(sorted(BOTS[args.game]))})",
              file=sys.stderr)
        return 2
    seed = args.seed if args.seed is not None else secrets.token_hex(8)
    if args.seed is None and not args.json:
        print(f"seed {seed}")
    bad = 0
    for index in range(args.matches):
        report = simulate_match(args.game, args.players, seed, index, bot)
        failed = not report["finished"] or bool(report["conservation"]["violations"])
        bad += failed
        if args.json:
            print(json.dumps(report, sort_keys=True))
            continue
        played = f"{report['hands']} hands" if report["hands"] is not None else f"{report['turns']} turns"
        final = " ".join(f"{seat}:{amount}" for seat, amount in sorted(report["final"].items(), key=lambda kv: int(kv[0])))
        audit = report["conservation"]
        check = "ok" if not audit["violations"] else f"VIOLATION x{len(audit['violations'])}"
        winners = ",".join(map(str, report["winners"])) or "-"
        print(f"match {report['match']:>4}: {played:>12}  winner(s) {winners:<6} final {final}  "
              f"conservation {audit['counted']}/{audit['expected']} {audit['unit']} over {audit['checks']} checks: {check}"
              + ("" if report["finished"] else "  UNFINISHED"))
    if not args.json:
        print(f"{args.matches} matches, {bad} with violations or unfinished")
    return 1 if bad else 0
