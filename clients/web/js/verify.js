// The G-2 check of a finished match (protocol/SPEC.md, "Randomness"): the revealed server seed
// must hash to the commitment published before the match, and the generator keyed with it and
// the client seeds, replayed in the order each engine documents its random choices, must deal
// every card this page saw.
//
// A record is what the page kept of one match:
//   {game, match, you (seat or null), options (the table's options), commitment (as published
//    before the match, or null if the page was not there), complete (every event since
//    match_started), events: [event payloads with seq], snapshot (the engine view the page
//    got when it joined mid-match, or null)}
// `verifyMatch(record, ended)` (`ended`: the match_ended event) resolves to
//   {status: "verified" | "mismatch" | "partial" | "unavailable" (a game this page has no replay
//    for: only the commitment is checked), commitmentOk, checked (distinct cards: deck
//    positions, a card seen twice, as dealt and as played, counts once), hands,
//    mismatches: [text], notes: [text]}

import { commitmentOf, deriveKey, replayWith, seedsInSeatOrder } from "./fair.js";
import { cardText, multiDeck, standardDeck } from "./cards.js";

/** `seats` (numbers) clockwise starting left of `after` (engine/seats.py). */
export function clockwise(seats, after) {
  const ordered = [...seats].sort((a, b) => a - b);
  return [...ordered.filter((s) => s > after), ...ordered.filter((s) => s <= after)];
}

class Checks {
  constructor() {
    this.seen = new Set();
    this.verified = new Set(); // the deck positions (or per-hand card slots) found as the seed deals them
    this.mismatches = [];
    this.notes = [];
    this.hands = new Set();
  }

  /** Distinct cards verified (a card seen as dealt and again as played counts once). */
  get checked() {
    return this.verified.size;
  }

  /** Compare one card the page saw (`got`) with the replay's (`expected`); `key` is checked once;
   * `pos` names the card's place in the deal (default `key`). */
  card(key, label, expected, got, pos = key) {
    if (this.seen.has(key)) return;
    this.seen.add(key);
    if (expected === got) this.verified.add(pos);
    else this.mismatches.push(`${label}: the page saw ${cardText(got)}, the seed deals ${expected === undefined ? "nothing" : cardText(expected)}`);
  }

  /** Compare a multiset of cards the page saw with the replay's (`expected`, dealt from the
   * places `positions`). */
  multiset(key, label, expected, got, positions) {
    if (this.seen.has(key)) return;
    this.seen.add(key);
    if (sameMultiset(expected, got)) for (const p of positions) this.verified.add(p);
    else this.mismatches.push(`${label}: the page saw ${got.map(cardText).join(" ")}, the seed deals ${expected.map(cardText).join(" ")}`);
  }

  /** `cards` must be taken out of `pool` (the deck positions of the cards a seat holds in `deck`). */
  takeFrom(key, label, deck, pool, cards) {
    if (this.seen.has(key)) return;
    this.seen.add(key);
    const taken = [];
    for (const c of cards) {
      const i = pool.findIndex((p) => deck[p] === c);
      if (i < 0) { this.mismatches.push(`${label}: ${cardText(c)} was not among the cards the seed dealt to that seat`); return; }
      taken.push(...pool.splice(i, 1));
    }
    for (const p of taken) this.verified.add(p);
  }

  fact(label, expected, got) {
    if (expected !== got) this.mismatches.push(`${label}: the page saw ${got}, the seed gives ${expected}`);
  }
}

function sameMultiset(a, b) {
  if (a.length !== b.length) return false;
  const x = [...a].sort();
  const y = [...b].sort();
  return x.every((c, i) => c === y[i]);
}

// ---------------------------------------------------------------- Hold'em and Loco Poker
// One shuffle of a fresh 52-card deck per hand; P1..Pn (the hand's players in dealing order) get
// deck[k-1] and deck[n+k-1]; burn, flop deck[2n+1..2n+3], burn, turn deck[2n+5], burn, river deck[2n+7].

function boardIndex(n) {
  return [2 * n + 1, 2 * n + 2, 2 * n + 3, 2 * n + 5, 2 * n + 7];
}

