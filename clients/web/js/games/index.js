// The five games of protocol v1 as the page draws them.

import holdem from "./holdem.js";
import alamo from "./alamo.js";
import loco from "./loco.js";
import avalanche from "./avalanche.js";
import { gameEntry } from "../catalogue.js";

// How the page draws and describes each game. Which games the server runs, their titles, seats,
// options and bots come from the server's catalogue (GET /api/games, catalogue.js); `featured`
// names the options the lobby shows at once (the others are under "More options"), `labels` gives
// them short labels (default: the option's name; its one-line meaning is the field's hint).

export const GAMES = {
  no_limit_holdem: {
    module: holdem, featured: ["starting_stacks", "small_blind", "big_blind", "blind_levels"],
    blurb: "Texas Hold'em, bet any amount up to your stack; blinds double every 15 hands.",
  },
  fixed_limit_holdem: {
    module: holdem, featured: ["starting_stacks", "small_blind", "big_blind", "small_bet", "big_bet"],
    blurb: "Texas Hold'em with fixed bets and four bets a round.",
  },
  alamo: {
    module: alamo, featured: ["preflop_betting", "max_hands"],
    blurb: "Hold'em where your cards are your chips: win every card.",
  },
  loco_poker: {
    module: loco, featured: ["points_to_win", "multi_call"],
    blurb: "No chips: check, fold or go all-in. Win an uncalled all-in for a point; lose a called one and you are out.",
  },
  avalanche: {
    module: avalanche, featured: ["decks"],
    blurb: "Grow the avalanche, stop it, or let it fall on your neighbour; most stored cards wins.",
  },
};

/** Short labels of options (game and table); the others show their name. */
export const LABELS = {
  starting_stacks: "Starting stack", small_blind: "Small blind", big_blind: "Big blind",
  blind_levels: "Hands per blind level (0: never up)", small_bet: "Small bet", big_bet: "Big bet", cap: "Bets per round",
  ante: "Ante", big_blind_ante: "Big blind ante", min_bet: "Minimum bet", button: "First button (seat)",
  item_stakes: "Item stakes", preflop_betting: "Betting before the flop", max_hands: "Hands at most (blank: play to the end)",
  jokers: "Jokers", dealer: "First dealer (seat)", points_to_win: "Points to win", multi_call: "Several callers",
  decks: "Decks", action_clock: "Action clock (s)", time_bank: "Time bank (s)", bot_think: "Bot thinking time (s)",
  pause: "Pause between streets (s)", close_after: "Close when idle after (s)", auto_rematch: "Bots rematch by themselves",
};

/** Labels of choice values where the raw value says too little. */
export const CHOICE_LABELS = {
  multi_call: { best_hand: "one showdown (best hand)", duels: "duels" },
  decks: { 2: "2 (110 cards)", 3: "3 (165 cards)" },
};

/** What the page knows of `game`: its drawing (`module`, `blurb`, `featured`) and, once the catalogue
 * is loaded, the server's entry (`title`, `seats`, `options`, `bots`, `default_bot`). */
export function gameInfo(game) {
  const entry = gameEntry(game);
  const local = GAMES[game] || { module: null, featured: [], blurb: "" };
  return { title: game, seats: null, options: [], bots: [], default_bot: null, ...local, ...(entry || {}) };
}
