// Loco Poker (engine/games/loco_poker.py): no chips; check, fold, all-in, call; points and knock-outs.

import { h, plural } from "../dom.js";
import { cardsText } from "../cards.js";
import { boardEl, has, holeEl, key, nameOf } from "./common.js";
import { button } from "../actions.js";
import { bestFive, categoryName, handTitle, markWinning, wonEl } from "../showdown.js";
import { drawnFirst, replayBoardDeal } from "../verify.js";

const cap = (t) => t[0].toUpperCase() + t.slice(1);
/** How many board cards show on each street. */
const BOARD_AT = { preflop: 0, flop: 3, turn: 4, river: 5 };

const OUTCOMES = {
  checked_down: "checked down: no points", folded_around: "folded around: no points",
  uncalled_all_in: "uncalled all-in: a point", all_in_won: "the all-in won", all_in_lost: "the all-in lost", push: "push",
};

function init(e) {
  return {
    game: "loco_poker", seats: e.seats, dealer: e.dealer, points_to_win: e.points_to_win, multi_call: e.multi_call,
    points: Object.fromEntries(e.seats.map((s) => [key(s), 0])), alive: [...e.seats], knocked_out: [], hand: 0,
    street: null, board: [], players: [], in_hand: [], folded: [], cards_in_hand: {}, all_in: null, callers: [],
    shown: {}, shown_hands: {}, hole_cards: null, outcome: null, loco: false, finished: false, result: null,
    best: [], ending: null,
  };
}

function reduce(s, e) {
  switch (e.type) {
    case "hand_start":
      Object.assign(s, {
        hand: e.hand, dealer: e.dealer, players: e.players, in_hand: [...e.players], street: "preflop", board: [],
        folded: [], cards_in_hand: {}, all_in: null, callers: [], shown: {}, shown_hands: {}, hole_cards: null,
        outcome: null, loco: false, best: [], ending: null,
      });
      break;
    case "hole_cards":
      s.cards_in_hand = { ...e.counts };
      if (e.cards) s.hole_cards = e.cards;
      break;
    case "action":
      if (e.action === "fold") {
        s.folded.push(e.seat);
        s.in_hand = s.in_hand.filter((x) => x !== e.seat);
        delete s.cards_in_hand[key(e.seat)];
      } else if (e.action === "all_in") s.all_in = e.seat;
      else if (e.action === "call") s.callers.push(e.seat);
      break;
    case "street":
      s.board = e.board;
      s.street = e.street;
      break;
    case "showdown":
      s.board = e.board;
      for (const x of e.hands) { s.shown[key(x.seat)] = x.cards; s.shown_hands[key(x.seat)] = x.hand; }
      s.best = e.best || [];
      break;
    case "loco":
      s.loco = true;
      break;
    case "point":
      s.points[key(e.seat)] = e.points;
      break;
    case "knocked_out":
      s.alive = s.alive.filter((x) => !e.seats.includes(x));
      s.knocked_out.push({ hand: e.hand, seats: e.seats });
      break;
    case "hand_end":
      s.points = { ...e.points };
      s.outcome = e.result;
      // kept for the felt until the next hand starts
      s.ending = { result: e.result, scored: e.scored, knocked_out: e.knocked_out || [], points: { ...e.points } };
      s.cards_in_hand = {};
      s.street = null;
      break;
    case "match_end":
      s.finished = true;
      s.result = e;
      break;
    default:
  }
}

function fromView(v) {
  return { ...init({ seats: v.seats, dealer: v.dealer, points_to_win: v.options.points_to_win, multi_call: v.options.multi_call }),
    ...v, shown_hands: {}, loco: false, best: [], ending: null, points_to_win: v.options.points_to_win };
}

