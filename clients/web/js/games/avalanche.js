// Avalanche (engine/games/avalanche.py): hands, the deck, the avalanche on the table, stored and
// neutral piles; plays are a rank and a count.

import { h, plural } from "../dom.js";
import { backEl, cardEl, cardsEl, cardsText, multiDeck, rankLabel, rankValue } from "../cards.js";
import { has, key, nameOf } from "./common.js";
import { button } from "../actions.js";
import { wonEl } from "../showdown.js";
import { Checks, clockwise, drawnFirst } from "../verify.js";

const clone = (x) => JSON.parse(JSON.stringify(x));

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

/**
 * A seat's status: "wins" for a winner once the game is over (AV-6: most stored cards, whether or not
 * its hand ran out first), "out" for a seat without cards (AV-5 while the game goes on: its turns are
 * skipped; at the end, every seat but the winners, the last holder included once it stored its hand),
 * else null.
 */
function seatStatus(s, seat, size) {
  if (s.result && (s.result.winners || []).includes(seat)) return "wins";
  if (has(s.out, seat) || (s.finished && size === 0)) return "out";
  return null;
}

function seatView(s, seat, ctx) {
  const k = key(seat);
  const size = s.hand_sizes[k] || 0;
  const badges = s.dealer === seat ? [["D", "dealer"]] : [];
  const status = seatStatus(s, seat, size);
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

// ---------------------------------------------------------------- the G-2 check
// One shuffle of the multi-deck; ten rounds dealt from the top clockwise from the dealer's left;
// snowfalls and refills from the top (their position follows from the public deck count); every
// card played must be one the seed dealt to that seat.

function replay(rng, rec, drawFirst) {
  const checks = new Checks();
  let deck = null;
  let total = 0;
  const held = {}; // seat -> deck positions of the cards it holds
  let tracking = false; // every card each seat received is known (the record has the deal)
  const start = rec.events.find((e) => e.type === "game_start");
  if (!start) throw new Error("the deck is shuffled at game start: its event is needed");
  for (const e of rec.events) {
    switch (e.type) {
      case "game_start": {
        const seats = [...e.seats].sort((a, b) => a - b);
        if (drawFirst) checks.fact("dealer", seats[rng.randbelow(seats.length)], e.dealer);
        deck = multiDeck(e.decks, 3 * e.decks);
        rng.shuffle(deck);
        total = deck.length;
        checks.fact("deck size", total, e.deck_total);
        const order = clockwise(seats, e.dealer);
        for (const s of seats) held[s] = [];
        for (let i = 0; i < 10 * order.length; i++) held[order[i % order.length]].push(i);
        tracking = rec.complete;
        break;
      }
      case "deal":
        checks.hands.add(1);
        if (e.cards) checks.multiset("deal", "your ten cards", held[rec.you].map((p) => deck[p]), e.cards, held[rec.you]);
        break;
      case "snowfall": {
        const pos = total - e.deck - 1;
        held[e.seat].push(pos);
        if (e.card) checks.card(`s${e.deck}`, `your snowfall (deck ${e.deck})`, deck[pos], e.card, pos);
        break;
      }
      case "refill": {
        const positions = [];
        for (let p = total - e.deck - e.count; p < total - e.deck; p++) positions.push(p);
        held[e.seat].push(...positions);
        if (e.cards) checks.multiset(`r${e.deck}`, `your refill (deck ${e.deck})`, positions.map((p) => deck[p]), e.cards, positions);
        break;
      }
      case "play":
        if (tracking) checks.takeFrom(`p${e.seq}`, `seat ${e.seat}'s play`, deck, held[e.seat], e.cards);
        break;
      case "game_end":
        if (tracking && e.last != null) checks.fact(`seat ${e.last}'s last hand`, held[e.last].length, e.last_hand);
        break;
      default:
    }
  }
  if (!tracking) checks.notes.push("joined after the deal: plays were not traced back to the deal");
  return checks;
}

// ---------------------------------------------------------------- hand history
/** The replayer's steps of the game (engine/games/avalanche.py hand_record(): seats, dealer, deal,
 * moves, stored, result): one record, labelled "the game"; `n(seat)` a seat's name. */
function gameSteps(r, n) {
  const hands = clone(r.deal || {});
  const stored = Object.fromEntries((r.seats || []).map((s) => [s, 0]));
  let pile = [];
  let neutral = 0;
  const status = {}; // seat -> "out" once its hand and the deck are empty (AV-5); the result's at the end
  const take = (seat, cards) => { for (const c of cards) { const i = (hands[seat] || []).indexOf(c); if (i >= 0) hands[seat].splice(i, 1); } };
  const scene = (note) => ({
    board: null, note: note || `Neutral pile ${neutral}`, pile: { label: "Avalanche", cards: [...pile] },
    seats: (r.seats || []).map((seat) => ({ seat, name: n(seat), cards: [...(hands[seat] || [])], stack: `stored ${stored[seat]}`,
      bet: null, status: status[seat] || null, shows: null })),
  });
  const steps = [{ text: `${n(r.dealer)} deals ten cards each`, scene: scene() }];
  const OUT = { start: "starts an avalanche", grow: "grows it", stop: "stops it", fall: "lets it fall" };
  for (const m of r.moves || []) {
    let text = `${n(m.seat)} ${m.type}`;
    if (m.type === "snowfall") { (hands[m.seat] = hands[m.seat] || []).push(m.card); text = `${n(m.seat)} takes a snowfall: ${cardsText([m.card])}`; } else if (m.type === "refill") {
      (hands[m.seat] = hands[m.seat] || []).push(...m.cards);
      text = `${n(m.seat)} draws ${cardsText(m.cards)}`;
    } else if (m.type === "out") { text = `${n(m.seat)} is out of cards`; status[m.seat] = "out"; }
    else if (m.type === "play") {
      take(m.seat, m.cards);
      pile.push(...m.cards);
      text = `${n(m.seat)} plays ${cardsText(m.cards)}: ${OUT[m.outcome] || m.outcome}`;
      if (m.outcome === "stop") { neutral += pile.length; text += ` (${pile.length} cards to the neutral pile)`; pile = []; }
      if (m.outcome === "fall") { stored[m.to] += pile.length; text += `: ${n(m.to)} takes ${pile.length} cards`; pile = []; }
    }
    steps.push({ text, scene: scene() });
  }
  // AV-6: the last holder stores its hand, an unresolved avalanche goes to the neutral pile; the
  // winners win and every other seat, on 0 cards, is out
  for (const [seat, cards] of Object.entries(r.stored || {})) stored[seat] = cards.length;
  const res = r.result || {};
  for (const seat of r.seats || []) { hands[seat] = []; status[seat] = (res.winners || []).includes(seat) ? "wins" : "out"; }
  pile = [];
  neutral = (r.neutral || []).length;
  steps.push({ text: `Game over: ${(res.winners || []).map(n).join(", ")} ${(res.winners || []).length > 1 ? "win" : "wins"}`,
    scene: scene(`Stored: ${Object.entries(stored).map(([s, c]) => `${n(Number(s))} ${c}`).join(", ")} · neutral pile ${neutral}`) });
  return { label: "the game", steps };
}

export default {
  unit: "cards",
  panel: avalanchePanel,
  firstEvent: "game_start",
  init, reduce, fromView, seatView, center, describe, myArea,
  fairness: { replay, draws: drawnFirst("dealer") },
  history: { hand: gameSteps },
  labels: { decks: "Decks", dealer: "First dealer (seat)" },
  choiceLabels: { decks: { 2: "2 (110 cards)", 3: "3 (165 cards)" } },
  lobby: { avalanche: { featured: ["decks"], blurb: "Grow the avalanche, stop it, or let it fall on your neighbour; most stored cards wins." } },
};
