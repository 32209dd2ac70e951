// Alamo (engine/games/alamo.py): Hold'em with the cards as the chips. Stacks, bets and the pot are
// counts of face-down cards; the board is turned from the pot.

import { h, plural } from "../dom.js";
import { cardsText, standardDeck } from "../cards.js";
import { amount, boardEl, has, holeEl, key, nameOf } from "./common.js";
import { bettingPanel } from "../actions.js";
import { bestFive, categoryName, handTitle, markWinning, resultEl, wonEl } from "../showdown.js";
import { Checks, clockwise, drawnFirst } from "../verify.js";

const cap = (t) => t[0].toUpperCase() + t.slice(1);

/** The best five of 5 to 7 cards with the jokers wild as the server ranks them (RULES AL-2; showdown.js
 * bestFive: {cards, category, name, score}), or null with fewer than five known cards. */
export const bestHand = (cards) => bestFive(cards, true);

/** The name of a shown hand (hole cards `shown` on `board`): computed when the cards make five (AL-6:
 * the board may stop at three or four), checked against the server's category `category` (null once
 * the board has grown since the show). */
const shownName = (board, shown, category) => (shown && board.length >= 3 ? handTitle([...board, ...shown], category, true) : categoryName(category));

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
      s.shown_hands = {}; // the server named hands shown before this card: computed again from the cards
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
  const handName = shownName(s.board, shown, s.shown_hands[k]);
  if (handName) lines.push(h("span", { class: "hand-name" }, handName));
  return { badges, status, cards, bet: s.bets[k] ? amount(s.bets[k], "cards") : null, lines };
}

/** The cards `seat` won with at the showdown: its best five, a wild joker drawn as itself (AL-2), or
 * null when it won uncontested or did not win. */
function winningCards(s, seat) {
  const k = key(seat);
  const shown = s.shown[k];
  if (!shown || !(s.awards || []).some((p) => p.winners.includes(seat)) || s.board.length < 3) return null;
  const best = bestHand([...s.board, ...shown]);
  return best ? best.cards : shown;
}

