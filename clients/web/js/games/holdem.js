// Fixed-limit and no-limit Hold'em (engine/holdem.py): the state the page keeps, updated event by
// event with the same field names as the engine's view(), and how it is drawn.

import { h } from "../dom.js";
import { cardsText } from "../cards.js";
import { amount, boardEl, fmt, has, holeEl, key, nameOf } from "./common.js";
import { bettingPanel } from "../actions.js";
import { bestFive, categoryName, handTitle, markWinning, resultEl, wonEl } from "../showdown.js";

function init(e) {
  return {
    game: e.game, seats: e.seats, stacks: { ...e.stacks }, button: e.button, stakes: e.stakes, level: 0,
    hand: 0, players: [], board: [], bets: {}, pot: 0, pots: [], folded: [], all_in: [], shown: {},
    shown_hands: {}, hole: null, eliminated: [], street: null, finished: false, result: null, winners: [],
    awards: [],
  };
}

function reduce(s, e) {
  step(s, e);
  // all-in: in the hand, not folded, no chips behind (as the engine's view counts it)
  s.all_in = s.players.filter((p) => !s.folded.includes(p) && s.stacks[key(p)] === 0);
}

function step(s, e) {
  switch (e.type) {
    case "blind_level":
      s.stakes = e.stakes;
      s.level = e.level;
      break;
    case "hand_start":
      Object.assign(s, {
        hand: e.hand, button: e.button, small_blind: e.small_blind, big_blind: e.big_blind, players: e.players,
        stacks: { ...s.stacks, ...e.stacks }, stakes: e.stakes, board: [], bets: {}, pot: 0, pots: [], folded: [],
        all_in: [], shown: {}, shown_hands: {}, hole: null, street: "preflop", winners: [], awards: [],
      });
      break;
    case "blinds":
      for (const p of e.posts) {
        if (p.kind === "ante_returned") { s.pot -= p.amount; continue; }
        s.pot += p.amount;
        if (p.kind !== "ante") s.bets[key(p.seat)] = (s.bets[key(p.seat)] || 0) + p.amount;
      }
      Object.assign(s.stacks, e.stacks);
      break;
    case "hole_cards":
      if (e.cards) s.hole = e.cards;
      break;
    case "action":
      s.stacks[key(e.seat)] = e.stack;
      s.bets[key(e.seat)] = e.total;
      s.pot = e.pot;
      if (e.action === "fold") s.folded.push(e.seat);
      break;
    case "uncalled":
      s.stacks[key(e.seat)] = e.stack;
      s.bets[key(e.seat)] = Math.max(0, (s.bets[key(e.seat)] || 0) - e.amount);
      s.pot -= e.amount;
      break;
    case "pots":
      s.pots = e.pots;
      s.bets = {};
      break;
    case "board":
      s.board = e.board;
      s.street = e.street;
      s.bets = {};
      break;
    case "show":
      s.shown[key(e.seat)] = e.cards;
      if (e.hand) s.shown_hands[key(e.seat)] = e.hand;
      break;
    case "award":
      for (const seat of Object.keys(e.winners)) if (!s.winners.includes(Number(seat))) s.winners.push(Number(seat));
      // kept for the felt until the next hand starts (showdown.js draws them)
      s.awards.push({ pot: e.pot, amount: e.amount, winners: e.winners, hand: e.hand });
      break;
    case "hand_end":
      Object.assign(s.stacks, e.stacks);
      s.pot = 0;
      s.bets = {};
      s.pots = [];
      s.street = null;
      break;
    case "bust":
      s.eliminated.push(e.seats);
      break;
    case "match_end":
      s.finished = true;
      s.result = { ranking: e.ranking, winners: e.winners };
      break;
    default:
  }
}

/** The snapshot's view as the page's state (the same fields). */
function fromView(v) {
  return {
    ...init({ game: v.game, seats: v.seats, stacks: v.stacks, button: v.button, stakes: v.stakes }),
    ...v, shown_hands: {}, winners: [], awards: [], bets: v.bets || {}, pots: v.pots || [], board: v.board || [],
    folded: v.folded || [], all_in: v.all_in || [], shown: v.shown || {}, players: v.players || [],
    hole: v.hole || null,
  };
}

function seatView(s, seat, ctx) {
  const k = key(seat);
  const inHand = has(s.players, seat);
  const out = s.eliminated.some((g) => g.includes(seat));
  const badges = [];
  if (s.button === seat) badges.push(["D", "dealer button"]);
  if (inHand && s.small_blind === seat) badges.push(["SB", "small blind"]);
  if (inHand && s.big_blind === seat) badges.push(["BB", "big blind"]);
  let status = null;
  if (out) status = "out";
  else if (has(s.folded, seat)) status = "folded";
  else if (has(s.all_in, seat)) status = "all-in";
  if (s.winners.includes(seat)) status = "wins";
  const mine = seat === ctx.you ? s.hole : null;
  const shown = s.shown[k];
  const folded = has(s.folded, seat);
  const cards = markWinning(holeEl(shown || mine, inHand && !folded && s.street !== null ? 2 : 0), winningFive(s, seat));
  const bet = s.bets[k] ? amount(s.bets[k], "chips") : null;
  const lines = [h("span", { class: "stack", "data-stack": s.stacks[k] ?? 0 }, amount(s.stacks[k] ?? 0, "chips"))];
  const took = takings(s)[k];
  if (took) lines.push(wonEl(`wins ${amount(took, "chips")}`, took));
  const handName = shown && s.board.length === 5 ? handTitle([...s.board, ...shown], s.shown_hands[k]) : categoryName(s.shown_hands[k]);
  if (handName) lines.push(h("span", { class: "hand-name" }, handName));
  return { badges, status, cards, bet, lines };
}