function seatView(s, seat, ctx) {
  const k = key(seat);
  const badges = s.dealer === seat ? [["D", "dealer"]] : [];
  let status = null;
  if (!has(s.alive, seat)) status = "knocked out";
  else if (has(s.folded, seat)) status = "folded";
  else if (s.all_in === seat) status = "all-in";
  else if (has(s.callers, seat)) status = "called";
  if (s.result && (s.result.winners || []).includes(seat)) status = "wins";
  const mine = seat === ctx.you ? s.hole_cards : null;
  const five = has(s.best, seat) && s.shown[k] ? bestFive([...s.board, ...s.shown[k]]) : null;
  const cards = markWinning(holeEl(s.shown[k] || mine, s.cards_in_hand[k] || 0), five && five.cards);
  const pts = s.points[k] || 0;
  const stars = h("span", { class: "points", "data-points": pts, "aria-label": `${pts} of ${s.points_to_win} points` },
    Array.from({ length: s.points_to_win }, (_, i) => (i < pts ? "★" : "☆")).join(""));
  const lines = [stars];
  if (s.ending && s.ending.scored === seat) lines.push(wonEl("+1 point", 1));
  if (s.ending && has(s.ending.knocked_out, seat)) lines.push(h("span", { class: "ko", "data-ko": seat }, "knocked out this hand"));
  const handName = s.shown[k] && s.board.length === 5 ? handTitle([...s.board, ...s.shown[k]], s.shown_hands[k]) : categoryName(s.shown_hands[k]);
  if (handName) lines.push(h("span", { class: "hand-name" }, handName));
  return { badges, status, cards, bet: null, lines };
}

/** The hand's end in the centre: who scored (and the points now), who was knocked out, else the outcome. */
function endingEl(s, ctx) {
  const e = s.ending;
  const n = (seat) => nameOf(ctx && ctx.names, seat);
  const lines = [];
  if (e.scored != null) lines.push(`${n(e.scored)} scores a point: ${e.points[key(e.scored)] ?? "?"} of ${s.points_to_win}`);
  if (e.knocked_out.length) lines.push(`Knocked out: ${e.knocked_out.map(n).join(", ")}`);
  if (s.best.length && s.board.length === 5) {
    const shown = s.shown[key(s.best[0])];
    lines.push(`Best hand: ${s.best.map(n).join(" & ")}${shown ? ` (${handTitle([...s.board, ...shown], s.shown_hands[key(s.best[0])])})` : ""}`);
  }
  if (!lines.length) lines.push(OUTCOMES[e.result] ? `${OUTCOMES[e.result][0].toUpperCase()}${OUTCOMES[e.result].slice(1)}` : e.result);
  return h("div", { class: "hand-result", role: "status", "aria-live": "polite", "data-result": e.result },
    lines.map((t) => h("div", { class: "pot-result" }, t)));
}

function center(s, ctx) {
  const bestCards = s.best.length && s.shown[key(s.best[0])] ? bestFive([...s.board, ...s.shown[key(s.best[0])]]) : null;
  return h("div", { class: "center-info" },
    markWinning(boardEl(s.board), bestCards && bestCards.cards),
    s.loco ? h("div", { class: "loco-banner", role: "status" }, "¡Loco!") : null,
    s.ending ? endingEl(s, ctx)
      : h("div", { class: "pot" }, s.all_in ? `All-in pending: ${s.callers.length} called` : "No chips: check, fold or all-in"),
    h("div", { class: "meta" }, `Hand ${s.hand || "–"} · ${s.outcome ? OUTCOMES[s.outcome] || s.outcome : s.street || "between hands"} · first to ${plural(s.points_to_win, "point")} · ${s.multi_call === "duels" ? "duels" : "best hand"}`));
}

function describe(e, names) {
  const n = (seat) => nameOf(names, seat);
  switch (e.type) {
    case "match_start": return `Match starts: ${n(e.dealer)} deals; first to ${e.points_to_win} points`;
    case "hand_start": return `Hand ${e.hand}: ${n(e.dealer)} deals`;
    case "hole_cards": return e.cards ? `You are dealt ${cardsText(e.cards)}` : "Hole cards are dealt";
    case "action": return `${n(e.seat)} ${{ check: "checks", fold: "folds", all_in: "goes ALL-IN", call: "calls" }[e.action] || e.action}`;
    case "street": return `${e.street[0].toUpperCase()}${e.street.slice(1)}: ${cardsText(e.cards)}`;
    case "showdown": return `Showdown: ${e.hands.map((x) => `${n(x.seat)} ${cardsText(x.cards)} (${categoryName(x.hand)})`).join(", ")}`;
    case "loco": return `¡Loco! ${e.seats.map(n).join(", ")} led after the turn and lost`;
    case "point": return `${n(e.seat)} scores a point (${e.points})`;
    case "knocked_out": return `${e.seats.map(n).join(", ")} knocked out`;
    case "hand_end": return `Hand ${e.hand}: ${OUTCOMES[e.result] || e.result}`;
    case "match_end": return `Match over: ${(e.winners || []).map(n).join(", ")} ${(e.winners || []).length > 1 ? "win" : "wins"}`;
    default: return null;
  }
}

