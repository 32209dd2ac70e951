// Alamo (engine/games/alamo.py): Hold'em with the cards as the chips. Stacks, bets and the pot are
// counts of face-down cards; the board is turned from the pot.

import { h, plural } from "../dom.js";
import { cardsText } from "../cards.js";
import { amount, boardEl, has, holeEl, key, nameOf } from "./common.js";
import { bettingPanel } from "../actions.js";
import { bestFive, categoryName, handTitle, markWinning, resultEl, wonEl } from "../showdown.js";

function init(e) {
  return {
    game: "alamo", seats: e.seats, dealer: e.dealer, stacks: { ...e.stacks }, deck: e.deck, jokers: e.jokers,
    hand: 0, players: [], board: [], pot: 0, face_down: 0, bets: {}, folded: [], hole_cards: {}, shown: {},
    shown_hands: {}, my_cards: null, eliminated: [], ante: 0, street: null, winners: [], finished: false, result: null,
    awards: [],
  };
}

function reduce(s, e) {
  switch (e.type) {
    case "eliminated":
      s.eliminated.push([e.hand, [e.seat]]);
      s.stacks[key(e.seat)] = 0;
      s.face_down += e.cards;
      s.pot += e.cards;
      break;
    case "hand_start":
      Object.assign(s, {
        hand: e.hand, dealer: e.dealer, players: e.players, ante: e.ante, stacks: { ...s.stacks, ...e.stacks },
        board: [], bets: {}, folded: [], hole_cards: {}, shown: {}, shown_hands: {}, my_cards: null,
        street: "preflop", winners: [], awards: [],
      });
      break;
    case "antes":
      s.pot = e.pot;
      s.face_down = e.face_down;
      Object.assign(s.stacks, e.stacks);
      break;
    case "hole_cards":
      Object.assign(s.stacks, e.stacks);
      s.hole_cards = Object.fromEntries(e.players.map((p) => [key(p), 2]));
      if (e.cards) s.my_cards = e.cards;
      break;
    case "board":
      s.board = e.board;
      s.face_down = e.face_down;
      s.street = e.street;
      s.bets = {};
      break;
    case "action":
      s.stacks[key(e.seat)] = e.stack;
      s.bets[key(e.seat)] = e.bet;
      s.pot = e.pot;
      s.face_down = e.pot - s.board.length;
      if (e.action === "fold") { s.folded.push(e.seat); delete s.hole_cards[key(e.seat)]; }
      break;
    case "uncalled":
      s.stacks[key(e.seat)] = e.stack;
      s.bets[key(e.seat)] = Math.max(0, (s.bets[key(e.seat)] || 0) - e.cards);
      s.pot -= e.cards;
      s.face_down -= e.cards;
      break;
    case "show":
      s.shown[key(e.seat)] = e.cards;
      if (e.hand) s.shown_hands[key(e.seat)] = e.hand;
      break;
    case "award":
      for (const p of e.pots) for (const w of p.winners) if (!s.winners.includes(w)) s.winners.push(w);
      s.awards = e.pots; // kept for the felt until the next hand starts
      break;
    case "hand_end":
      s.hand = e.hand;
      Object.assign(s.stacks, e.stacks);
      s.pot = 0;
      s.face_down = 0;
      s.bets = {};
      s.hole_cards = {};
      s.street = null;
      break;
    case "match_end":
      s.finished = true;
      s.result = e.result;
      s.eliminated = e.result.eliminated || s.eliminated;
      break;
    default:
  }
}

function fromView(v) {
  return { ...init({ seats: v.seats, dealer: v.dealer, stacks: v.stacks }), ...v, shown_hands: {}, winners: [], awards: [],
    street: v.hole_cards && Object.keys(v.hole_cards).length ? v.street : null, jokers: v.options && v.options.jokers };
}

function seatView(s, seat, ctx) {
  const k = key(seat);
  const out = s.eliminated.some(([, group]) => group.includes(seat));
  const badges = s.dealer === seat ? [["D", "dealer"]] : [];
  let status = null;
  if (out) status = "out";
  else if (has(s.folded, seat)) status = "folded";
  else if (has(s.players, seat) && s.stacks[k] === 0 && s.street) status = "all-in";
  if (s.winners.includes(seat)) status = "wins";
  const shown = s.shown[k];
  const mine = seat === ctx.you ? s.my_cards : null;
  const cards = markWinning(holeEl(shown || mine, s.hole_cards[k] || 0), winningCards(s, seat));
  const lines = [h("span", { class: "stack", "data-stack": s.stacks[k] ?? 0 }, h("span", { class: "pile", "aria-hidden": "true" }), amount(s.stacks[k] ?? 0, "cards"))];
  const took = (s.awards || []).reduce((n, p) => n + ((p.shares || {})[k] || 0), 0);
  if (took) lines.push(wonEl(`wins ${amount(took, "cards")}`, took));
  const handName = shown && s.board.length === 5 ? handTitle([...s.board, ...shown], s.shown_hands[k]) : categoryName(s.shown_hands[k]);
  if (handName) lines.push(h("span", { class: "hand-name" }, handName));
  return { badges, status, cards, bet: s.bets[k] ? amount(s.bets[k], "cards") : null, lines };
}

