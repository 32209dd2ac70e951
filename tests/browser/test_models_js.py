"""The page's game state (clients/web/js/games/*.js), kept event by event, against the engines' own
``view()``: after every step of whole matches, the fields the page draws must equal the engine's
view for the same viewer (seat 1 and a spectator)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cardhall.engine.base import Event
from cardhall.engine.play import seat_bots
from cardhall.engine.registry import engine_class
from cardhall.engine.rng import FairRandom

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

#: game -> (seats, options, the view fields the page keeps and draws)
FIELDS: dict[str, tuple[int, dict[str, Any], list[str]]] = {
    "no_limit_holdem": (4, {"starting_stacks": 300, "blind_levels": 2},
                        ["stacks", "pot", "board", "folded", "all_in", "hole", "button", "players", "bets", "shown",
                         "stakes", "level", "small_blind", "big_blind", "hand"]),
    "fixed_limit_holdem": (3, {"starting_stacks": 80},
                           ["stacks", "pot", "board", "folded", "all_in", "hole", "button", "players", "bets", "shown",
                            "stakes", "hand"]),
    # Alamo's bets stay in view until the next card is turned (the engine's view drops them at the
    # round's end, which no event marks): not compared
    "alamo": (3, {}, ["stacks", "pot", "face_down", "board", "folded", "shown", "my_cards", "dealer", "players",
                      "hand", "ante"]),
    "loco_poker": (4, {"points_to_win": 2}, ["points", "board", "players", "in_hand", "folded", "all_in", "callers",
                                             "shown", "hole_cards", "alive", "dealer", "hand"]),
    "avalanche": (3, {}, ["hand_sizes", "deck", "stored", "neutral", "out", "hand", "avalanche", "dealer"]),
}
SETTLED = ("board", "shown", "my_cards", "folded", "players", "ante")
MODULE = {"no_limit_holdem": "holdem", "fixed_limit_holdem": "holdem", "alamo": "alamo", "loco_poker": "loco",
          "avalanche": "avalanche"}



def normal(game: str, name: str, value: Any) -> Any:
    """One field as the page keeps it (zero bets left out; an empty hand is no hand)."""
    value = json.loads(json.dumps(value))
    if name == "bets" and isinstance(value, dict):
        return {k: v for k, v in value.items() if v}
    if name in ("hole", "my_cards", "hole_cards", "hand") and value in (None, []) and game != "no_limit_holdem":
        return None
    if name in ("folded", "all_in", "in_hand", "callers", "alive", "out") and isinstance(value, list):
        return sorted(value)
    return value


def steps(game: str, viewer: int | None, seed: str) -> list[dict[str, Any]]:
    """A whole match: per engine step, the events ``viewer`` got and the engine's view after it."""
    n, options, fields = FIELDS[game]
    engine = engine_class(game).new(list(range(1, n + 1)), options, FairRandom(f"model/{game}/{seed}".encode()))
    bots = seat_bots(game, n, FairRandom(f"model-bots/{seed}".encode()), "random")
    out = []

    def record(events: list[Event]) -> None:
        view = engine.view(viewer)
        if game == "alamo" and not view["hole_cards"]:
            # between hands the page keeps the last hand's board, shown and folded hands in view
            # (the engine's view clears them when the hand is settled): compared while a hand is on
            view = {k: v for k, v in view.items() if k not in SETTLED}
        if game in ("no_limit_holdem", "fixed_limit_holdem") and viewer is not None and "hole" not in view:
            view["hole"] = None
        out.append({"events": json.loads(json.dumps([e.view(viewer) for e in events])),
                    "view": {f: normal(game, f, view.get(f)) for f in fields if f in view},
                    "snapshot": json.loads(json.dumps(engine.view(viewer)))})

    record(engine.start())
    while not engine.finished:
        seat = engine.to_act
        if seat is not None:
            legal = [a.to_data() for a in engine.legal_actions()]
            record(engine.apply(seat, bots[seat].choose(engine.view(seat), legal)))
        else:
            record(engine.advance())
        assert len(out) < 20_000
    return out


@pytest.mark.parametrize("viewer", [1, None])
@pytest.mark.parametrize("game", list(FIELDS))
@pytest.mark.parametrize("seed", ["a", "b"])
async def test_page_state_follows_the_engine_view(page: Any, game: str, viewer: int | None, seed: str) -> None:
    data = steps(game, viewer, seed)
    fields = FIELDS[game][2]
    result = await page.evaluate("""async ([module, data, fields, you, game]) => {
      const g = (await import(`/web/js/games/${module}.js`)).default;
      const norm = (name, v) => {
        v = v === undefined ? null : JSON.parse(JSON.stringify(v));
        if (name === "bets" && v) v = Object.fromEntries(Object.entries(v).filter(([, x]) => x));
        if (["hole", "my_cards", "hole_cards", "hand"].includes(name) && (v === null || (Array.isArray(v) && !v.length)) && game !== "no_limit_holdem") v = null;
        if (["folded", "all_in", "in_hand", "callers", "alive", "out"].includes(name) && Array.isArray(v)) v = [...v].sort((a, b) => a - b);
        return v;
      };
      // from the first event, and from snapshots taken a third and two thirds into the match
      // (a page that joins mid-match starts from the snapshot's state)
      const starts = [0, Math.floor(data.length / 3), Math.floor((2 * data.length) / 3)];
      for (const start of starts) {
      let state = null;
      for (let i = start; i < data.length; i++) {
        if (i === start && start > 0) state = g.fromView(data[i].snapshot);
        else for (const e of data[i].events) {
          if (e.type === g.firstEvent) state = g.init(e);
          if (state) g.reduce(state, e, you);
        }
        for (const f of fields) {
          if (!(f in data[i].view)) continue;
          const mine = JSON.stringify(norm(f, state[f]));
          const theirs = JSON.stringify(data[i].view[f]);
          if (mine !== theirs) return {start, step: i, field: f, page: mine, engine: theirs, events: data[i].events};
        }
      }
      }
      return {steps: data.length};
    }""", [MODULE[game], data, fields, viewer, game])
    assert "field" not in result, result
    assert result["steps"] == len(data) > 5
