"""``cardhall bench engine``: how fast the rules engines are, and how well the bots play.

A benchmark, not a test: it measures and prints figures. Three parts, each on one core in this process, timed in CPU seconds
(``time.process_time``, so other work on a shared machine does not count):

1. **Hold'em hands against pokerkit.** For each Hold'em game at 2 and 6
   players: ``--hands`` hands with random legal actions (a uniform choice of
   action, then of amount) and random unequal stacks, each hand a fresh
   engine under the ``phh`` profile. The sides are timed interleaved: the
   hands in 10 chunks, each chunk run by every side in turn, each side's CPU
   seconds summed, so a shared machine's changing speed falls on all alike. Prints our hands/s (each decision: ask
   the legal actions, choose, apply) and two pokerkit 0.7.7 figures with
   their ratios (ours / pokerkit; target: 20x or better):

   * **pokerkit replay**: pokerkit replays the very same hands from our
     ``hand_record()`` (same cards, the recorded actions as PHH strings). It
     asks nothing and chooses nothing, so it does less than our side.
   * **pokerkit self-play** (like for like): pokerkit plays the same deals
     itself, each decision chosen by the same rule and generator as ours
     from pokerkit's own legal-action queries
     (``PokerkitHand.legal_actions``), so it plays the very same hands.

   Plus how many hands ended with different stacks than ours (``differ``:
   replay/self-play, should be 0/0), and the hands/s of our own PHH replay
   driver on the same hands.
2. **Whole matches/s** of every game (``--games``), ``random`` bots in every
   seat, default options: matches/s, hands/s and decisions/s.
3. **Bots' win rates**: each game's default bot in one seat against
   ``random`` bots over ``--matches`` matches (the bot's seat cycles so
   position evens out; a shared win counts 1/k), with a 95% Wilson interval
   and the fair share 1/players (``cardhall.engine.play.win_rate``).

4. **``cardhall phh replay`` against pokerkit, whole process**
   (``--phh-hands``, default 600; ``--no-phh-replay`` skips it): that many
   random hands of part 1's kind (FL and NL, 2 to 6 players) written as
   ``.phh`` files, replayed by ``<python> -m cardhall.clients.cli phh replay
   FILES`` and by a small pokerkit script reading the same files, each a
   child process run 3 times, interleaved, after one untimed run of each
   (both with their bytecode cached in the same temporary folder); the figure
   is the median ratio of the children's CPU seconds
   (:mod:`cardhall.clients.bench.replay_bench`).

At the end, a summary table: each figure of this run beside its target.
Games whose engine does not import yet are skipped with a note.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from cardhall.engine.base import Engine
from cardhall.engine.cards import standard_deck
from cardhall.engine.play import WinRate, new_match, play_match, seat_bots, win_rate
from cardhall.engine.registry import GAMES, engine_class
from cardhall.engine.rng import FairRandom

#: the games part 1 compares with pokerkit (its Hold'em variants)
HOLDEM = ("fixed_limit_holdem", "no_limit_holdem")
#: players per match in parts 2 and 3, or the game's bounds when it seats fewer or needs more
PLAYERS = 3
HAND_TABLES = (2, 6)


def match_players(game: str) -> int:
    """Players per match of ``game`` in parts 2 and 3: :data:`PLAYERS` within the
    engine's ``min_seats``..``max_seats``."""
    cls = engine_class(game)
    return max(cls.min_seats, min(cls.max_seats, PLAYERS))

def load_engine(game: str) -> type[Engine] | None:
    """The engine class of ``game``, or None (with a note on stderr) when it does not import yet."""
    try:
        return engine_class(game)
    except ImportError as exc:
        print(f"note: skipping {game}: its engine is not available ({exc})", file=sys.stderr)
        return None


# -- whole matches (the shared driver: engine.play) ------------------------------------
@dataclass
class Throughput:
    """Whole matches with ``random`` bots in every seat (CPU seconds)."""

    game: str
    players: int
    matches: int
    seconds: float
    matches_per_s: float
    hands_per_s: float | None
    decisions_per_s: float
    unfinished: int