/** Chips each seat took from the pots this hand: {seat: chips} (award events). */
function takings(s) {
  const out = {};
  for (const a of s.awards || []) for (const [seat, c] of Object.entries(a.winners)) out[seat] = (out[seat] || 0) + c;
  return out;
}

/** The five cards `seat` won a pot with at the showdown, or null (uncontested, or not shown). */
function winningFive(s, seat) {
  const k = key(seat);
  if (!s.shown[k] || !(s.awards || []).some((a) => a.hand && k in a.winners)) return null;
  const best = bestFive([...s.board, ...s.shown[k]]);
  return best && best.cards;
}

/** Each pot's winners and hand, in the centre once the hand is decided. */
function awardsEl(s, ctx) {
  const several = s.awards.length > 1;
  return resultEl(s.awards.map((a) => {
    const seats = Object.keys(a.winners).map(Number);
    const shown = s.shown[key(seats[0])];
    return {
      index: a.pot, label: a.pot ? `Side pot ${a.pot}` : several ? "Main pot" : "Pot", amount: fmt(a.amount),
      winners: seats.map((x) => nameOf(ctx && ctx.names, x)),
      hand: a.hand ? (shown && s.board.length === 5 ? handTitle([...s.board, ...shown], a.hand) : categoryName(a.hand)) : null,
    };
  }));
}

function center(s, ctx) {
  const st = s.stakes || {};
  const stakes = s.game === "fixed_limit_holdem"
    ? `Blinds ${fmt(st.small_blind)}/${fmt(st.big_blind)} · bets ${fmt(st.small_bet)}/${fmt(st.big_bet)}`
    : `Blinds ${fmt(st.small_blind)}/${fmt(st.big_blind)}${st.ante ? ` · ante ${fmt(st.ante)}` : ""}`;
  const pots = (s.pots || []).length > 1
    ? h("div", { class: "side-pots" }, s.pots.map((p, i) => h("span", { class: "pot-chip" }, `${i ? `Side pot ${i}` : "Main pot"}: ${fmt(p.amount)}`)))
    : null;
  const awards = s.awards || [];
  const main = awards.find((a) => a.pot === 0) || awards[0];
  return h("div", { class: "center-info" },
    markWinning(boardEl(s.board), main ? winningFive(s, Number(Object.keys(main.winners)[0])) : null),
    awards.length ? awardsEl(s, ctx) : h("div", { class: "pot", "aria-live": "polite", "data-pot": s.pot }, `Pot ${fmt(s.pot)}`),
    awards.length ? null : pots,
    h("div", { class: "meta" }, `Hand ${s.hand || "–"} · ${s.street || "between hands"} · ${stakes}`));
}

function describe(e, names) {
  const n = (seat) => nameOf(names, seat);
  switch (e.type) {
    case "match_start": return `Match starts: button ${n(e.button)}, blinds ${fmt(e.stakes.small_blind)}/${fmt(e.stakes.big_blind)}`;
    case "blind_level": return `Blinds go up: ${fmt(e.stakes.small_blind)}/${fmt(e.stakes.big_blind)}`;
    case "hand_start": return `Hand ${e.hand}: ${n(e.button)} has the button`;
    case "blinds": return e.posts.map((p) => `${n(p.seat)} posts ${p.kind.replace("_", " ")} ${fmt(p.amount)}`).join("; ");
    case "hole_cards": return e.cards ? `You are dealt ${cardsText(e.cards)}` : "Hole cards are dealt";
    case "action": {
      const verb = { fold: "folds", check: "checks", call: `calls ${fmt(e.amount)}`, bet: `bets ${fmt(e.total)}`, raise: `raises to ${fmt(e.total)}` }[e.action] || e.action;
      return `${n(e.seat)} ${verb}${e.all_in ? " (all-in)" : ""}`;
    }
    case "uncalled": return `${fmt(e.amount)} uncalled returned to ${n(e.seat)}`;
    case "board": return `${e.street[0].toUpperCase()}${e.street.slice(1)}: ${cardsText(e.cards)}`;
    case "show": return `${n(e.seat)} shows ${cardsText(e.cards)}${e.hand ? ` (${categoryName(e.hand)})` : ""}`;
    case "muck": return `${n(e.seat)} mucks`;
    case "award": return `${Object.entries(e.winners).map(([s, c]) => `${n(Number(s))} wins ${fmt(c)}`).join(", ")}${e.hand ? ` with ${categoryName(e.hand)}` : ""}`;
    case "bust": return `${e.seats.map(n).join(", ")} busted`;
    case "match_end": return `Match over: ${e.winners.map(n).join(", ")} ${e.winners.length > 1 ? "win" : "wins"}`;
    default: return null;
  }
}

export default {
  unit: "chips",
  panel: (legal, state, send) => bettingPanel(legal, "chips", send, state),
  preactions: true, // pre-action boxes while others act (preactions.js)
  firstEvent: "match_start",
  init, reduce, fromView, seatView, center, describe,
  lobby: {
    no_limit_holdem: {
      featured: ["starting_stacks", "small_blind", "big_blind", "blind_levels"],
      blurb: "Texas Hold'em, bet any amount up to your stack; blinds double every 15 hands.",
    },
    fixed_limit_holdem: {
      featured: ["starting_stacks", "small_blind", "big_blind", "small_bet", "big_bet"],
      blurb: "Texas Hold'em with fixed bets and four bets a round.",
    },
  },
};
