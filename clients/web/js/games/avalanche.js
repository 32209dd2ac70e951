// Avalanche (engine/games/avalanche.py): hands, the deck, the avalanche on the table, stored and
// neutral piles; plays are a rank and a count.

import { h, plural } from "../dom.js";
import { backEl, cardEl, cardsEl, cardsText, rankLabel, rankValue } from "../cards.js";
import { has, key, nameOf } from "./common.js";
import { button } from "../actions.js";
import { wonEl } from "../showdown.js";

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
    neutral: 0, out: [], hand: null, last_fall: null, last_stop: null, finished: false, result: null,
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
      break;
    case "stopped":
      s.avalanche = [];
      s.neutral = e.neutral;
      // the last avalanche's end, kept until the next one ends (who took it, who stopped it)
      s.last_stop = { seat: e.seat, count: e.count };
      s.last_fall = null;
      break;
    case "fallen":
      s.avalanche = [];
      s.stored[key(e.to)] = e.stored;
      s.last_fall = { to: e.to, count: e.count };
      s.last_stop = null;
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
    hand: v.hand ? sortHand(v.hand) : null, last_fall: null, last_stop: null };
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
  // who took the last avalanche, or stopped it
  if (s.last_fall && s.last_fall.to === seat) lines.push(wonEl(`took the avalanche: +${plural(s.last_fall.count, "card")}`, s.last_fall.count));
  if (s.last_stop && s.last_stop.seat === seat) lines.push(h("span", { class: "stopped" }, "stopped it"));
  return { badges, status, cards, bet: null, lines };
}

/** The game's end in the centre: the winners and every stored pile; null before the end. */
function endEl(s, ctx) {
  if (!s.result) return null;
  const n = (seat) => nameOf(ctx.names, seat);
  const piles = Object.entries(s.result.stored || {}).sort((a, b) => b[1] - a[1]).map(([seat, c]) => `${n(Number(seat))} ${c}`);
  return h("div", { class: "hand-result", role: "status" },
    h("div", { class: "pot-result" }, `${s.result.winners.map(n).join(" & ")} ${s.result.winners.length > 1 ? "win" : "wins"} with the most stored cards`),
    h("div", { class: "pot-result" }, `Stored: ${piles.join(", ")} · neutral pile ${s.result.neutral}`));
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
      : endEl(s, ctx) || h("div", { class: "pot" }, s.last_fall ? `The avalanche fell on ${nameOf(ctx.names, s.last_fall.to)} (+${s.last_fall.count})`
        : s.last_stop ? `${nameOf(ctx.names, s.last_stop.seat)} stopped the avalanche: ${plural(s.last_stop.count, "card")} to the neutral pile`
          : "No avalanche: snowfall or start one"),
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

/**
 * Avalanche: pick a rank from your hand (the `groups` of the legal play) and a count; or snowfall.
 * `state` gives the avalanche on the table for the grow/stop/fall preview.
 */
export function avalanchePanel(legal, state, send) {
  const play = legal.find((a) => a.type === "play");
  const snow = legal.find((a) => a.type === "snowfall");
  const out = [];
  if (snow) out.push(button("Snowfall (draw a card)", { type: "snowfall" }, send));
  if (!play) return out;
  const groups = Object.entries(play.groups).sort((a, b) => rankValue(a[0]) - rankValue(b[0]));
  let [rank, count] = suggestion(groups, state.avalanche || []);
  const preview = h("span", { class: "preview", "aria-live": "polite" });
  const countInput = h("input", { type: "number", min: 1, max: count, value: count, class: "count", "aria-label": "How many cards" });
  const playBtn = button("Play", () => ({ type: "play", rank, count }), send, { kind: "play" });
  const picks = groups.map(([r, n]) => h("button", {
    type: "button", class: "rank-pick", "data-rank": r, "aria-pressed": String(r === rank),
    "aria-label": `${rankLabel(r)}: you hold ${n}`,
    onclick: (ev) => { rank = r; count = Math.min(Math.max(count, 1), n); update(ev.currentTarget); },
  }, h("span", { class: `rank-face${r === "X" ? " joker" : ""}`, "aria-hidden": "true" }, r === "X" ? "JOKER" : rankLabel(r)), h("span", { class: "rank-count" }, `×${n}`)));
  function update() {
    for (const p of picks) p.setAttribute("aria-pressed", String(p.dataset.rank === rank));
    countInput.max = play.groups[rank];
    countInput.value = count;
    playBtn.firstChild.textContent = `Play ${count} × ${rankLabel(rank)}`;
    const what = outcome(state.avalanche || [], count, rank);
    preview.textContent = { start: "starts an avalanche", grow: "grows the avalanche", stop: "stops it: all to the neutral pile", fall: "lets it fall on the previous player" }[what];
    preview.dataset.outcome = what;
  }
  countInput.addEventListener("input", () => {
    const v = Math.round(Number(countInput.value));
    if (v >= 1 && v <= play.groups[rank]) { count = v; update(); }
  });
  update();
  out.push(h("div", { class: "rank-picks", role: "group", "aria-label": "Choose a rank to play" }, picks));
  out.push(h("span", { class: "play-group" }, h("label", { class: "count-label" }, "Cards ", countInput), playBtn, preview));
  return out;
}

/**
 * The play selected at first: with no avalanche, the largest group; on an avalanche, the smallest
 * play that grows it, else one that stops it, else one low card (it falls).
 */
function suggestion(groups, avalanche) {
  if (!avalanche.length) {
    const [r, n] = groups.reduce((best, g) => (g[1] > best[1] ? g : best));
    return [r, n];
  }
  const plays = [];
  for (const [r, n] of groups) for (let c = 1; c <= n; c++) plays.push([r, c]);
  const order = { grow: 0, stop: 1, fall: 2 };
  plays.sort((a, b) => order[outcome(avalanche, a[1], a[0])] - order[outcome(avalanche, b[1], b[0])]
    || a[1] - b[1] || rankValue(a[0]) - rankValue(b[0]));
  return plays[0];
}

/** Your hand, under the table (a seat only). */
function myArea(s, ctx) {
  if (ctx.you == null || !s.hand) return null;
  return h("div", { class: "my-hand", "aria-label": `Your hand: ${plural(s.hand.length, "card")}` },
    h("h2", {}, `Your hand (${s.hand.length})`), h("div", { class: "cards hand" }, s.hand.map((c) => cardEl(c))));
}

export default {
  unit: "cards",
  panel: avalanchePanel,
  firstEvent: "game_start",
  init, reduce, fromView, seatView, center, describe, myArea,
  lobby: { avalanche: { featured: ["decks"], blurb: "Grow the avalanche, stop it, or let it fall on your neighbour; most stored cards wins." } },
};
