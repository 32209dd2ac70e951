// High Card's web renderer (tests/toygame/engine.py has the rules), served from its registration
// (GameSpec.web_renderer, a file: /games/high_card/web.js). The table is drawn by the client's
// generic renderer; this module adds what only the game knows (clients/web/js/games/index.js,
// its header): the lobby's words, the G-2 check of a match and the hand replayer's steps.

import generic from "/web/js/games/generic.js";
import { cardText } from "/web/js/cards.js";
import { plural } from "/web/js/dom.js";
import { Checks, handDecks } from "/web/js/verify.js";

/**
 * The G-2 replay of a match: the only random choice is one shuffle of a standard deck per hand
 * (hand k's is the k-th); hand k is dealt in seat order from the ((k-1) mod n)-th of the sorted
 * seats, order[i] getting the deck's i-th card. Checks the player's own card of each `deal`, the
 * cards of each `showdown`, the snapshot's (joined mid-match) and each hand's dealing order.
 */
function replay(rng, rec) {
  const checks = new Checks();
  const deckOf = handDecks(rng);
  const start = rec.events.find((e) => e.type === "match_start");
  const seats = [...((start || rec.snapshot || {}).seats || [])].sort((a, b) => a - b);
  if (!seats.length) throw new Error("the seats of the match are unknown");
  const orders = {};
  const deal = (hand, seen) => {
    const first = (hand - 1) % seats.length;
    orders[hand] = [...seats.slice(first), ...seats.slice(0, first)];
    if (seen) checks.fact(`hand ${hand}: the dealing order`, orders[hand].join(" "), seen.join(" "));
    deckOf(hand);
  };
  const card = (hand, seat, got, label) => {
    if (!got || !orders[hand]) return;
    const i = orders[hand].indexOf(seat);
    if (i < 0) { checks.mismatches.push(`hand ${hand}: seat ${seat} has a card but was not dealt in`); return; }
    checks.hands.add(hand);
    checks.card(`${hand}/${seat}`, label, deckOf(hand)[i], got);
  };
  const snap = rec.snapshot;
  if (snap && snap.hand) {
    deal(snap.hand, snap.order);
    if (rec.you != null) card(snap.hand, rec.you, snap.card, `hand ${snap.hand}, your card`);
    for (const [seat, c] of Object.entries(snap.shown || {})) card(snap.hand, Number(seat), c, `hand ${snap.hand}, seat ${seat}'s card`);
  }
  for (const e of rec.events) {
    if (e.type === "deal") {
      deal(e.hand, e.order);
      if (rec.you != null) card(e.hand, rec.you, e.card, `hand ${e.hand}, your card`);
    } else if (e.type === "showdown") {
      for (const [seat, c] of Object.entries(e.cards)) card(e.hand, Number(seat), c, `hand ${e.hand}, seat ${seat}'s card`);
    }
  }
  return checks;
}

/** The replayer's steps of one finished hand (the engine's hand_record(): hand, order, cards,
 * bets, folded, winner, points); `n(seat)` a seat's name. Every card shows: the match is over. */
function handSteps(r, n) {
  const status = {};
  const bets = {};
  let points = null;
  const scene = (note) => ({
    board: null, pile: null, note,
    seats: r.order.map((seat) => ({
      seat, name: n(seat), cards: r.cards[seat] ? [r.cards[seat]] : null, bet: bets[seat] ? String(bets[seat]) : null,
      stack: points ? plural(points[seat] ?? 0, "point") : null, status: status[seat] || null,
      shows: r.winner === seat && points ? "highest card" : null,
    })),
  });
  const steps = [{ text: `Hand ${r.hand}: one card each, dealt to ${r.order.map(n).join(", ")}`, scene: scene() }];
  for (const seat of r.order) {
    const bet = r.bets[seat];
    if (bet != null) bets[seat] = bet;
    else status[seat] = "folded";
    steps.push({ text: bet != null ? `${n(seat)} bets ${bet}` : `${n(seat)} folds`, scene: scene() });
  }
  points = r.points;
  const total = r.order.map((s) => `${n(s)} ${r.points[s] ?? 0}`).join(", ");
  const text = r.winner == null ? "Nobody scores: fewer than two bets"
    : `${n(r.winner)} wins with ${cardText(r.cards[r.winner])}`;
  steps.push({ text, scene: scene(`Points: ${total}`) });
  return { steps };
}

export default {
  ...generic,
  fairness: { replay },
  history: { hand: handSteps },
  labels: { hands: "Hands in the match", max_bet: "Largest bet (points)" },
  lobby: { high_card: { featured: ["hands", "max_bet"], blurb: "One card each: bet or fold; the highest card among the bettors wins." } },
};