// ---------------------------------------------------------------- hand history
/** The replayer's steps of one finished hand (engine/games/loco_poker.py hand_record(): players,
 * dealer, hole, actions, board, shown, outcome, points); `n(seat)` a seat's name. */
function handSteps(r, n) {
  const st = { board: [], cards: {}, status: {}, shows: {} };
  const scene = (note) => ({
    board: [...st.board], note, pile: null,
    seats: r.players.map((seat) => ({ seat, name: n(seat), cards: st.cards[seat] || null, stack: null, bet: null,
      status: st.status[seat] || null, shows: st.shows[seat] || null })),
  });
  const steps = [{ text: `Hand ${r.hand}: ${n(r.dealer)} deals`, scene: scene() }];
  for (const seat of r.players) st.cards[seat] = (r.hole || {})[seat];
  steps.push({ text: "Hole cards are dealt", scene: scene() });
  let street = "preflop";
  for (const a of r.actions || []) {
    if (a.street !== street) {
      street = a.street;
      st.board = (r.board || []).slice(0, BOARD_AT[street]);
      steps.push({ text: `${cap(street)}: ${cardsText(st.board)}`, scene: scene() });
    }
    if (a.type === "fold") st.status[a.seat] = "folded";
    if (a.type === "all_in") st.status[a.seat] = "all-in";
    if (a.type === "call") st.status[a.seat] = "called";
    steps.push({ text: `${n(a.seat)} ${{ check: "checks", fold: "folds", all_in: "goes ALL-IN", call: "calls" }[a.type] || a.type}`, scene: scene() });
  }
  if ((r.board || []).length > st.board.length && Object.keys(r.shown || {}).length) {
    st.board = [...r.board];
    steps.push({ text: `Board: ${cardsText(st.board)}`, scene: scene() });
  }
  for (const [seat, cards] of Object.entries(r.shown || {})) {
    const name = st.board.length === 5 ? handTitle([...st.board, ...cards], null) : null;
    st.shows[seat] = name || "shows";
    steps.push({ text: `${n(Number(seat))} shows ${cardsText(cards)}${name ? ` (${name})` : ""}`, scene: scene() });
  }
  const o = r.outcome || {};
  const parts = [OUTCOMES[o.result] || o.result];
  if (o.scored != null) parts.push(`${n(o.scored)} scores a point`);
  if ((o.knocked_out || []).length) parts.push(`knocked out: ${o.knocked_out.map(n).join(", ")}`);
  const points = Object.entries(r.points || {}).map(([s, p]) => `${n(Number(s))} ${p}`).join(", ");
  steps.push({ text: `${cap(parts.filter(Boolean).join("; "))}`, scene: scene(`Points: ${points}`) });
  return { steps };
}

/** The action panel: check, fold, all-in, call (no amounts). */
function panel(legal, state, send) {
  const labels = { check: "Check", fold: "Fold", all_in: "All-in!", call: "Call the all-in" };
  return legal.map((a) => button(labels[a.type] || a.type, { type: a.type }, send));
}

export default {
  unit: "points",
  panel,
  firstEvent: "match_start",
  init, reduce, fromView, seatView, center, describe,
  // the G-2 check: one shuffle of a fresh deck per hand, dealt as verify.js's replayBoardDeal says;
  // the first dealer drawn first unless the table set it
  fairness: {
    replay: (rng, rec, drawn) => replayBoardDeal(rng, rec, drawn, { firstKey: "dealer", snapshotHole: "hole_cards" }),
    draws: drawnFirst("dealer"),
  },
  history: { hand: handSteps },
  labels: { points_to_win: "Points to win", multi_call: "Several callers", dealer: "First dealer (seat)" },
  choiceLabels: { multi_call: { best_hand: "one showdown (best hand)", duels: "duels" } },
  lobby: {
    loco_poker: {
      featured: ["points_to_win", "multi_call"],
      blurb: "No chips: check, fold or go all-in. Win an uncalled all-in for a point; lose a called one and you are out.",
    },
  },
};
