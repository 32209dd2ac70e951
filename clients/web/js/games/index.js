// How the page draws each game. Which games the server runs, their titles, seats, options and bots
// come from its catalogue (GET /api/games, catalogue.js), and so does how to draw each one: an
// entry's `renderer` is the URL of an ES module whose default export draws the game (games/*.js for
// the built-in games; the module of a game's own registration otherwise). `loadGames()` imports
// them; a game without one, or whose module fails to load, is drawn by the generic renderer
// (generic.js). Nothing here lists the games.
//
// A renderer module's default export: {unit, panel(legal, state, send) (the action panel's contents;
// absent: actions.js's genericPanel), firstEvent (the game event that begins a match's state, null:
// any), init, reduce, fromView, seatView, center, describe, myArea? (the seat's own area under the
// felt), lobby?: {game: {featured: [option names shown at once], blurb}}}. The drawing helpers are
// the client's modules, imported by absolute path by a module served from elsewhere
// (/web/js/dom.js, /web/js/cards.js, /web/js/actions.js, /web/js/games/common.js, generic.js).

import generic from "./generic.js";
import { gameEntry, loadCatalogue } from "../catalogue.js";

/** game -> {module, url} once its renderer loaded */
const renderers = new Map();
let importing = null;

/** Load the catalogue, then import every renderer module it names (once); resolves to the catalogue. */
export async function loadGames() {
  const catalogue = await loadCatalogue();
  if (!importing) {
    importing = Promise.all(catalogue.games.filter((g) => g.renderer).map(async (g) => {
      try {
        const module = (await import(g.renderer)).default;
        if (!module || typeof module.reduce !== "function") throw new Error("its default export is not a renderer");
        renderers.set(g.name, { module, url: g.renderer });
      } catch (err) {
        console.warn(`${g.name}: the renderer ${g.renderer} did not load (${err.message}); drawing the game as data`);
      }
    }));
  }
  await importing;
  return catalogue;
}

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

/** What the page knows of `game`: the server's entry (`title`, `seats`, `options`, `bots`,
 * `default_bot`, `renderer`) and its drawing: `module` (the renderer, or the generic one),
 * `drawing` (the URL of the module in use, "generic" for the generic one), `featured` (the options
 * the lobby shows at once: the renderer's choice, else all of them) and `blurb`. */
export function gameInfo(game) {
  const entry = gameEntry(game);
  const loaded = renderers.get(game);
  const module = loaded ? loaded.module : generic;
  const lobby = (module.lobby && module.lobby[game]) || {};
  return {
    title: game, seats: null, options: [], bots: [], default_bot: null, ...(entry || {}),
    module, drawing: loaded ? loaded.url : "generic",
    featured: lobby.featured || (entry ? entry.options.map((o) => o.name) : []), blurb: lobby.blurb || "",
  };
}
