// The hand histories of finished matches (GET /api/tables/{id}/hands, SPEC "HTTP") as replayable
// hands: PHH (.phhs text) for Hold'em, the games' JSON records for the others (server/hands.py,
// each engine's hand_record()). A hand is {label, steps: [{text, scene}]}; a scene is what the
// replayer draws after that step: {board: [cards] | null, pile: {label, cards} | null, note,
// seats: [{seat, name, cards: [cards] | null, stack (text), bet (text), status, shows}]}.
// Amounts are chips in Hold'em, cards in Alamo and Avalanche.

import { cardsText } from "./cards.js";
import { handTitle } from "./showdown.js";

const fmt = (n) => (typeof n === "number" ? n.toLocaleString("en-US") : String(n ?? ""));
const clone = (x) => JSON.parse(JSON.stringify(x));
const cap = (t) => t[0].toUpperCase() + t.slice(1);

/** The hands of a /hands body: `text` the body, `game` the table's game, `names` {seat: name}. */
export function parseHands(text, game, names) {
  const n = (seat) => (names && names[seat]) || `seat ${seat}`;
  if (game === "no_limit_holdem" || game === "fixed_limit_holdem") return parsePHHS(text).map((hd) => holdemHand(hd, n));
  const body = JSON.parse(text);
  return (body.hands || []).map(({ match, hand }, i) => {
    const maker = { loco_poker: locoHand, alamo: alamoHand, avalanche: avalancheHand }[game] || genericHand;
    const out = maker(hand, n);
    out.label = `Match ${match} · ${hand.hand != null ? `hand ${hand.hand}` : game === "avalanche" ? "the game" : `record ${i + 1}`}`;
    return out;
  });
}

// ---------------------------------------------------------------- PHH (.phhs, TOML as engine/phh.py writes it)
/** The hands of a .phhs text: [{...fields}] in order (tables [N]; [N.sub] as nested maps). */
export function parsePHHS(text) {
  const hands = [];
  const byName = new Map();
  let target = null;
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (!line || line.startsWith("#")) continue;
    const head = line.match(/^\[([^\]]+)\]$/);
    if (head) {
      const [top, sub] = head[1].split(".");
      if (!sub) { target = {}; hands.push(target); byName.set(top, target); } else if (byName.has(top)) { target = byName.get(top)[sub] = {}; }
      continue;
    }
    const kv = line.match(/^([A-Za-z_][\w-]*)\s*=\s*(.*)$/);
    if (!kv || !target) continue;
    let raw = kv[2];
    // a multi-line array: read on until its brackets balance (strings hold no brackets here)
    while ((raw.match(/\[/g) || []).length > (raw.match(/\]/g) || []).length && i + 1 < lines.length) raw += lines[++i].trim();
    target[kv[1]] = tomlValue(raw);
  }
  return hands;
}

function tomlValue(raw) {
  // TOML's strings, numbers, booleans and arrays as tomli_w writes them are JSON but for trailing commas
  try {
    return JSON.parse(raw.replace(/,\s*\]/g, "]"));
  } catch {
    return raw;
  }
}