/** The cards `seat` won with at the showdown: its best five (the shown hole cards when a joker
 * makes it wild, AL-2), or null when it won uncontested or did not win. */
function winningCards(s, seat) {
  const k = key(seat);
  const shown = s.shown[k];
  if (!shown || !(s.awards || []).some((p) => p.winners.includes(seat)) || s.board.length < 5) return null;
  const best = bestFive([...s.board, ...shown]);
  return best ? best.cards : shown;
}

/** Each pot's winners and their hand, once the hand is decided. */
function awardsEl(s, ctx) {
  const several = s.awards.length > 1;
  return resultEl(s.awards.map((p, i) => {
    const shown = s.shown[key(p.winners[0])];
    const name = shown && s.board.length === 5 ? handTitle([...s.board, ...shown], s.shown_hands[key(p.winners[0])]) : null;
    return {
      index: i, label: i ? `Side pot ${i}` : several ? "Main pot" : "Pot",
      amount: amount(Object.values(p.shares || {}).reduce((a, b) => a + b, 0) || p.cards, "cards"),
      winners: p.winners.map((x) => nameOf(ctx && ctx.names, x)), hand: p.eligible && p.eligible.length > 1 ? name : null,
    };
  }));
}

function center(s, ctx) {
  const awards = s.awards || [];
  const main = awards[0];
  return h("div", { class: "center-info" },
    markWinning(boardEl(s.board), main && main.winners.length ? winningCards(s, main.winners[0]) : null),
    awards.length ? awardsEl(s, ctx) : h("div", { class: "pot", "aria-live": "polite", "data-pot": s.pot }, `Pot ${amount(s.pot, "cards")}`),
    h("div", { class: "meta" }, `${plural(s.face_down, "card")} face down in the pot · ante ${s.ante || "–"} · hand ${s.hand || "–"} · ${s.jokers ? "54 cards with jokers" : "52 cards"}`));
}

function describe(e, names) {
  const n = (seat) => nameOf(names, seat);
  switch (e.type) {
    case "match_start": return `Match starts: ${n(e.dealer)} deals; ${e.deck} cards into stacks of ${Object.values(e.stacks)[0]}`;
    case "eliminated": return `${n(e.seat)} is eliminated (${plural(e.cards, "card")} into the pot)`;
    case "hand_start": return `Hand ${e.hand}: ${n(e.dealer)} deals, ante ${plural(e.ante, "card")}`;
    case "hole_cards": return e.cards ? `You pull ${cardsText(e.cards)}` : "Everyone pulls two hole cards";
    case "board": return `${e.street[0].toUpperCase()}${e.street.slice(1)} turned from the pot: ${cardsText(e.cards)}`;
    case "action": {
      const verb = { fold: "folds", check: "checks", call: `calls ${plural(e.cards, "card")}`, bet: `bets ${e.amount}`, raise: `raises to ${e.amount}`, all_in: `goes all-in (${plural(e.cards, "card")})` }[e.action] || e.action;
      return `${n(e.seat)} ${verb}${e.all_in && e.action !== "all_in" ? " (all-in)" : ""}`;
    }
    case "uncalled": return `${plural(e.cards, "card")} uncalled back to ${n(e.seat)}`;
    case "show": return `${n(e.seat)} shows ${cardsText(e.cards)}${e.hand ? ` (${categoryName(e.hand)})` : ""}`;
    case "award": return e.pots.map((p, i) => `${i ? `side pot ${i}` : "pot"} (${plural(p.cards, "card")}) to ${p.winners.map(n).join(" & ")}`).join("; ");
    case "hand_end": return `Hand ${e.hand} over: ${Object.entries(e.winnings).map(([s, c]) => `${n(Number(s))} takes ${plural(c, "card")}`).join(", ")}`;
    case "match_end": return `Match over (${e.result.reason.replace("_", " ")}): ${e.result.winners.map(n).join(", ")} ${e.result.winners.length > 1 ? "win" : "wins"}`;
    default: return null;
  }
}

export default {
  unit: "cards",
  panel: (legal, state, send) => bettingPanel(legal, "cards", send, state),
  preactions: true, // pre-action boxes while others act (preactions.js)
  firstEvent: "match_start",
  init, reduce, fromView, seatView, center, describe,
  lobby: { alamo: { featured: ["preflop_betting", "max_hands"], blurb: "Hold'em where your cards are your chips: win every card." } },
};
