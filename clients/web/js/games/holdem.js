// Fixed-limit and no-limit Hold'em (engine/holdem.py): the state the page keeps, updated event by
// event with the same field names as the engine's view(), and how it is drawn.

import { h } from "../dom.js";
import { cardsText } from "../cards.js";
import { amount, boardEl, fmt, has, holeEl, key, nameOf } from "./common.js";
import { bettingPanel } from "../actions.js";
import { bestFive, categoryName, handTitle, markWinning, resultEl, wonEl } from "../showdown.js";
import { drawnFirst, replayBoardDeal } from "../verify.js";

const cap = (t) => t[0].toUpperCase() + t.slice(1);

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

// ---------------------------------------------------------------- hand history (PHH)
/** The replayer's steps of one PHH hand (hands.js parsePHHS; engine/phh.py writes it, with the
 * table's seats, hand, match and button in its `_cardhall_*` fields); `n(seat)` a seat's name. */
function phhHand(hd, n) {
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
  return { label: `hand ${hd._cardhall_hand ?? "?"}`, steps };
}

/** "AcKd" -> ["Ac", "Kd"] ("??" stays an unknown card). */
function cardList(word) {
  return (word || "").match(/.{2}/g) || [];
}

// ---------------------------------------------------------------- the G-2 check
// One shuffle of a fresh 52-card deck per hand, dealt as verify.js's replayBoardDeal says. The first
// button: fixed limit's is seat 1 or the table's choice (FL-1), never drawn; no limit's is drawn
// first unless the table set it.
const drawnButton = drawnFirst("button");

const fairness = {
  replay: (rng, rec, drawn) => replayBoardDeal(rng, rec, drawn, { firstKey: "button", snapshotHole: "hole" }),
  draws: (rec) => (rec.game === "fixed_limit_holdem" ? [false] : drawnButton(rec)),
};

export default {
  unit: "chips",
  panel: (legal, state, send) => bettingPanel(legal, "chips", send, state),
  preactions: true, // pre-action boxes while others act (preactions.js)
  firstEvent: "match_start",
  init, reduce, fromView, seatView, center, describe,
  fairness,
  history: { hand: phhHand, phh: true },
  labels: {
    starting_stacks: "Starting stack", small_blind: "Small blind", big_blind: "Big blind",
    blind_levels: "Hands per blind level (0: never up)", small_bet: "Small bet", big_bet: "Big bet", cap: "Bets per round",
    ante: "Ante", big_blind_ante: "Big blind ante", min_bet: "Minimum bet", button: "First button (seat)", item_stakes: "Item stakes",
  },
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
