// The G-2 check of a finished match (protocol/SPEC.md, "Randomness"): the revealed server seed
// must hash to the commitment published before the match, and the generator keyed with it and
// the client seeds, replayed in the order each engine documents its random choices, must deal
// every card this page saw. Each game's replay is its renderer module's `fairness` part
// (games/index.js); this module runs it and holds what several games' replays share.
//
// A record is what the page kept of one match:
//   {game, match, you (seat or null), options (the table's options), commitment (as published
//    before the match, or null if the page was not there), complete (every event since
//    match_started), events: [event payloads with seq], snapshot (the engine view the page
//    got when it joined mid-match, or null)}
// `verifyMatch(record, ended)` (`ended`: the match_ended event) resolves to
//   {status: "verified" | "mismatch" | "partial" | "unavailable" (a game whose module has no
//    replay: only the commitment is checked), commitmentOk, checked (distinct cards: deck
//    positions, a card seen twice, as dealt and as played, counts once), hands,
//    mismatches: [text], notes: [text]}

import { commitmentOf, deriveKey, replayWith, seedsInSeatOrder } from "./fair.js";
import { cardText, standardDeck } from "./cards.js";
import { gameInfo, loadGames } from "./games/index.js";

/** `seats` (numbers) clockwise starting left of `after` (engine/seats.py). */
export function clockwise(seats, after) {
  const ordered = [...seats].sort((a, b) => a - b);
  return [...ordered.filter((s) => s > after), ...ordered.filter((s) => s <= after)];
}

/** What a replay found: the cards compared (`checked`: distinct places verified), the hands they
 * were in (`hands`, a Set), `mismatches` and `notes` (text). A game's replay makes one and fills it. */
export class Checks {
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

  /** Compare a fact the page saw (`got`: a count, a seat) with the replay's (`expected`). */
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

// -------------------------------------------------------- one shuffle per hand, hole cards and a board
/** The places of the five board cards in a hand of `n` players: burn, three, burn, one, burn, one. */
function boardIndex(n) {
  return [2 * n + 1, 2 * n + 2, 2 * n + 3, 2 * n + 5, 2 * n + 7];
}

/**
 * The decks of a match that shuffles one standard deck per hand from `rng` (the G-2 generator),
 * in hand order: returns `deckOf(hand)`, hand k's shuffled deck (1-based; the shuffles up to hand
 * k are drawn on first use, so hands are read in any order).
 */
export function handDecks(rng) {
  const decks = [];
  return (hand) => {
    while (decks.length < hand) {
      const deck = standardDeck();
      rng.shuffle(deck);
      decks.push(deck);
    }
    return decks[hand - 1];
  };
}

/**
 * The replay of a game that shuffles a fresh 52-card deck for each hand and deals it as the
 * community-card deal does: P1..Pn (the hand's players in dealing order, `hand_start.players`)
 * get deck[k-1] and deck[n+k-1]; burn, three board cards deck[2n+1..2n+3], burn, deck[2n+5],
 * burn, deck[2n+7]. Before the first hand, when `drawFirst`, the generator draws the first
 * `firstKey` seat (`match_start[firstKey]`) among the sorted seats.
 *
 * The events it reads: hand_start {hand, players}, hole_cards {cards} (the viewer's), board or
 * street {board}, show {seat, cards}, showdown {hands: [{seat, cards}], board}. `snapshotHole`:
 * the snapshot view's field with the viewer's hole cards. Returns a `Checks`.
 */
export function replayBoardDeal(rng, rec, drawFirst, { firstKey, snapshotHole }) {
  const checks = new Checks();
  const deckOf = handDecks(rng);
  const start = rec.events.find((e) => e.type === "match_start");
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
    hole(snap.hand, rec.you, snap[snapshotHole]);
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

/**
 * A `fairness.draws` for a game whose first dealer (or button) the generator draws before
 * anything else unless the table set it with the option `option`: first in match 1 without that
 * option, else not drawn first; both are tried, the likely one first.
 */
export function drawnFirst(option) {
  return (rec) => {
    const set = rec.options && rec.options[option] != null;
    const likely = rec.match === 1 && !set;
    return [likely, !likely];
  };
}

/** The `fairness` part of `game`'s renderer module (games/index.js), or null: none, or the
 * catalogue could not be read. */
async function fairnessOf(game) {
  try {
    await loadGames();
  } catch {
    return null;
  }
  const fairness = gameInfo(game).module.fairness;
  return fairness && typeof fairness.replay === "function" ? fairness : null;
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
  const fairness = await fairnessOf(record.game);
  if (!fairness) {
    out.status = "unavailable";
    out.notes.push("this page has no replay of this game's random choices: only the commitment was checked");
    return out;
  }
  const key = await deriveKey(ended.server_seed, seedsInSeatOrder(ended.client_seeds));
  let first = null;
  let failure = null;
  for (const draw of fairness.draws ? fairness.draws(record) : [false]) {
    let checks;
    try {
      checks = await replayWith(key, (rng) => fairness.replay(rng, record, draw));
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