function holdemHand(hd, n) {
  const seats = hd._cardhall_seats || hd.starting_stacks.map((_, i) => i + 1);
  const who = (label) => seats[Number(label.slice(1)) - 1];
  const st = {
    board: [], stacks: [...hd.starting_stacks], bets: seats.map(() => 0), pot: 0, cards: {}, folded: new Set(), shows: {},
  };
  // pokerkit's positional blinds: heads-up, the list is reversed (the button, p2, posts the small blind)
  const heads = seats.length === 2 ? (list) => [...list].reverse() : (list) => list;
  const blinds = heads(hd.blinds_or_straddles || []);
  const antes = heads(hd.antes || []);
  seats.forEach((_, i) => {
    const a = Math.min(antes[i] || 0, st.stacks[i]);
    st.stacks[i] -= a;
    st.pot += a;
    const b = Math.min(blinds[i] || 0, st.stacks[i]);
    st.stacks[i] -= b;
    st.bets[i] = b;
  });
  const scene = (note) => ({
    board: [...st.board], note: note || `Pot ${fmt(st.pot + st.bets.reduce((x, y) => x + y, 0))}`, pile: null,
    seats: seats.map((seat, i) => ({
      seat, name: n(seat), cards: st.cards[seat] ? [...st.cards[seat]] : null, stack: `${fmt(st.stacks[i])} chips`,
      bet: st.bets[i] ? `${fmt(st.bets[i])}` : null, status: st.folded.has(seat) ? "folded" : st.stacks[i] === 0 ? "all-in" : null,
      shows: st.shows[seat] || null,
    })),
  });
  const steps = [];
  const posts = seats.map((seat, i) => (st.bets[i] ? `${n(seat)} ${fmt(st.bets[i])}` : null)).filter(Boolean);
  steps.push({ text: `Hand ${hd._cardhall_hand ?? ""}: ${n(hd._cardhall_button)} has the button; blinds ${posts.join(", ") || "none"}`, scene: scene() });
  const sweep = () => { st.pot += st.bets.reduce((x, y) => x + y, 0); st.bets = st.bets.map(() => 0); };
  for (const action of hd.actions || []) {
    const w = action.split("#")[0].trim().split(/\s+/);
    let text = action;
    if (w[0] === "d" && w[1] === "dh") {
      const seat = who(w[2]);
      st.cards[seat] = cardList(w[3]);
      text = `${n(seat)} is dealt ${cardsText(st.cards[seat])}`;
    } else if (w[0] === "d" && w[1] === "db") {
      sweep();
      st.board.push(...cardList(w[2]));
      const street = { 3: "flop", 4: "turn", 5: "river" }[st.board.length] || "board";
      text = `${cap(street)}: ${cardsText(cardList(w[2]))}`;
    } else {
      const seat = who(w[0]);
      const i = seats.indexOf(seat);
      const top = Math.max(...st.bets);
      if (w[1] === "f") { st.folded.add(seat); text = `${n(seat)} folds`; } else if (w[1] === "cc") {
        const add = Math.min(top - st.bets[i], st.stacks[i]);
        st.stacks[i] -= add;
        st.bets[i] += add;
        text = add ? `${n(seat)} calls ${fmt(add)}${st.stacks[i] ? "" : " (all-in)"}` : `${n(seat)} checks`;
      } else if (w[1] === "cbr") {
        const to = Number(w[2]);
        st.stacks[i] -= to - st.bets[i];
        st.bets[i] = to;
        text = `${n(seat)} ${top ? "raises to" : "bets"} ${fmt(to)}${st.stacks[i] ? "" : " (all-in)"}`;
      } else if (w[1] === "sm") {
        if (w[2] && w[2] !== "-") {
          st.cards[seat] = cardList(w[2]);
          const name = st.board.length === 5 ? handTitle([...st.board, ...st.cards[seat]], null) : null;
          st.shows[seat] = name || "shows";
          text = `${n(seat)} shows ${cardsText(st.cards[seat])}${name ? ` (${name})` : ""}`;
        } else text = `${n(seat)} mucks`;
      }
    }
    steps.push({ text, scene: scene() });
  }
  sweep();
  // what each seat took from the middle (an uncalled bet returned included): its stack after less before
  const took = seats.map((seat, i) => [seat, (hd.finishing_stacks || [])[i] - st.stacks[i]]).filter(([, d]) => d > 0);
  st.stacks = [...(hd.finishing_stacks || st.stacks)];
  st.pot = 0;
  steps.push({ text: took.length ? took.map(([s, d]) => `${n(s)} wins ${fmt(d)}`).join(", ") : "Hand over", scene: scene("Hand over") });
  return { label: `Match ${hd._cardhall_match ?? "?"} · hand ${hd._cardhall_hand ?? "?"}`, steps };
}

/** "AcKd" -> ["Ac", "Kd"] ("??" stays an unknown card). */
function cardList(word) {
  return (word || "").match(/.{2}/g) || [];
}

// ---------------------------------------------------------------- Loco Poker, Alamo, Avalanche, any other
const BOARD_AT = { preflop: 0, flop: 3, turn: 4, river: 5 };
const LOCO_OUTCOMES = {
  checked_down: "checked down: no points", folded_around: "folded around: no points",
  uncalled_all_in: "uncalled all-in: a point", all_in_won: "the all-in won", all_in_lost: "the all-in lost", push: "push",
};

