// Avalanche (engine/games/avalanche.py): hands, the deck, the avalanche on the table, stored and
// neutral piles; plays are a rank and a count.

import { h, plural } from "../dom.js";
import { backEl, cardsEl, cardsText, rankLabel, rankValue } from "../cards.js";
import { has, key, nameOf } from "./common.js";

export function sortHand(cards) {
  return [...cards].sort((a, b) => rankValue(a[0]) - rankValue(b[0]) || (a < b ? -1 : a > b ? 1 : 0));
}

/** What a play of `count` cards of `rank` does to the avalanche (RULES AV-2). */
export function outcome(avalanche, count, rank) {
  const prev = avalanche[avalanche.length - 1];
  if (!prev) return "start";
  const n = prev.count ?? prev.cards.length;
  const r = prev.rank ?? prev.cards[0][0];
  if (count > n || (count === n && rankValue(rank) >= rankValue(r))) return "grow";
  if (count === n && n >= 2) return "stop";
  return "fall";
}

function init(e) {
  return {
    game: "avalanche", seats: e.seats, dealer: e.dealer, decks: e.decks, deck_total: e.deck_total,
    hand_sizes: {}, deck: e.deck_total, avalanche: [], stored: Object.fromEntries(e.seats.map((s) => [key(s), 0])),
    neutral: 0, out: [], hand: null, last_fall: null, finished: false, result: null,
  };
}

function take(hand, cards) {
  const left = [...hand];
  for (const c of cards) {
    const i = left.indexOf(c);
    if (i >= 0) left.splice(i, 1);
  }
  return left;
}

function reduce(s, e, you) {
  switch (e.type) {
    case "deal":
      s.hand_sizes = { ...e.hands };
      s.deck = e.deck;
      if (e.cards) s.hand = sortHand(e.cards);
      break;
    case "snowfall":
      s.hand_sizes[key(e.seat)] = e.hand;
      s.deck = e.deck;
      if (e.card && e.seat === you) s.hand = sortHand([...(s.hand || []), e.card]);
      break;
    case "play":
      s.hand_sizes[key(e.seat)] = e.hand;
      s.avalanche.push({ seat: e.seat, cards: e.cards, rank: e.rank, count: e.count });
      if (e.seat === you && s.hand) s.hand = take(s.hand, e.cards);
      s.last_fall = null;
      break;
    case "stopped":
      s.avalanche = [];
      s.neutral = e.neutral;
      break;
    case "fallen":
      s.avalanche = [];
      s.stored[key(e.to)] = e.stored;
      s.last_fall = { to: e.to, count: e.count };
      break;
    case "refill":
      s.hand_sizes[key(e.seat)] = e.hand;
      s.deck = e.deck;
      if (e.cards && e.seat === you) s.hand = sortHand([...(s.hand || []), ...e.cards]);
      break;
    case "out":
      if (!has(s.out, e.seat)) s.out.push(e.seat);
      break;
    case "game_end":
      s.stored = { ...e.stored };
      s.neutral = e.neutral;
      s.avalanche = [];
      if (e.last != null) s.hand_sizes[key(e.last)] = 0;
      if (e.last === you) s.hand = [];
      s.finished = true;
      s.result = { ranking: e.ranking, winners: e.winners, stored: e.stored, neutral: e.neutral };
      break;
    default:
  }
}

function fromView(v) {
  return { ...init({ seats: v.seats, dealer: v.dealer, decks: v.decks, deck_total: v.deck_total }), ...v,
    hand: v.hand ? sortHand(v.hand) : null, last_fall: null };
}

function seatView(s, seat, ctx) {
  const k = key(seat);
  const size = s.hand_sizes[k] || 0;
  const badges = s.dealer === seat ? [["D", "dealer"]] : [];
  const status = has(s.out, seat) ? "out" : s.result && s.result.winners.includes(seat) ? "wins" : null;
  const shownBacks = Math.min(size, 6);
  const cards = seat === ctx.you
    ? null // the own hand is drawn large under the table
    : size ? h("span", { class: "cards fan", "aria-label": `${plural(size, "card")} in hand` }, Array.from({ length: shownBacks }, () => backEl("small"))) : null;
  const lines = [
    h("span", { class: "stack", "data-hand": size }, `hand ${size}`),
    h("span", { class: "stored", "data-stored": s.stored[k] || 0 }, `stored ${s.stored[k] || 0}`),
  ];
  return { badges, status, cards, bet: null, lines };
}

function center(s, ctx) {
  const last = s.avalanche[s.avalanche.length - 1];
  const plays = s.avalanche.map((p, i) => h("li", { class: `play${i === s.avalanche.length - 1 ? " last" : ""}` },
    h("span", { class: "who" }, nameOf(ctx.names, p.seat)), cardsEl(p.cards, "small")));
  return h("div", { class: "center-info avalanche" },
    h("div", { class: "piles" },
      h("span", { class: "pile-count", "data-deck": s.deck }, backEl("small"), ` Deck ${s.deck}`),
      h("span", { class: "pile-count", "data-neutral": s.neutral }, ` Neutral pile ${s.neutral}`)),
    s.avalanche.length
      ? h("ol", { class: "avalanche-plays", "aria-label": `Avalanche: ${s.avalanche.length} plays, last ${last.count} × ${rankLabel(last.rank)}` }, plays)
      : h("div", { class: "pot" }, s.last_fall ? `The avalanche fell on ${nameOf(ctx.names, s.last_fall.to)} (+${s.last_fall.count})` : "No avalanche: snowfall or start one"),
    h("div", { class: "meta" }, `${s.decks} decks, ${s.deck_total} cards · most stored cards wins`));
}

const OUT = { start: "starts an avalanche", grow: "grows it", stop: "stops it", fall: "lets it fall" };

function describe(e, names) {
  const n = (seat) => nameOf(names, seat);
  switch (e.type) {
    case "game_start": return `Game starts: ${n(e.dealer)} deals from ${e.deck_total} cards`;
    case "deal": return e.cards ? `You are dealt ${cardsText(e.cards)}` : "Ten cards each are dealt";
    case "snowfall": return `${n(e.seat)} takes a snowfall${e.card ? `: ${cardsText([e.card])}` : ""}`;
    case "play": return `${n(e.seat)} plays ${cardsText(e.cards)}: ${OUT[e.outcome] || e.outcome}`;
    case "stopped": return `${n(e.seat)} stopped the avalanche: ${plural(e.count, "card")} to the neutral pile`;
    case "fallen": return `The avalanche falls on ${n(e.to)}: ${plural(e.count, "card")} stored`;
    case "refill": return `${n(e.seat)} draws ${plural(e.count, "card")}${e.cards ? `: ${cardsText(e.cards)}` : ""}`;
    case "out": return `${n(e.seat)} is out of cards`;
    case "game_end": return `Game over: ${e.winners.map(n).join(", ")} ${e.winners.length > 1 ? "win" : "wins"} (${Object.entries(e.stored).map(([s, c]) => `${n(Number(s))} ${c}`).join(", ")})`;
    default: return null;
  }
}

export default {
  unit: "cards",
  actions: "avalanche",
  firstEvent: "game_start",
  init, reduce, fromView, seatView, center, describe,
};