/** Each pot's winners and their hand, once the hand is decided. */
function awardsEl(s, ctx) {
  const several = s.awards.length > 1;
  return resultEl(s.awards.map((p, i) => {
    const shown = s.shown[key(p.winners[0])];
    const name = shown ? shownName(s.board, shown, s.shown_hands[key(p.winners[0])]) : null;
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

// ---------------------------------------------------------------- the G-2 check
// The whole match is replayed (engine/games/alamo.py): the shuffled deck dealt into stacks
// deck[k::n], antes, bets and uncalled cards moved as the events say, board cards drawn at random
// from the face-down pot, and the winnings shuffled under the winners' stacks.

function replay(rng, rec, drawFirst) {
  const checks = new Checks();
  if (!rec.complete) throw new Error("the stacks are replayed from the first event: this page missed some");
  let piles = {};
  let faceDown = [];
  let board = [];
  let hole = {};
  let players = [];
  let streetCards = {};
  let hand = 0;
  const stackCheck = (label, stacks) => {
    for (const [seat, n] of Object.entries(stacks || {})) checks.fact(`${label}: seat ${seat}'s stack`, (piles[seat] || []).length, n);
  };
  for (const e of rec.events) {
    switch (e.type) {
      case "match_start": {
        const seats = [...e.seats].sort((a, b) => a - b);
        if (drawFirst) checks.fact("first dealer", seats[rng.randbelow(seats.length)], e.dealer);
        const deck = standardDeck(e.jokers ? 2 : 0);
        checks.fact("deck size", deck.length, e.deck);
        rng.shuffle(deck);
        const order = clockwise(seats, e.dealer);
        piles = {};
        order.forEach((seat, k) => { piles[seat] = deck.filter((_, i) => i % order.length === k); });
        stackCheck("deal", e.stacks);
        break;
      }
      case "eliminated":
        checks.fact(`seat ${e.seat} eliminated with`, (piles[e.seat] || []).length, e.cards);
        faceDown.push(...piles[e.seat]);
        piles[e.seat] = [];
        break;
      case "hand_start":
        hand = e.hand;
        players = e.players;
        board = [];
        hole = {};
        streetCards = {};
        stackCheck(`hand ${hand} start`, e.stacks);
        break;
      case "antes":
        for (const seat of players) faceDown.push(...piles[seat].splice(0, e.ante));
        stackCheck(`hand ${hand} antes`, e.stacks);
        break;
      case "hole_cards":
        for (const seat of players) hole[seat] = piles[seat].splice(0, 2);
        if (e.cards) {
          checks.hands.add(hand);
          e.cards.forEach((c, i) => checks.card(`${hand}/h${rec.you}/${i}`, `hand ${hand}, your hole card ${i + 1}`, hole[rec.you][i], c));
        }
        break;
      case "action":
        if (e.cards) {
          const moved = piles[e.seat].splice(0, e.cards);
          faceDown.push(...moved);
          (streetCards[e.seat] = streetCards[e.seat] || []).push(...moved);
        }
        checks.fact(`hand ${hand}: seat ${e.seat}'s stack after ${e.action}`, piles[e.seat].length, e.stack);
        break;
      case "uncalled": {
        const back = (streetCards[e.seat] || []).splice(-e.cards, e.cards);
        for (const c of back) faceDown.splice(faceDown.indexOf(c), 1);
        piles[e.seat].unshift(...back);
        break;
      }
      case "board": {
        streetCards = {};
        const want = { flop: 3, turn: 1, river: 1 }[e.street];
        const n = Math.min(want, faceDown.length);
        checks.fact(`hand ${hand}, ${e.street}: cards turned`, n, e.cards.length);
        const turned = [];
        for (let i = 0; i < n; i++) turned.push(faceDown.splice(rng.randbelow(faceDown.length), 1)[0]);
        board.push(...turned);
        checks.hands.add(hand);
        e.cards.forEach((c, i) => checks.card(`${hand}/${e.street}/${i}`, `hand ${hand}, ${e.street} card ${i + 1}`, turned[i], c));
        break;
      }
      case "show":
        checks.hands.add(hand);
        e.cards.forEach((c, i) => checks.card(`${hand}/h${e.seat}/${i}`, `hand ${hand}, seat ${e.seat}'s hole card ${i + 1}`, (hole[e.seat] || [])[i], c));
        break;
      case "award": {
        const pool = [...board, ...faceDown];
        const holes = players.flatMap((s) => hole[s] || []);
        checks.fact(`hand ${hand}: cards in the pots`, pool.length, e.pots.reduce((n, p) => n + p.cards, 0));
        checks.fact(`hand ${hand}: hole cards to the main pot`, holes.length, e.hole_cards);
        const winnings = {};
        const winners = new Set(e.pots.flatMap((p) => p.winners));
        if (winners.size === 1 && e.pots.every((p) => p.winners.length === 1)) {
          winnings[[...winners][0]] = [...pool, ...holes];
        } else {
          rng.shuffle(pool);
          let at = 0;
          e.pots.forEach((pot, i) => {
            let cards = pool.slice(at, at + pot.cards);
            at += pot.cards;
            if (i === 0) cards = cards.concat(holes);
            if (pot.winners.length > 1) rng.shuffle(cards);
            let from = 0;
            for (const seat of players) {
              const share = pot.shares[String(seat)];
              if (share === undefined) continue;
              (winnings[seat] = winnings[seat] || []).push(...cards.slice(from, from + share));
              from += share;
            }
          });
        }
        for (const seat of players) {
          if (!winnings[seat]) continue;
          rng.shuffle(winnings[seat]);
          piles[seat].push(...winnings[seat]);
        }
        faceDown = [];
        board = [];
        hole = {};
        break;
      }
      case "hand_end":
        if (e.reason === "last_player") {
          const winner = Object.keys(e.winnings)[0];
          const won = faceDown;
          faceDown = [];
          rng.shuffle(won);
          piles[winner].push(...won);
        }
        stackCheck(`hand ${e.hand} end`, e.stacks);
        break;
      default:
    }
  }
  return checks;
}

// ---------------------------------------------------------------- hand history
/** The replayer's steps of one finished hand (engine/games/alamo.py hand_record(): players, dealer,
 * ante, starting and finishing stacks, hole cards, actions and boards, shown, pots); `n(seat)` a seat's name. */
function handSteps(r, n) {
  const stacks = Object.fromEntries(Object.entries(r.starting_stacks || {}).map(([s, c]) => [s, c.length]));
  const st = { board: [], cards: {}, status: {}, bets: {}, shows: {} };
  const scene = (note) => ({
    board: [...st.board], note, pile: null,
    seats: r.players.map((seat) => ({ seat, name: n(seat), cards: st.cards[seat] || null, stack: `${stacks[seat] ?? 0} cards`,
      bet: st.bets[seat] ? `${st.bets[seat]}` : null, status: st.status[seat] || null, shows: st.shows[seat] || null })),
  });
  for (const seat of r.players) stacks[seat] -= r.ante || 0;
  const steps = [{ text: `Hand ${r.hand}: ${n(r.dealer)} deals, ante ${r.ante} card${r.ante === 1 ? "" : "s"}`, scene: scene() }];
  for (const seat of r.players) { st.cards[seat] = (r.hole_cards || {})[seat]; stacks[seat] -= 2; }
  steps.push({ text: "Everyone pulls two hole cards", scene: scene() });
  for (const a of r.actions || []) {
    if (a.board) {
      st.board.push(...a.board);
      st.bets = {};
      steps.push({ text: `${cap(a.street)} turned from the pot: ${cardsText(a.board)}`, scene: scene() });
      continue;
    }
    stacks[a.seat] -= a.cards || 0;
    if (a.action === "fold") st.status[a.seat] = "folded";
    if (a.amount != null) st.bets[a.seat] = a.amount;
    else if (a.cards) st.bets[a.seat] = (st.bets[a.seat] || 0) + a.cards;
    const verb = { fold: "folds", check: "checks", call: `calls ${a.cards} card${a.cards === 1 ? "" : "s"}`, bet: `bets ${a.amount}`,
      raise: `raises to ${a.amount}`, all_in: `goes all-in (${a.cards})` }[a.action] || a.action;
    steps.push({ text: `${n(a.seat)} ${verb}`, scene: scene() });
  }
  for (const seat of r.shown || []) {
    const cards = (r.hole_cards || {})[seat] || [];
    const name = cards.length ? shownName(st.board, cards, null) : null;
    st.shows[seat] = name || "shows";
    steps.push({ text: `${n(seat)} shows ${cardsText(cards)}${name ? ` (${name})` : ""}`, scene: scene() });
  }
  Object.assign(stacks, r.finishing_stacks || {});
  st.bets = {};
  const pots = (r.pots || []).map((p, i) => `${i ? `side pot ${i}` : "pot"} (${Object.values(p.shares || {}).reduce((a, b) => a + b, 0) || p.cards} cards) to ${p.winners.map(n).join(" & ")}`);
  steps.push({ text: cap(pots.join("; ") || `hand over (${r.reason})`), scene: scene(`Hand over (${r.reason})`) });
  return { steps };
}

export default {
  unit: "cards",
  panel: (legal, state, send) => bettingPanel(legal, "cards", send, state),
  preactions: true, // pre-action boxes while others act (preactions.js)
  firstEvent: "match_start",
  init, reduce, fromView, seatView, center, describe,
  fairness: { replay, draws: drawnFirst("dealer") },
  history: { hand: handSteps },
  labels: {
    jokers: "Jokers", preflop_betting: "Betting before the flop", max_hands: "Hands at most (blank: play to the end)",
    dealer: "First dealer (seat)",
  },
  lobby: { alamo: { featured: ["preflop_betting", "max_hands"], blurb: "Hold'em where your cards are your chips: win every card." } },
};
