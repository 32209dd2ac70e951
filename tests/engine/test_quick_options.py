"""Every registered game's quick options (``GameSpec.quick_options``, what the
tests that play every game create their tables with) are options a table of
the game takes, checked as ``create_table`` checks them
(:func:`cardhall.server.creation.check`), and a match played with them by the
game's default bots at any number of seats ends within :data:`STEP_LIMIT`
steps of its table. The built-in games and the test toy (High Card, registered
by the ``toy`` fixture)."""

from __future__ import annotations

import pytest

from cardhall.engine import plugins
from cardhall.server.creation import check
from cardhall.server.options import split_options
from cardhall.server.table.inputs import Start
from tests.games import GAMES, builtin_games, quick
from tests.server.table.harness import Bench
from tests.toygame.conftest import toy  # noqa: F401 (the fixture: High Card registered for a test)

#: the toy game's name (its module declares it; the ``toy`` fixture registers it)
TOY = plugins.load_module("tests.toygame")[0].name
#: the most table steps (a bot's action, a dealer step) a quick match may take: the longest
#: built-in one takes about 400 (no-limit Hold'em, 8 seats)
STEP_LIMIT = 2000


def test_the_games_played_are_the_built_in_ones_in_catalogue_order(request):
    spec = request.getfixturevalue("toy")
    assert spec.name == TOY and TOY in plugins.games() and TOY not in GAMES
    assert builtin_games() == GAMES == [name for name in plugins.games() if name != TOY]
    assert quick(TOY, hands=1) == {**spec.quick_options, "hands": 1}


@pytest.mark.parametrize("game", [*GAMES, TOY])
def test_quick_options_are_taken_and_a_match_with_them_ends(request, game):
    if game == TOY:
        request.getfixturevalue("toy")
    spec = plugins.spec(game)
    cls = spec.engine_class()
    for seats in range(cls.min_seats, cls.max_seats + 1):
        name, n, table_opts, game_opts, bots = check({"game": game, "seats": seats, "bots": seats,
                                                      "options": quick(game)})
        assert (name, n, table_opts) == (game, seats, split_options({})[0])
        assert game_opts == dict(spec.quick_options)  # game options all: none is a table option
        bench = Bench(game, seats=n, bots=bots, options=game_opts)
        bench.step(Start())  # a bots-only table starts at once (G-9)
        for _ in range(STEP_LIMIT):
            if any(r.event.type == "match_ended" for r in bench.records):
                break
            bench.fire()
        else:
            pytest.fail(f"{game}, {seats} seats: no match_ended within {STEP_LIMIT} steps")
