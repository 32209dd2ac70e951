"""Monte Carlo hand equity for the poker bots (Hold'em, Loco Poker, Alamo).

``equity(hole, board, opponents, samples, rng)`` estimates the share of the
pot that ``hole`` wins at showdown against ``opponents`` random hands, the
rest of the board dealt at random from the cards nobody has seen. Hands are
ranked by eval7 through :mod:`cardhall.engine.ranking`; randomness comes only from the
bot's injected :class:`cardhall.engine.rng.FairRandom` (RULES G-2: never ``random``).

Speed: cards are converted to eval7 objects once per call, each sample draws
only the cards it needs by a partial Fisher-Yates shuffle of the unseen cards,
and random indices come from the generator's byte stream one byte per draw
(rejection sampling keeps every draw exactly uniform). 200 samples against
one to three opponents cost about a millisecond (``benchmark()`` prints it).

>>> from cardhall.engine.rng import FairRandom
>>> equity(["Ah", "Kh"], ["Qh", "Jh", "Th", "2c", "3d"], 3, 50, FairRandom(b"doc"))
1.0
>>> 0.8 < equity(["Ac", "Ad"], [], 1, 2000, FairRandom(b"doc")) < 0.9
True
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import eval7

from cardhall.engine.cards import standard_deck
from cardhall.engine.ranking import eval7_cards
from cardhall.engine.rng import FairRandom

_DECK = standard_deck()
_BOARD_SIZE = 5

#: for each n in 1..52, the largest multiple of n that fits in a byte: a byte
#: b < _LIMIT[n] gives the uniform index b % n; larger bytes are redrawn.
_LIMIT = [0] + [256 - 256 % n for n in range(1, 53)]


def equity(
    hole: Sequence[str],
    board: Sequence[str],
    opponents: int,
    samples: int,
    rng: FairRandom,
    dead: Sequence[str] = (),
) -> float:
    """Estimated showdown share of ``hole`` in ``[0, 1]``.

    ``hole``: the player's two hole cards; ``board``: 0 to 5 board cards
    dealt so far; ``opponents``: how many opponents hold unknown random hands
    (0 gives 1.0); ``samples``: Monte Carlo deals (>= 1); ``dead``: other
    cards known to be out of play (burns seen, folded cards shown), never dealt
    to an opponent or the board. A sample won outright counts 1, a tie among
    ``k`` best hands counts ``1/k``, a loss 0; the result is the mean.

    Raises ValueError for a repeated card, more than 5 board cards, too few
    cards left to deal, or ``samples < 1``; KeyError for a malformed card.
    """
    if samples < 1:
        raise ValueError("samples must be >= 1")
    if len(board) > _BOARD_SIZE:
        raise ValueError("a board has at most 5 cards")
    known = [*hole, *board, *dead]
    if len(set(known)) != len(known):
        raise ValueError(f"repeated card among {known}")
    hero = eval7_cards(hole)
    shown = eval7_cards(board)
    if opponents <= 0:
        return 1.0
    seen = set(known)
    unseen = eval7_cards([c for c in _DECK if c not in seen])
    missing = _BOARD_SIZE - len(board)
    need = missing + 2 * opponents
    n = len(unseen)
    if need > n:
        raise ValueError(f"{need} cards needed, {n} left")

    evaluate = eval7.evaluate
    read = rng.read
    limits = _LIMIT
    buf = read(need * samples * 9 // 8 + 64)
    end = len(buf)
    plan = [(i, n - i, limits[n - i]) for i in range(need)]
    pos = 0
    total = 0.0
    for _ in range(samples):
        # partial Fisher-Yates: unseen[0:need] becomes a uniform random draw
        for i, span, limit in plan:
            if pos == end:
                buf, end, pos = read(need * 8 + 64), need * 8 + 64, 0
            b = buf[pos]
            pos += 1
            while b >= limit:
                if pos == end:
                    buf, end, pos = read(need * 8 + 64), need * 8 + 64, 0
                b = buf[pos]
                pos += 1
            j = i + b % span
            unseen[i], unseen[j] = unseen[j], unseen[i]
        full = shown + unseen[:missing]
        mine = evaluate(hero + full)
        best = 0
        ties = 1
        k = missing
        for _opp in range(opponents):
            value = evaluate(unseen[k : k + 2] + full)
            k += 2
            if value > best:
                best = value
                ties = 1
            elif value == best:
                ties += 1
            if best > mine:
                break
        if mine > best:
            total += 1.0
        elif mine == best:
            total += 1.0 / (ties + 1)
    return total / samples


def benchmark(samples: int = 200, repeats: int = 200) -> dict[str, float]:
    """Milliseconds per :func:`equity` call (preflop, ``samples`` deals) against
    1, 3 and 5 opponents; prints and returns ``{"opponents=k": ms}``."""
    rng = FairRandom(b"equity-benchmark")
    out: dict[str, float] = {}
    for opponents in (1, 3, 5):
        start = time.perf_counter()
        for _ in range(repeats):
            equity(["Ah", "Kd"], [], opponents, samples, rng)
        out[f"opponents={opponents}"] = (time.perf_counter() - start) * 1000 / repeats
    for name, ms in out.items():
        print(f"equity {samples} samples, {name}: {ms:.3f} ms")
    return out


if __name__ == "__main__":
    benchmark()
