// A hand's end on the felt: the best five cards of a shown hand (a small poker evaluator, with wild
// jokers for a game that asks), their name ("Flush, ace high"), the winning cards marked, the amount
// each winner took beside the seat and each pot's winners in the centre. The game modules keep the
// award events in their state; this module only computes and draws.

import { h } from "./dom.js";
import { RANKS, SUITS, isJoker } from "./cards.js";

const CATEGORY = ["High card", "Pair", "Two pair", "Three of a kind", "Straight", "Flush", "Full house", "Four of a kind",
  "Straight flush", "Five of a kind"];
const WORD = { 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine", 10: "ten", 11: "jack", 12: "queen", 13: "king", 14: "ace" };
const PLURAL = { 6: "sixes" };
const word = (v) => WORD[v];
const words = (v) => PLURAL[v] || `${WORD[v]}s`;
const value = (card) => RANKS.indexOf(card[0]) + 2;

/** [category 0..8, tie-break values high first] of exactly five jokerless cards. */
function score5(cards) {
  const vals = cards.map(value).sort((a, b) => b - a);
  const flush = cards.every((c) => c[1] === cards[0][1]);
  const uniq = [...new Set(vals)];
  let straightHigh = 0;
  if (uniq.length === 5) {
    if (vals[0] - vals[4] === 4) straightHigh = vals[0];
    else if (vals[0] === 14 && vals[1] === 5) straightHigh = 5; // the wheel, A-2-3-4-5
  }
  const counts = new Map();
  for (const v of vals) counts.set(v, (counts.get(v) || 0) + 1);
  // groups by size then rank: [[count, rank], ...]
  const groups = [...counts.entries()].map(([v, n]) => [n, v]).sort((a, b) => b[0] - a[0] || b[1] - a[1]);
  const byGroup = groups.map((g) => g[1]);
  if (straightHigh && flush) return [8, [straightHigh]];
  if (groups[0][0] === 4) return [7, byGroup];
  if (groups[0][0] === 3 && groups[1][0] === 2) return [6, byGroup];
  if (flush) return [5, vals];
  if (straightHigh) return [4, [straightHigh]];
  if (groups[0][0] === 3) return [3, byGroup];
  if (groups[0][0] === 2 && groups[1][0] === 2) return [2, byGroup];
  if (groups[0][0] === 2) return [1, byGroup];
  return [0, vals];
}

function better(a, b) {
  if (a[0] !== b[0]) return a[0] > b[0];
  for (let i = 0; i < a[1].length; i++) if (a[1][i] !== b[1][i]) return a[1][i] > b[1][i];
  return false;
}

/** "Flush, ace high", "Two pair, kings and fives", ... for a score5 result. */
function nameOf([cat, t]) {
  switch (cat) {
    case 9: return `Five of a kind, ${words(t[0])}`;
    case 8: return t[0] === 14 ? "Royal flush" : `Straight flush, ${word(t[0])} high`;
    case 7: return `Four of a kind, ${words(t[0])}`;
    case 6: return `Full house, ${words(t[0])} full of ${words(t[1])}`;
    case 5: return `Flush, ${word(t[0])} high`;
    case 4: return `Straight, ${word(t[0])} high`;
    case 3: return `Three of a kind, ${words(t[0])}`;
    case 2: return `Two pair, ${words(t[0])} and ${words(t[1])}`;
    case 1: return `Pair of ${words(t[0])}`;
    default: return `High card, ${word(t[0])}`;
  }
}

/** The best five of `list` (5 to 7 jokerless cards): [five cards, score5 result]. */
function bestOf(list) {
  let best = null;
  let bestScore = null;
  const n = list.length;
  const pick = [];
  const walk = (start) => {
    if (pick.length === 5) {
      const five = pick.map((i) => list[i]);
      const sc = score5(five);
      if (!bestScore || better(sc, bestScore)) { best = five; bestScore = sc; }
      return;
    }
    for (let i = start; i <= n - (5 - pick.length); i++) { pick.push(i); walk(i + 1); pick.pop(); }
  };
  walk(0);
  return [best, bestScore];
}

/**
 * The best five with wild jokers: each joker stands for any card not among the other cards (two
 * jokers for two different cards), and n of a rank plus jokers making five are five of a kind, above
 * a straight flush (the server's wild ranking). For a rank, the card of the suit that could make a
 * flush (a suit holding at least 5 - jokers of the cards) is tried first, then the others in suit
 * order: no other card of that rank plays better, so each joker needs one candidate per rank.
 * Returns [five cards, jokers included, score].
 */
function bestWild(plain, jokers) {
  const counts = new Map();
  const suits = new Map();
  for (const c of plain) {
    counts.set(value(c), (counts.get(value(c)) || 0) + 1);
    suits.set(c[1], (suits.get(c[1]) || 0) + 1);
  }
  const five = [...counts.entries()].filter(([, n]) => n + jokers.length >= 5).map(([v]) => v);
  if (five.length) {
    const top = Math.max(...five);
    return [[...plain.filter((c) => value(c) === top), ...jokers].slice(0, 5), [9, [top]]];
  }
  const held = new Set(plain);
  const flush = [...suits.entries()].find(([, n]) => n >= 5 - jokers.length);
  const order = flush ? [flush[0], ...SUITS.split("").filter((x) => x !== flush[0])] : SUITS.split("");
  // per rank, its first `jokers.length` cards not held, the flush suit's first
  const perRank = [...RANKS].map((r) => order.map((x) => r + x).filter((c) => !held.has(c)).slice(0, jokers.length));
  let best = null;
  let bestScore = null;
  const consider = (subs) => {
    const [cards, sc] = bestOf([...plain, ...subs]);
    if (!bestScore || better(sc, bestScore)) {
      // each substitute chosen is drawn as the joker that stands for it
      best = cards.map((c) => (subs.includes(c) ? jokers[subs.indexOf(c)] : c));
      bestScore = sc;
    }
  };
  // the jokers' ranks as a non-decreasing list of rank indexes; k jokers on one rank take its first k cards
  const walk = (from, ranks) => {
    if (ranks.length === jokers.length) {
      const used = new Map();
      const subs = [];
      for (const i of ranks) {
        const k = used.get(i) || 0;
        if (k >= perRank[i].length) return;
        subs.push(perRank[i][k]);
        used.set(i, k + 1);
      }
      consider(subs);
      return;
    }
    for (let i = from; i < perRank.length; i++) walk(i, [...ranks, i]);
  };
  walk(0, []);
  return [best, bestScore];
}

/**
 * The best five of 5 to 7 cards (card strings): {cards (the five), category ("Flush", as CATEGORY),
 * name ("Flush, ace high"), score ([category index 0..9, tie-break rank values 2..14, high first])}.
 * With `wild`, jokers ("Xr", "Xb") are wild as bestWild says; without, a hand holding a joker has no
 * name here (null). Null too with fewer than five cards or a face-down one ("??").
 */
export function bestFive(cards, wild = false) {
  const list = (cards || []).filter(Boolean);
  if (list.length < 5 || list.includes("??")) return null;
  const jokers = list.filter(isJoker);
  if (jokers.length && !wild) return null;
  const plain = list.filter((c) => !isJoker(c));
  const [best, score] = jokers.length ? bestWild(plain, jokers) : bestOf(plain);
  return { cards: best, category: CATEGORY[score[0]], name: nameOf(score), score };
}

/** The servers' hand categories (engine/ranking.py, eval7's names; Alamo's five of a kind) as shown. */
const CATEGORY_NAME = {
  "High Card": "High card", "Two Pair": "Two pair", Trips: "Three of a kind", "Full House": "Full house",
  Quads: "Four of a kind", "Straight Flush": "Straight flush", "Five of a Kind": "Five of a kind",
};

/** A server's hand category ("Trips") as a person reads it ("Three of a kind"); null stays null. */
export function categoryName(category) {
  return category ? CATEGORY_NAME[category] || category : null;
}

/**
 * The name to show for a hand: the evaluator's ("Three of a kind, queens") when it has the cards and
 * agrees with the server's category, else the server's category (the server ranks; null stays null).
 * `wild`: jokers are wild (bestFive).
 */
export function handTitle(cards, category, wild = false) {
  const best = bestFive(cards, wild);
  if (best && (!category || categoryName(category) === best.category)) return best.name;
  return categoryName(category) || (best ? best.name : null);
}

/** Mark the cards of `el` (any depth) whose data-card is in `cards` as winning ones (class "win"). */
export function markWinning(el, cards) {
  if (!el || !cards || !cards.length) return el;
  const left = [...cards];
  const all = el.matches && el.matches("[data-card]") ? [el] : [];
  for (const c of [...all, ...el.querySelectorAll("[data-card]")]) {
    const i = left.indexOf(c.dataset.card);
    if (i >= 0) { c.classList.add("win"); left.splice(i, 1); }
  }
  return el;
}

/** The amount a seat took at the hand's end, for its box: "wins 120 chips". */
export function wonEl(text, amount) {
  return h("span", { class: "won", "data-won": amount, role: "status" }, text);
}

/**
 * The hand's result for the centre: one line per pot, e.g. "Main pot: 30 to Bob (Flush, ace high)",
 * "Side pot 1: 20 to Ann". `pots`: [{label, amount (text), winners (names), hand (name or null)}].
 */
export function resultEl(pots, extra) {
  return h("div", { class: "hand-result", role: "status", "aria-live": "polite" },
    pots.map((p) => h("div", { class: "pot-result", "data-pot": p.index ?? "" },
      `${p.label}: ${p.amount} to ${p.winners.join(" & ")}`, p.hand ? ` (${p.hand})` : "")),
    extra || null);
}