function locoHand(r, n) {
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
  const parts = [LOCO_OUTCOMES[o.result] || o.result];
  if (o.scored != null) parts.push(`${n(o.scored)} scores a point`);
  if ((o.knocked_out || []).length) parts.push(`knocked out: ${o.knocked_out.map(n).join(", ")}`);
  const points = Object.entries(r.points || {}).map(([s, p]) => `${n(Number(s))} ${p}`).join(", ");
  steps.push({ text: `${cap(parts.filter(Boolean).join("; "))}`, scene: scene(`Points: ${points}`) });
  return { steps };
}

function alamoHand(r, n) {
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
    const name = st.board.length === 5 ? handTitle([...st.board, ...cards], null) : null;
    st.shows[seat] = name || "shows";
    steps.push({ text: `${n(seat)} shows ${cardsText(cards)}${name ? ` (${name})` : ""}`, scene: scene() });
  }
  Object.assign(stacks, r.finishing_stacks || {});
  st.bets = {};
  const pots = (r.pots || []).map((p, i) => `${i ? `side pot ${i}` : "pot"} (${Object.values(p.shares || {}).reduce((a, b) => a + b, 0) || p.cards} cards) to ${p.winners.map(n).join(" & ")}`);
  steps.push({ text: cap(pots.join("; ") || `hand over (${r.reason})`), scene: scene(`Hand over (${r.reason})`) });
  return { steps };
}

function avalancheHand(r, n) {
  const hands = clone(r.deal || {});
  const stored = Object.fromEntries((r.seats || []).map((s) => [s, 0]));
  let pile = [];
  let neutral = 0;
  const take = (seat, cards) => { for (const c of cards) { const i = (hands[seat] || []).indexOf(c); if (i >= 0) hands[seat].splice(i, 1); } };
  const scene = (note) => ({
    board: null, note: note || `Neutral pile ${neutral}`, pile: { label: "Avalanche", cards: [...pile] },
    seats: (r.seats || []).map((seat) => ({ seat, name: n(seat), cards: [...(hands[seat] || [])], stack: `stored ${stored[seat]}`,
      bet: null, status: null, shows: null })),
  });
  const steps = [{ text: `${n(r.dealer)} deals ten cards each`, scene: scene() }];
  const OUT = { start: "starts an avalanche", grow: "grows it", stop: "stops it", fall: "lets it fall" };
  for (const m of r.moves || []) {
    let text = `${n(m.seat)} ${m.type}`;
    if (m.type === "snowfall") { (hands[m.seat] = hands[m.seat] || []).push(m.card); text = `${n(m.seat)} takes a snowfall: ${cardsText([m.card])}`; } else if (m.type === "refill") {
      (hands[m.seat] = hands[m.seat] || []).push(...m.cards);
      text = `${n(m.seat)} draws ${cardsText(m.cards)}`;
    } else if (m.type === "out") text = `${n(m.seat)} is out of cards`;
    else if (m.type === "play") {
      take(m.seat, m.cards);
      pile.push(...m.cards);
      text = `${n(m.seat)} plays ${cardsText(m.cards)}: ${OUT[m.outcome] || m.outcome}`;
      if (m.outcome === "stop") { neutral += pile.length; text += ` (${pile.length} cards to the neutral pile)`; pile = []; }
      if (m.outcome === "fall") { stored[m.to] += pile.length; text += `: ${n(m.to)} takes ${pile.length} cards`; pile = []; }
    }
    steps.push({ text, scene: scene() });
  }
  for (const [seat, cards] of Object.entries(r.stored || {})) stored[seat] = cards.length;
  const res = r.result || {};
  steps.push({ text: `Game over: ${(res.winners || []).map(n).join(", ")} ${(res.winners || []).length > 1 ? "win" : "wins"}`,
    scene: scene(`Stored: ${Object.entries(stored).map(([s, c]) => `${n(Number(s))} ${c}`).join(", ")}`) });
  return { steps };
}

/** A game without a replay of its own: one step per entry of the record's `actions` or `moves`,
 * then the record's other fields. */
function genericHand(r) {
  const list = Array.isArray(r.actions) ? r.actions : Array.isArray(r.moves) ? r.moves : [];
  const scene = (note) => ({ board: Array.isArray(r.board) ? r.board : null, note, pile: null, seats: [] });
  const steps = list.map((a) => ({ text: typeof a === "string" ? a : Object.entries(a).map(([k, v]) => `${k} ${Array.isArray(v) ? v.join(" ") : v}`).join(", "), scene: scene() }));
  steps.push({ text: "Record", scene: scene(JSON.stringify(r).slice(0, 600)) });
  return { steps };
}