function replayDealt(rng, rec, drawFirst) {
  const checks = new Checks();
  const holdem = rec.game !== "loco_poker";
  const decks = [];
  const deckOf = (hand) => {
    while (decks.length < hand) {
      const deck = standardDeck();
      rng.shuffle(deck);
      decks.push(deck);
    }
    return decks[hand - 1];
  };
  const start = rec.events.find((e) => e.type === "match_start");
  const firstKey = holdem ? "button" : "dealer";
  if (drawFirst) {
    const seats = [...(start || rec.snapshot || {}).seats || []].sort((a, b) => a - b);
    if (!seats.length) throw new Error("the seats of the match are unknown");
    const drawn = seats[rng.randbelow(seats.length)];
    if (start) checks.fact(`first ${firstKey}`, drawn, start[firstKey]);
  }
  const players = {};
  const hole = (hand, seat, cards) => {
    const list = players[hand];
    if (!list || !cards) return;
    const n = list.length;
    const k = list.indexOf(seat);
    if (k < 0) { checks.mismatches.push(`hand ${hand}: seat ${seat} shows cards but was not dealt in`); return; }
    const deck = deckOf(hand);
    checks.hands.add(hand);
    checks.card(`${hand}/h${seat}/0`, `hand ${hand}, seat ${seat}'s first hole card`, deck[k], cards[0]);
    checks.card(`${hand}/h${seat}/1`, `hand ${hand}, seat ${seat}'s second hole card`, deck[n + k], cards[1]);
  };
  const board = (hand, cards) => {
    const list = players[hand];
    if (!list || !cards) return;
    const deck = deckOf(hand);
    const idx = boardIndex(list.length);
    checks.hands.add(hand);
    cards.forEach((c, i) => checks.card(`${hand}/b${i}`, `hand ${hand}, board card ${i + 1}`, deck[idx[i]], c));
  };
  const snap = rec.snapshot;
  if (snap && snap.hand && snap.players && snap.players.length) {
    players[snap.hand] = snap.players;
    if (holdem) hole(snap.hand, rec.you, snap.hole);
    else hole(snap.hand, rec.you, snap.hole_cards);
    board(snap.hand, snap.board);
    for (const [seat, cards] of Object.entries(snap.shown || {})) hole(snap.hand, Number(seat), cards);
  }
  let hand = snap ? snap.hand : 0;
  for (const e of rec.events) {
    switch (e.type) {
      case "hand_start":
        hand = e.hand;
        players[hand] = e.players;
        deckOf(hand);
        break;
      case "hole_cards":
        if (e.cards) hole(hand, rec.you, e.cards);
        break;
      case "board": case "street":
        board(hand, e.board);
        break;
      case "show":
        hole(hand, e.seat, e.cards);
        break;
      case "showdown":
        for (const shown of e.hands || []) hole(hand, shown.seat, shown.cards);
        board(hand, e.board);
        break;
      default:
    }
  }
  return checks;
}

// ------------------------------------------------------------------------------- Alamo
// The whole match is replayed (engine/games/alamo.py): the shuffled deck dealt into stacks
// deck[k::n], antes, bets and uncalled cards moved as the events say, board cards drawn at random
// from the face-down pot, and the winnings shuffled under the winners' stacks.

function replayAlamo(rng, rec, drawFirst) {
  const checks = new Checks();
  if (!rec.complete) throw new Error("the Alamo stacks are replayed from the first event: this page missed some");
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

// --------------------------------------------------------------------------- Avalanche
// One shuffle of the multi-deck; ten rounds dealt from the top clockwise from the dealer's left;
// snowfalls and refills from the top (their position follows from the public deck count); every
// card played must be one the seed dealt to that seat.

function replayAvalanche(rng, rec, drawFirst) {
  const checks = new Checks();
  let deck = null;
  let total = 0;
  const held = {}; // seat -> deck positions of the cards it holds
  let tracking = false; // every card each seat received is known (the record has the deal)
  const start = rec.events.find((e) => e.type === "game_start");
  if (!start) throw new Error("the Avalanche deck is shuffled at game start: its event is needed");
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

const REPLAYS = {
  fixed_limit_holdem: replayDealt,
  no_limit_holdem: replayDealt,
  loco_poker: replayDealt,
  alamo: replayAlamo,
  avalanche: replayAvalanche,
};

/** Whether the first button/dealer of this match came from the generator (else the table set it). */
function drawHypotheses(rec) {
  if (rec.game === "fixed_limit_holdem") return [false]; // FL-1: seat 1, or the table's choice
  const key = rec.game === "no_limit_holdem" ? "button" : "dealer";
  const set = rec.options && rec.options[key] != null;
  const likely = rec.match === 1 && !set;
  return [likely, !likely];
}

/** The G-2 check of a finished match; see the module comment for `record` and the result. */
export async function verifyMatch(record, ended) {
  const out = { status: "partial", commitmentOk: false, checked: 0, hands: 0, mismatches: [], notes: [] };
  const revealed = await commitmentOf(ended.server_seed);
  out.commitmentOk = revealed === ended.commitment && (record.commitment == null || record.commitment === revealed);
  if (!out.commitmentOk) {
    out.status = "mismatch";
    out.mismatches.push(`SHA-256 of the revealed seed is ${revealed}, the commitment was ${record.commitment || ended.commitment}`);
    return out;
  }
  if (record.commitment == null) out.notes.push("this page joined after the match began: the commitment is the one announced at its start");
  const replay = REPLAYS[record.game];
  if (!replay) {
    out.status = "unavailable";
    out.notes.push("this page has no replay of this game's random choices: only the commitment was checked");
    return out;
  }
  const key = await deriveKey(ended.server_seed, seedsInSeatOrder(ended.client_seeds));
  let first = null;
  let failure = null;
  for (const draw of drawHypotheses(record)) {
    let checks;
    try {
      checks = await replayWith(key, (rng) => replay(rng, record, draw));
    } catch (err) {
      failure = failure || String(err.message || err);
      continue;
    }
    if (first === null) first = checks;
    if (checks.mismatches.length === 0) { first = checks; break; }
  }
  if (first === null) {
    out.notes.push(failure);
    return out;
  }
  out.checked = first.checked;
  out.hands = first.hands.size;
  out.mismatches = first.mismatches;
  out.notes.push(...first.notes);
  if (out.mismatches.length) out.status = "mismatch";
  else if (out.checked > 0) out.status = record.complete ? "verified" : "partial";
  else out.notes.push("no card of this match was seen here");
  if (out.status === "partial" && out.checked > 0 && !record.complete) out.notes.push("joined mid-match: the cards seen since were checked");
  return out;
}
