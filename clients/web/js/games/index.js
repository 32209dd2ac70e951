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
// felt), lobby?: {game: {featured: [option names shown at once], blurb}}, and these optional parts:
// * labels?: {option: "Short label"} and choiceLabels?: {option: {value: "text"}}: the lobby's
//   words for the game's options (the table options' are TABLE_LABELS below); absent: the name.
// * fairness?: {replay(rng, record, drawn), draws?(record)}: the G-2 check of a finished match
//   (verify.js). `replay` runs the game's random choices in the order its engine documents them
//   with `rng` (fair.js's FairRandom keyed by the revealed seeds) over `record` (verify.js's module
//   comment) and returns a verify.js `Checks` of every card compared; it is synchronous and may
//   throw an Error whose message says why the record cannot be checked. `draws(record)`: the
//   hypotheses, in order, for `drawn` (whether the generator drew the first dealer before anything
//   else; verify.js's `drawnFirst` makes one); absent: [false]. Absent `fairness`: the verdict
//   says the game cannot be checked (only the commitment is).
// * history?: {hand(record, n), phh?}: the hand replayer's maker of one finished hand
//   (history.js, hands.js): `record` is one entry of the game's GET /api/tables/{id}/hands (a JSON
//   hand record, or a PHH hand parsed by hands.js's parsePHHS when `phh` is true: that body is
//   .phhs text, which the page also offers to download); `n(seat)` a seat's name. Returns
//   {steps: [{text, scene}], label?} (hands.js's module comment: the scene; `label` names the
//   record, default "hand N"). Absent: hands.js's genericHand.
// The drawing helpers are the client's modules, imported by absolute path by a module served from
// elsewhere (/web/js/dom.js, /web/js/cards.js, /web/js/actions.js, /web/js/games/common.js,
// generic.js, /web/js/verify.js and /web/js/hands.js for the parts above).

import generic from "./generic.js";
import { gameEntry, loadCatalogue } from "../catalogue.js";
import { h } from "../dom.js";

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

/** Short labels of the table options (every game's); a game's own come from its module (`labels`). */
export const TABLE_LABELS = {
  action_clock: "Action clock (s)", time_bank: "Time bank (s)", bot_think: "Bot thinking time (s)",
  pause: "Pause between streets (s)", close_after: "Close when idle after (s)", auto_rematch: "Bots rematch by themselves",
};

/** What the page knows of `game`: the server's entry (`title`, `seats`, `options`, `bots`,
 * `default_bot`, `renderer`, `rules`: the URL of its "How to play" page, absent without one) and its drawing: `module` (the renderer, or the generic one; its
 * optional parts as the module comment says), `drawing` (the URL of the module in use, "generic"
 * for the generic one), `featured` (the options the lobby shows at once: the renderer's choice,
 * else all of them), `blurb`, `labels` (option -> label: the table options' and the module's) and
 * `choiceLabels` (option -> {value: text}). */
export function gameInfo(game) {
  const entry = gameEntry(game);
  const loaded = renderers.get(game);
  const module = loaded ? loaded.module : generic;
  const lobby = (module.lobby && module.lobby[game]) || {};
  return {
    title: game, seats: null, options: [], bots: [], default_bot: null, ...(entry || {}),
    module, drawing: loaded ? loaded.url : "generic",
    featured: lobby.featured || (entry ? entry.options.map((o) => o.name) : []), blurb: lobby.blurb || "",
    labels: { ...TABLE_LABELS, ...(module.labels || {}) }, choiceLabels: { ...(module.choiceLabels || {}) },
  };
}

/** A link to `game`'s "How to play" page (the catalogue's `rules`), opening in a new tab, with the
 * text `text`; null for a game without one. `id`, when given, is the link's id. */
export function howToPlay(game, text = "How to play", id = null) {
  const url = gameInfo(game).rules;
  if (!url) return null;
  return h("a", { class: "how-to-play", href: url, target: "_blank", rel: "noopener", id,
    "data-rules": game, title: `The rules of ${gameInfo(game).title} (opens a new tab)` }, text);
}