def match_throughput(game: str, players: int, matches: int, seed: str = "bench") -> Throughput:
    """Play ``matches`` whole matches of ``game`` with random bots and time them."""
    root = FairRandom(f"cardhall-bench/{seed}/{game}/throughput".encode())
    hands = decisions = unfinished = 0
    counted = True
    start = time.process_time()
    for m in range(matches):
        run = play_match(new_match(game, players, root.spawn(f"match/{m}")),
                         seat_bots(game, players, root.spawn(f"bots/{m}")))
        unfinished += not run.finished
        decisions += run.decisions
        if run.hands is None:
            counted = False
        else:
            hands += run.hands
    seconds = time.process_time() - start
    return Throughput(game, players, matches, seconds, matches / seconds, hands / seconds if counted else None,
                      decisions / seconds, unfinished)


def timed_win_rate(game: str, players: int, matches: int, seed: str = "bench") -> tuple[WinRate, float]:
    """``cardhall.engine.play.win_rate`` of the game's default bot against ``random`` bots, and its CPU seconds."""
    start = time.process_time()
    rate = win_rate(game, players, matches, seed)
    return rate, time.process_time() - start


# -- Hold'em hands against pokerkit ----------------------------------------------------------
def hand_options(game: str, players: int, rng: FairRandom) -> dict[str, Any]:
    """Options for one benchmark hand: ``phh`` profile, blinds 10/20 (FL bets
    20/40), random unequal stacks of 10 to 300 big blinds, button on the last seat."""
    options: dict[str, Any] = {
        "starting_stacks": [20 * (10 + rng.randbelow(291)) for _ in range(players)],
        "small_blind": 10,
        "big_blind": 20,
        "button": players,
        "profile": "phh",
        "blind_levels": None,
    }
    if game == "fixed_limit_holdem":
        options.update(small_bet=20, big_bet=40)
    else:
        options["min_bet"] = 20
    return options


def random_action(legal: Sequence[Any], rng: FairRandom) -> dict[str, Any]:
    """A uniform choice among the legal actions (``LegalAction`` objects), then
    a uniform amount in [min, max] for a bet or raise. Never a fold when
    checking is free (legal under the ``phh`` profile, but pokerkit 0.7.7
    breaks on such folds when they leave only an all-in player)."""
    types = [a.type for a in legal]
    if "check" in types:
        legal = [a for a, t in zip(legal, types) if t != "fold"]
    option = legal[rng.randbelow(len(legal))]
    action: dict[str, Any] = {"type": option.type}
    if option.type in ("bet", "raise"):
        action["amount"] = option.min + rng.randbelow(option.max - option.min + 1)
    return action


def play_random_hand(cls: type[Engine], options: Mapping[str, Any], players: int, deal: FairRandom,
                     choose: FairRandom) -> Engine:
    """One hand (a fresh single-hand match) with random actions; returns the
    engine after the hand (``pending == "hand"`` or finished)."""
    engine = cls.new(list(range(1, players + 1)), options, deal)
    engine.start()
    while True:
        seat = engine.to_act  # None whenever the dealer is pending or the match is over
        if seat is not None:
            engine.apply(seat, random_action(engine.legal_actions(), choose))
        elif engine.finished or engine.pending == "hand":
            return engine
        else:
            engine.advance()


@dataclass
class HandsFigure:
    """Part 1 for one game and table size (hands/s; ratios = ours / pokerkit)."""

    game: str
    players: int
    hands: int
    ours_per_s: float
    replay_per_s: float | None
    pokerkit_per_s: float | None
    ratio: float | None
    disagreements: int | None
    pokerkit_self_play_per_s: float | None = None
    self_play_ratio: float | None = None
    self_play_disagreements: int | None = None


def play_pokerkit_hand(game: Any, options: Mapping[str, Any], deal: FairRandom, choose: FairRandom) -> list[Any]:
    """One hand played by pokerkit itself, like :func:`play_random_hand`: the
    deck shuffled by ``deal`` as our engine shuffles it, every decision by
    :func:`random_action` from pokerkit's own legal actions. ``game``:
    ``pokerkit_ref.PokerkitHand.self_play_game``. Returns the finishing stacks."""
    from cardhall.clients.bench.pokerkit_ref import PokerkitHand

    deck = standard_deck()
    deal.shuffle(deck)
    hand = PokerkitHand(game=game, starting_stacks=options["starting_stacks"])
    return hand.play_dealt(deck, lambda legal: random_action(legal, choose))


#: part 1 times each side in this many chunks of hands, alternating, so both see the same machine speed
CHUNKS = 10


