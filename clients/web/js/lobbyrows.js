// What the lobby says about each open table: its stakes (the game's main options: the lobby entry's
// options over the catalogue's defaults), who sits there (names from GET /api/tables/{id}, asked
// again only when the table's seats change) and how many seats are free; and the list's order,
// tables one can join first.

import { gameInfo } from "./games/index.js";

/** How many tables' seats are asked for at once (the rest on the next refresh). */
const LOOKUPS = 12;

/** Short words for the options the lobby shows as stakes; other options show as "name value". */
const STAKE_WORDS = {
  points_to_win: (v) => `first to ${v} points`,
  decks: (v) => `${v} decks`,
  jokers: (v) => (v ? "jokers" : "no jokers"),
  max_hands: (v) => `at most ${v} hands`,
  preflop_betting: (v) => (v ? "betting before the flop" : null),
  multi_call: (v) => (v === "duels" ? "callers duel" : null),
  blind_levels: (v) => (v ? `blinds up every ${v} hands` : "fixed blinds"),
};

const uniform = (v) => (Array.isArray(v) ? (v.every((x) => x === v[0]) ? v[0] : v.join("/")) : v);

/** The options `entry` (a GET /api/tables entry) is played with: the catalogue's defaults, then the entry's. */
function optionsOf(entry) {
  const defaults = Object.fromEntries(gameInfo(entry.game).options.map((o) => [o.name, o.default]));
  return { ...defaults, ...(entry.options || {}) };
}

/** "Blinds 10/20 · stacks 1000" for Hold'em; the featured options of other games ("first to 3 points"). */
export function stakesText(entry) {
  const opts = optionsOf(entry);
  const parts = [];
  if (opts.big_blind != null) {
    parts.push(`Blinds ${uniform(opts.small_blind)}/${uniform(opts.big_blind)}`);
    if (opts.small_bet != null && opts.big_bet != null) parts.push(`bets ${opts.small_bet}/${opts.big_bet}`);
    if (opts.starting_stacks != null) parts.push(`stacks ${uniform(opts.starting_stacks)}`);
  } else {
    for (const name of gameInfo(entry.game).featured) {
      const v = opts[name];
      if (v === null || v === undefined) continue;
      const text = STAKE_WORDS[name] ? STAKE_WORDS[name](v) : `${name.replace(/_/g, " ")} ${uniform(v)}`;
      if (text) parts.push(text);
      if (parts.length >= 3) break;
    }
  }
  return parts.join(" · ");
}

/** Can someone sit down at `entry` now (a free seat, and no match running)? */
export function joinable(entry) {
  return (entry.status === "waiting" || entry.status === "finished") && entry.taken < entry.seats;
}

/** The lobby's order: this player's own tables (`mine(entry)`: owned or seated at) first, then
 * joinable tables (waiting ones before finished ones), then running and paused ones, then the rest;
 * the server's order otherwise. */
export function sortTables(entries, mine = () => false) {
  // your own tables first; within yours and within the others: joinable (waiting first), then running, then the rest
  const state = (t) => (joinable(t) ? (t.status === "waiting" ? 0 : 1) : t.status === "running" || t.status === "paused" ? 2 : 3);
  const rank = (t) => (mine(t) ? state(t) - 4 : state(t));
  return entries.map((t, i) => [rank(t), i, t]).sort((a, b) => a[0] - b[0] || a[1] - b[1]).map((x) => x[2]);
}

/** `entries` (a fresh listing, already sorted) in the order of `shown` (the rows on screen) for the
 * tables still listed, the new ones after them in their own order: the lobby keeps its rows in place
 * while the pointer is over them, so a refresh never moves a row under a click. */
export function keepOrder(entries, shown) {
  const place = new Map(shown.map((t, i) => [t.id, i]));
  const kept = entries.filter((t) => place.has(t.id)).sort((a, b) => place.get(a.id) - place.get(b.id));
  return [...kept, ...entries.filter((t) => !place.has(t.id))];
}

/** "2 free seats", "1 free seat", "full". */
export function freeText(entry) {
  const free = entry.seats - entry.taken;
  return free <= 0 ? "full" : `${free} free seat${free === 1 ? "" : "s"}`;
}

/** The people seated at each table, by name, and how many bots: kept per table and asked for again
 * when its seats or status change. */
export class Seated {
  constructor() {
    this.known = new Map(); // table id -> {sig, occupants}
  }

  /** "ann, bob + 2 bots" for `entry`, or "" while not known. */
  text(entry) {
    const k = this.known.get(entry.id);
    if (!k || !k.occupants) return "";
    const people = k.occupants.filter((o) => !o.bot).map((o) => o.name);
    const bots = k.occupants.length - people.length;
    const botText = bots ? `${bots} bot${bots === 1 ? "" : "s"}` : "";
    return people.length ? `${people.join(", ")}${botText ? ` + ${botText}` : ""}` : botText;
  }

  /** Ask for the seats of the tables in `entries` that changed since; `done()` once any answer came. */
  async refresh(entries, done) {
    const open = new Set(entries.map((t) => t.id));
    for (const id of this.known.keys()) if (!open.has(id)) this.known.delete(id);
    const stale = entries.filter((t) => {
      const k = this.known.get(t.id);
      return !k || k.sig !== signature(t);
    }).slice(0, LOOKUPS);
    if (!stale.length) return;
    await Promise.all(stale.map(async (t) => {
      try {
        const r = await fetch(`/api/tables/${encodeURIComponent(t.id)}`, { cache: "no-store" });
        if (!r.ok) return;
        const info = await r.json();
        this.known.set(t.id, { sig: signature(t), occupants: info.occupants || [] });
      } catch { /* asked again on the next refresh */ }
    }));
    done();
  }
}

const signature = (t) => `${t.taken}/${t.status}`;
