"""``cardhall bench engine``, part 1: the pokerkit comparisons measure the very same hands.

The like-for-like figure lets pokerkit play our deals itself, choosing by our
rule from its own legal-action queries; it is only honest if pokerkit then
offers the same choices as our engine at every decision and plays the same
hands. These tests check that on the benchmark's own setups.
"""

from __future__ import annotations

from typing import Any

import pytest

from cardhall.clients.bench import pokerkit_ref  # pokerkit is a test dependency
from cardhall.clients.bench.engine import hand_options, hands_figure, random_action
from cardhall.engine.registry import engine_class
from cardhall.engine.rng import FairRandom

HANDS = 40


def recording_chooser(rng: FairRandom, seen: list[Any]):
    def choose(legal: list[Any]) -> dict[str, Any]:
        action = random_action(legal, rng)
        seen.append(([a.to_data() for a in legal], action))
        return action

    return choose


@pytest.mark.parametrize("game", ["fixed_limit_holdem", "no_limit_holdem"])
@pytest.mark.parametrize("players", [2, 6])
def test_pokerkit_self_play_offers_our_legal_actions_and_plays_our_hands(game, players):
    cls = engine_class(game)
    root = FairRandom(f"test-bench/{game}/{players}".encode())
    template = None
    for i in range(HANDS):
        options = hand_options(game, players, root.spawn(f"options/{i}"))
        ours: list[Any] = []
        choose = recording_chooser(root.spawn(f"choose/{i}"), ours)
        engine = cls.new(list(range(1, players + 1)), options, root.spawn(f"deal/{i}"))
        engine.start()
        while not (engine.finished or engine.pending == "hand"):
            if engine.to_act is None:
                engine.advance()
            else:
                engine.apply(engine.to_act, choose(engine.legal_actions()))
        if template is None:
            template = {**engine.hand_record(), "starting_stacks": [1] * players}
            game_obj = pokerkit_ref.PokerkitHand.self_play_game(template)

        theirs: list[Any] = []
        choose = recording_chooser(root.spawn(f"choose/{i}"), theirs)
        hand = pokerkit_ref.PokerkitHand(game=game_obj, starting_stacks=options["starting_stacks"])
        deck = engine.hand.deck  # the deck our engine dealt from
        stacks = hand.play_dealt(deck, choose)

        assert theirs == ours, f"hand {i}: pokerkit's choices differ from ours"
        assert stacks == [engine.stacks()[s] for s in range(1, players + 1)], f"hand {i}"


@pytest.mark.parametrize("game", ["fixed_limit_holdem", "no_limit_holdem"])
def test_hands_figure_reports_both_pokerkit_ratios_on_the_same_hands(game):
    # play_pokerkit_hand shuffles its own deal generator: identical stacks in
    # every hand mean it dealt our cards and made our choices
    fig = hands_figure(game, 3, 20, seed="test")
    assert fig.disagreements == 0 and fig.self_play_disagreements == 0
    assert fig.pokerkit_per_s and fig.pokerkit_self_play_per_s
    assert fig.ratio == pytest.approx(fig.ours_per_s / fig.pokerkit_per_s)
    assert fig.self_play_ratio == pytest.approx(fig.ours_per_s / fig.pokerkit_self_play_per_s)