def hands_figure(game: str, players: int, hands: int, seed: str = "bench", with_pokerkit: bool = True) -> HandsFigure:
    """Part 1 for ``game`` at ``players``: our random hands, our PHH replay of
    them, pokerkit's replay of the same hands and pokerkit's own play of the
    same deals. Each side runs the same hands as a whole run would, in
    :data:`CHUNKS` chunks taken in turn (ours, then pokerkit's self-play, our
    replay, pokerkit's replay; every other chunk pokerkit's self-play first),
    and each figure sums its side's CPU seconds over the chunks: a shared
    machine's changing speed falls on both sides alike."""
    from cardhall.engine import phh
    from cardhall.engine.replay import replay_hand

    cls = engine_class(game)
    root = FairRandom(f"cardhall-bench/{seed}/{game}/{players}/hands".encode())
    setups = [hand_options(game, players, root.spawn(f"options/{i}")) for i in range(hands)]
    deals = [root.spawn(f"deal/{i}") for i in range(hands)]
    chooser = root.spawn("choose")
    pk: Any = None
    if with_pokerkit:
        from cardhall.clients.bench import pokerkit_ref

        pokerkit_ref.require()
        pk = pokerkit_ref
        # the same deals and the same chooser stream again (fresh generators, same keys)
        pk_deals = [root.spawn(f"deal/{i}") for i in range(hands)]
        pk_chooser = root.spawn("choose")
        probe = play_random_hand(cls, setups[0], players, root.spawn("deal/0"), root.spawn("probe"))
        template = {**phh.loads(phh.dumps(probe.hand_record() or {})), "starting_stacks": [1] * players}
        game_obj = pokerkit_ref.PokerkitHand.game_for(template)
        self_play = pokerkit_ref.PokerkitHand.self_play_game(template)
    clock = time.process_time
    ours = replay = pk_replay = pk_self = 0.0
    finals: list[list[int]] = []
    replayed = 0
    replay_results: list[Any] = []
    self_results: list[Any] = []
    bounds = [hands * k // CHUNKS for k in range(CHUNKS + 1)]
    for k in range(CHUNKS):
        chunk = range(bounds[k], bounds[k + 1])
        if pk is not None and k % 2:
            start = clock()
            self_results += [play_pokerkit_hand(self_play, setups[i], pk_deals[i], pk_chooser) for i in chunk]
            pk_self += clock() - start
        start = clock()
        records = [play_random_hand(cls, setups[i], players, deals[i], chooser) for i in chunk]
        ours += clock() - start
        records_data = [engine.hand_record() for engine in records]
        finals += [[engine.stacks()[seat] for seat in range(1, players + 1)] for engine in records]  # type: ignore[attr-defined]
        if pk is not None and not k % 2:
            start = clock()
            self_results += [play_pokerkit_hand(self_play, setups[i], pk_deals[i], pk_chooser) for i in chunk]
            pk_self += clock() - start
        texts = [phh.loads(phh.dumps(r)) for r in records_data if r is not None]
        jobs = [(r["starting_stacks"], r["actions"]) for r in records_data if r is not None]
        for side in (0, 1) if k % 2 == 0 else (1, 0):
            if side == 0:
                start = clock()
                for hand in texts:
                    replay_hand(hand)
                replay += clock() - start
                replayed += len(texts)
            elif pk is not None:
                start = clock()
                replay_results += [pk.PokerkitHand(game=game_obj, starting_stacks=s).play(a) for s, a in jobs]
                pk_replay += clock() - start

    figure = HandsFigure(game, players, hands, hands / ours, replayed / replay if replay else None, None, None, None)
    if pk is not None:
        figure.disagreements = sum(1 for a, b in zip(replay_results, finals) if list(a) != b)
        figure.pokerkit_per_s = hands / pk_replay
        figure.ratio = figure.ours_per_s / figure.pokerkit_per_s
        figure.self_play_disagreements = sum(1 for a, b in zip(self_results, finals) if list(a) != b)
        figure.pokerkit_self_play_per_s = hands / pk_self
        figure.self_play_ratio = figure.ours_per_s / figure.pokerkit_self_play_per_s
    return figure


# -- the command -------------------------------------------------------------------------------
def register(subparsers: Any) -> None:
    """Add ``bench engine`` to the ``bench`` subcommand's parsers."""
    parser = subparsers.add_parser(
        "engine",
        help="engine speed (hands/s against pokerkit, matches/s) and the bots' win rates",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--games", default=",".join(GAMES),
                        help="comma-separated games (default: all five)")
    parser.add_argument("--hands", type=int, default=1000, help="random hands per Hold'em game and table size (default 1000)")
    parser.add_argument("--matches", type=int, default=200, help="matches per game for the win rates (default 200)")
    parser.add_argument("--throughput-matches", type=int, default=50,
                        help="random-bot matches per game for matches/s (default 50)")
    parser.add_argument("--seed", default="bench", help="seed of every generator (default 'bench')")
    parser.add_argument("--no-pokerkit", action="store_true", help="skip the pokerkit comparisons (parts 1 and 4)")
    parser.add_argument("--phh-hands", type=int, default=600,
                        help="random hands replayed whole process by us and by pokerkit (default 600)")
    parser.add_argument("--no-phh-replay", action="store_true",
                        help="skip part 4, `cardhall phh replay` against pokerkit")
    parser.add_argument("--json", action="store_true", help="print one JSON object at the end instead of tables")
    parser.set_defaults(func=run)


def _say(args: argparse.Namespace, text: str) -> None:
    if not args.json:
        print(text, flush=True)


def run(args: argparse.Namespace) -> int:
    """Run the three parts for ``args.games``; returns 0 (2 for an unknown game,
    or when the pokerkit comparison is asked for and pokerkit is not installed:
    a one-line hint on stderr)."""
    games = [g.strip() for g in args.games.split(",") if g.strip()]
    unknown = [g for g in games if g not in GAMES]
    if unknown:
        print(f"cardhall bench engine: unknown game(s) {', '.join(unknown)}; choose from {', '.join(GAMES)}",
              file=sys.stderr)
        return 2
    if not args.no_pokerkit and args.hands > 0 and any(g in HOLDEM for g in games):
        from cardhall.clients.bench import pokerkit_ref

        try:
            pokerkit_ref.require()
        except RuntimeError as exc:  # the bench extra is not installed
            print(f"cardhall bench engine: {exc} (or --no-pokerkit to skip the comparison)", file=sys.stderr)
            return 2
    available = [g for g in games if load_engine(g) is not None]
    out: dict[str, Any] = {"hands": [], "matches": [], "win_rates": [], "skipped": sorted(set(games) - set(available)),
                      "skipped_bots": []}

    holdem = [g for g in available if g in HOLDEM]
    if holdem and args.hands > 0:
        _say(args, f"1. Hold'em hands with random actions ({args.hands} per row, phh profile, one core, CPU time)")
        _say(args, "   ours: ask the legal actions, choose, apply; pokerkit replay: pokerkit replays our recorded actions;")
        _say(args, "   pokerkit self-play: pokerkit plays the same deals, choosing by the same rule from its own legal actions")
        _say(args, f"   {'game':<20}{'players':>8}{'ours h/s':>10}{'our replay':>12}"
                   f"{'pokerkit replay h/s':>21}{'ratio':>8}{'pokerkit self-play h/s':>24}{'ratio':>8}{'differ':>12}")
        for game in holdem:
            for players in HAND_TABLES:
                fig = hands_figure(game, players, args.hands, args.seed, not args.no_pokerkit)
                out["hands"].append(asdict(fig))
                differ = "" if fig.disagreements is None else f"{fig.disagreements}/{fig.self_play_disagreements}"
                _say(args, f"   {game:<20}{players:>8}{fig.ours_per_s:>10.0f}{_f(fig.replay_per_s, 12)}"
                           f"{_f(fig.pokerkit_per_s, 21)}{_ratio(fig.ratio, 8)}"
                           f"{_f(fig.pokerkit_self_play_per_s, 24)}{_ratio(fig.self_play_ratio, 8)}{differ:>12}")
    if available and args.throughput_matches > 0:
        _say(args, f"2. Whole matches, random bots in every seat ({args.throughput_matches} per game)")
        _say(args, f"   {'game':<20}{'players':>8}{'matches/s':>11}{'hands/s':>10}{'decisions/s':>13}{'unfinished':>12}")
        for game in available:
            fig2 = match_throughput(game, match_players(game), args.throughput_matches, args.seed)
            out["matches"].append(asdict(fig2))
            _say(args, f"   {game:<20}{fig2.players:>8}{fig2.matches_per_s:>11.1f}{_f(fig2.hands_per_s, 10)}"
                       f"{fig2.decisions_per_s:>13.0f}{fig2.unfinished:>12}")
    if available and args.matches > 0:
        _say(args, f"3. Default bot against random bots ({args.matches} matches per game)")
        _say(args, f"   {'game':<20}{'bot':<11}{'players':>8}{'win rate':>10}{'95% interval':>16}{'fair share':>12}{'s/match':>9}")
        for game in available:
            try:
                rate, seconds = timed_win_rate(game, match_players(game), args.matches, args.seed)
            except ImportError as exc:
                print(f"note: no win rate for {game}: its default bot is not available ({exc})", file=sys.stderr)
                out["skipped_bots"].append(game)
                continue
            out["win_rates"].append({**asdict(rate), "seconds": seconds})
            _say(args, f"   {game:<20}{rate.bot:<11}{rate.players:>8}{rate.rate:>10.3f}"
                       f"{f'[{rate.low:.3f}, {rate.high:.3f}]':>16}{rate.share:>12.3f}"
                       f"{seconds / rate.matches:>9.3f}"
                       + (f"  ({rate.unfinished} unfinished)" if rate.unfinished else ""))
    out["phh_replay"] = None
    if not args.no_pokerkit and not args.no_phh_replay and args.phh_hands > 0:
        from cardhall.clients.bench.replay_bench import replay_figure

        _say(args, f"4. `cardhall phh replay` of {args.phh_hands} random hands, whole process, against a pokerkit "
                   "script on the same files (child CPU seconds, 3 runs interleaved)")
        fig4 = replay_figure(args.phh_hands, 3, args.seed)
        out["phh_replay"] = asdict(fig4)
        _say(args, f"   ours {statistics.median(fig4.ours_cpu):.2f} s CPU ({statistics.median(fig4.ours_wall):.2f} s wall), "
                   f"pokerkit {statistics.median(fig4.pokerkit_cpu):.2f} s CPU "
                   f"({statistics.median(fig4.pokerkit_wall):.2f} s wall): {fig4.ratio:.1f}x"
                   + ("" if fig4.ours_status == 0 else f"  (our replay exited with {fig4.ours_status})"))
    out["summary"] = summary_rows(out)
    _say(args, "")
    _say(args, "| figure | now (this run) | target |")
    _say(args, "| --- | --- | --- |")
    for row in out["summary"]:
        _say(args, f"| {row['figure']} | {row['now']} | {row['target']} |")
    if out["skipped"]:
        _say(args, f"skipped (engine not available): {', '.join(out['skipped'])}")
    if args.json:
        print(json.dumps(out))
    return 0


#: the summary's targets: part 1's self-play ratios (FL 2p, FL 6p, NL 2p, NL 6p) and part 4's ratio
SELF_PLAY_TARGETS = {("fixed_limit_holdem", 2): 8, ("fixed_limit_holdem", 6): 10,
                     ("no_limit_holdem", 2): 14, ("no_limit_holdem", 6): 50}
REPLAY_TARGET = 10


def summary_rows(out: Mapping[str, Any]) -> list[dict[str, str]]:
    """The summary table's two rows (``figure``, ``now``, ``target``) from ``run``'s
    collected figures; a figure not measured in this run shows as ``-``."""
    ratios = {(h["game"], h["players"]): h["self_play_ratio"] for h in out["hands"]}
    now = [ratios.get(key) for key in SELF_PLAY_TARGETS]
    replay = out.get("phh_replay")
    return [
        {"figure": "Hold'em hands/s, ours / pokerkit self-play (FL 2p, FL 6p, NL 2p, NL 6p)",
         "now": ", ".join("-" if r is None else f"{r:.1f}x" for r in now),
         "target": ", ".join(f"{t}x" for t in SELF_PLAY_TARGETS.values())},
        {"figure": "`cardhall phh replay` of 600 random hands, whole process, vs pokerkit",
         "now": "-" if replay is None else f"{replay['ratio']:.1f}x",
         "target": f"{REPLAY_TARGET}x"},
    ]


def _f(value: float | None, width: int, digits: int = 0) -> str:
    return f"{'-':>{width}}" if value is None else f"{value:>{width}.{digits}f}"


def _ratio(value: float | None, width: int) -> str:
    return f"{'-':>{width}}" if value is None else f"{f'{value:.1f}x':>{width}}"


