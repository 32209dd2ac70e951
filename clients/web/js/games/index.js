// The five games of protocol v1: names, seat ranges, bot strategies and the options the lobby
// offers (engine default_options; engine/bots/registry.py). The server checks every option.

import holdem from "./holdem.js";
import alamo from "./alamo.js";
import loco from "./loco.js";
import avalanche from "./avalanche.js";

const num = (name, label, value, min, max, step = 1) => ({ name, label, type: "number", value, min, max, step });

export const GAMES = {
  no_limit_holdem: {
    title: "No-limit Hold'em", module: holdem, seats: [2, 9], defaultSeats: 6, bots: ["equity", "random"],
    blurb: "Texas Hold'em, bet any amount up to your stack; blinds double every 15 hands.",
    options: [num("starting_stacks", "Starting stack", 1000, 1, 1e9), num("small_blind", "Small blind", 10, 1, 1e9),
      num("big_blind", "Big blind", 20, 1, 1e9), num("blind_levels", "Hands per blind level (0: never up)", 15, 0, 1000)],
  },
  fixed_limit_holdem: {
    title: "Fixed-limit Hold'em", module: holdem, seats: [2, 6], defaultSeats: 6, bots: ["equity", "random"],
    blurb: "Texas Hold'em with fixed bets and four bets a round.",
    options: [num("starting_stacks", "Starting stack", 500, 1, 1e9), num("small_blind", "Small blind", 5, 1, 1e9),
      num("big_blind", "Big blind", 10, 1, 1e9), num("small_bet", "Small bet", 10, 1, 1e9), num("big_bet", "Big bet", 20, 1, 1e9)],
  },
  alamo: {
    title: "Alamo", module: alamo, seats: [2, 3], defaultSeats: 2, bots: ["equity", "random"],
    blurb: "Hold'em where your cards are your chips: win every card.",
    options: [{ name: "preflop_betting", label: "Betting before the flop", type: "checkbox", value: false },
      num("max_hands", "Hands at most (blank: play to the end)", "", 1, 10000)],
  },
  loco_poker: {
    title: "Loco Poker", module: loco, seats: [2, 8], defaultSeats: 4, bots: ["threshold", "random"],
    blurb: "No chips: check, fold or go all-in. Win an uncalled all-in for a point; lose a called one and you are out.",
    options: [num("points_to_win", "Points to win", 3, 1, 100),
      { name: "multi_call", label: "Several callers", type: "select", value: "best_hand", choices: [["best_hand", "one showdown (best hand)"], ["duels", "duels"]] }],
  },
  avalanche: {
    title: "Avalanche", module: avalanche, seats: [2, 8], defaultSeats: 4, bots: ["heuristic", "random"],
    blurb: "Grow the avalanche, stop it, or let it fall on your neighbour; most stored cards wins.",
    options: [{ name: "decks", label: "Decks", type: "select", value: "", choices: [["", "by players"], ["2", "2 (110 cards)"], ["3", "3 (165 cards)"]] }],
  },
};

export const TABLE_OPTIONS = [
  num("action_clock", "Action clock (s)", 30, 0.05, 3600, "any"),
  num("time_bank", "Time bank (s)", 60, 0, 3600, "any"),
  num("bot_think", "Bot thinking time (s)", 0.5, 0, 30, "any"),
  num("pause", "Pause between streets (s)", 1, 0, 60, "any"),
];

export function gameInfo(game) {
  return GAMES[game] || { title: game, module: null, seats: [2, 9], bots: [], options: [] };
}
