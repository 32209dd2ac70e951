"use strict";
/**
 * No-limit Hold'em for the Colyseus side of the comparison: the table's state as @colyseus/schema
 * classes (what Colyseus sends) and the rules that change it (what the room runs on each message).
 *
 * The rules are cardhall's `no_limit_holdem` defaults: stacks 1000, blinds 10/20 doubling every 15
 * hands, the smallest bet the big blind, raise-to totals, a raise adds at least the last full bet or
 * raise, an all-in short of a full raise does not reopen the betting to players who already acted,
 * side pots, uncalled chips returned, the board run out when at most one player can still bet, the
 * best 7-card hand (the `phe` evaluator) wins each pot, odd chips clockwise from the button's left,
 * a match played until one player holds every chip, then a rematch when a player asks. The button
 * moves to the next seat still in (cardhall applies the dead-button rule: a few hands differ in who
 * posts, not in the work per action).
 *
 * Hole cards are in `Player.hole`, a field tagged `view: true`: a client sees it only for the player
 * instance its StateView holds (its own seat). Cards shown at a showdown go to the public `shown`.
 */
const crypto = require("node:crypto");
const { schema } = require("@colyseus/schema");
const phe = require("phe");

const Player = schema({
  seat: { type: "uint8", default: 0 },
  name: { type: "string", default: "" },
  stack: { type: "uint32", default: 0 },
  bet: { type: "uint32", default: 0 },  // chips in front of the seat this street
  folded: { type: "boolean", default: false },
  allIn: { type: "boolean", default: false },
  inHand: { type: "boolean", default: false },  // dealt into the current hand
  out: { type: "boolean", default: false },  // busted this match
  lastAction: { type: "string", default: "" },
  shown: ["string"],      // cards shown at a showdown (public)
  hole: { array: "string", view: true },  // this seat's cards: only in the seat's own view
}, "Player");

const Pot = schema({ amount: { type: "uint32", default: 0 }, eligible: ["uint8"] }, "Pot");

const TableState = schema({
  status: { type: "string", default: "" },  // waiting, running, finished
  match: { type: "uint16", default: 0 },
  hand: { type: "uint16", default: 0 },
  level: { type: "uint8", default: 0 },
  smallBlind: { type: "uint32", default: 0 },
  bigBlind: { type: "uint32", default: 0 },
  button: { type: "uint8", default: 0 },
  street: { type: "string", default: "" },  // preflop, flop, turn, river, "" between hands
  board: ["string"],
  pots: [Pot],            // pots of the streets closed so far
  pot: { type: "uint32", default: 0 },  // every chip in the middle, bets included
  toAct: { type: "uint8", default: 0 },  // the seat to act, 0 for none
  turnId: { type: "uint32", default: 0 },  // the turn's number: an action names it (stale ones are refused)
  toCall: { type: "uint32", default: 0 },  // chips the seat to act must add to call
  minRaiseTo: { type: "uint32", default: 0 },  // bet/raise bounds of the seat to act (raise-to totals)
  maxRaiseTo: { type: "uint32", default: 0 },
  canRaise: { type: "boolean", default: false },
  canAllIn: { type: "boolean", default: false },  // all_in is legal for the seat to act
  raiseKind: { type: "string", default: "" },  // "bet" or "raise"
  actions: { type: "uint32", default: 0 },  // actions applied at this table, ever
  lastSeat: { type: "uint8", default: 0 },
  lastAction: { type: "string", default: "" },
  lastAmount: { type: "uint32", default: 0 },
  players: { map: Player },
  spectators: { type: "uint8", default: 0 },
}, "TableState");

const RANKS = "23456789TJQKA";
const SUITS = "cdhs";
const DECK = [];
for (const r of RANKS) for (const s of SUITS) DECK.push(r + s);

/** A freshly shuffled deck (Fisher-Yates over crypto.randomInt). */
function shuffled() {
  const deck = DECK.slice();
  for (let i = deck.length - 1; i > 0; i--) {
    const j = crypto.randomInt(i + 1);
    const t = deck[i]; deck[i] = deck[j]; deck[j] = t;
  }
  return deck;
}

/** An action the rules refuse: `code` like cardhall's (not_your_turn, stale_turn, illegal_action, bad_state). */
class Refused extends Error {
  constructor(code, message) { super(message); this.code = code; }
}

/**
 * One table's rules over a TableState. `seats` seats (2..9); options as cardhall's (`stack`,
 * `smallBlind`, `bigBlind`, `levels`: hands between doublings). The deck is private to this object.
 */
class HoldemTable {
  constructor(state, seats = 6, options = {}) {
    this.state = state;
    this.seats = seats;
    this.options = { stack: 1000, smallBlind: 10, bigBlind: 20, levels: 15, ...options };
    this.deck = [];
    this.holes = new Map();       // seat -> [c1, c2], the room's own copy
    this.contributed = new Map(); // seat -> chips put in this hand (closed streets)
    this.acted = new Map();       // seat -> acted since the last full bet or raise
    this.currentBet = 0;
    this.lastRaise = 0;
    this.firstButton = 0;
    state.status = "waiting";
  }

  player(seat) { return this.state.players.get(String(seat)); }

  /** Seats 1..n in order, starting after `seat`, filtered by `keep(player)`. */
  after(seat, keep) {
    const out = [];
    for (let k = 1; k <= this.seats; k++) {
      const s = ((seat - 1 + k) % this.seats) + 1;
      const p = this.player(s);
      if (p && keep(p)) out.push(s);
    }
    return out;
  }

  /** Start a match: every seat is taken. The first match's button is drawn, a rematch's is the next seat. */
  startMatch() {
    const st = this.state;
    st.match += 1;
    st.hand = 0;
    st.status = "running";
    for (let s = 1; s <= this.seats; s++) {
      const p = this.player(s);
      p.stack = this.options.stack; p.out = false; p.bet = 0; p.folded = false; p.allIn = false;
    }
    this.firstButton = this.firstButton ? (this.firstButton % this.seats) + 1 : 1 + crypto.randomInt(this.seats);
    st.button = this.firstButton;
    this.startHand(true);
  }

  startHand(first = false) {
    const st = this.state;
    const live = this.after(0, (p) => !p.out);
    if (live.length < 2) return this.endMatch();
    st.hand += 1;
    st.level = Math.floor((st.hand - 1) / this.options.levels);
    const mult = 2 ** st.level;
    st.smallBlind = this.options.smallBlind * mult;
    st.bigBlind = this.options.bigBlind * mult;
    if (!first || this.player(st.button).out) st.button = this.after(st.button, (p) => !p.out)[0];
    const order = this.after(st.button, (p) => !p.out);   // first left of the button .. the button
    const sbSeat = live.length === 2 ? st.button : order[0];
    const bbSeat = this.after(sbSeat, (p) => !p.out)[0];
    this.deck = shuffled();
    this.holes.clear(); this.contributed.clear(); this.acted.clear();
    st.board.clear(); st.pots.clear();
    st.pot = 0; st.street = "preflop";
    for (let s = 1; s <= this.seats; s++) {
      const p = this.player(s);
      p.bet = 0; p.folded = false; p.allIn = false; p.lastAction = "";
      p.inHand = !p.out;
      if (p.shown.length) p.shown.clear();
      if (p.hole.length) p.hole.clear();
    }
    const dealOrder = this.after(sbSeat - 1 || this.seats, (p) => !p.out); // from the small blind
    for (const s of dealOrder) {
      const cards = [this.deck.pop(), this.deck.pop()];
      this.holes.set(s, cards);
      this.contributed.set(s, 0);
      this.acted.set(s, false);
      const p = this.player(s);
      p.hole.push(cards[0], cards[1]);
    }
    this.post(sbSeat, st.smallBlind);
    this.post(bbSeat, st.bigBlind);
    this.currentBet = Math.max(this.player(sbSeat).bet, this.player(bbSeat).bet);
    this.lastRaise = st.bigBlind;
    this.nextTurn(bbSeat);
  }

  post(seat, amount) {
    const p = this.player(seat);
    const put = Math.min(amount, p.stack);
    p.stack -= put; p.bet += put; this.state.pot += put;
    if (p.stack === 0) p.allIn = true;
  }

  /** Legal actions of `seat` now, in cardhall's form ({type, min, max, as}). */
  legal(seat) {
    const p = this.player(seat);
    const toCall = this.currentBet - p.bet;
    const all = p.bet + p.stack;
    const reopened = !this.acted.get(seat);
    const out = [];
    if (toCall > 0) out.push({ type: "fold" });
    else out.push({ type: "check" });
    if (toCall > 0) { const c = Math.min(toCall, p.stack); out.push({ type: "call", min: c, max: c }); }
    const kind = this.currentBet === 0 ? "bet" : "raise";
    const lo = this.currentBet === 0 ? this.state.bigBlind : this.currentBet + this.lastRaise;
    if (reopened && all >= lo) out.push({ type: kind, min: lo, max: all });
    if (p.stack > 0 && (all <= this.currentBet || reopened)) {
      out.push({ type: "all_in", min: all, max: all, as: all <= this.currentBet ? "call" : kind });
    }
    return out;
  }

  /** Apply `action` ({type, amount, turn}) of `seat`; Refused when it is not its turn or not legal. */
  act(seat, action) {
    const st = this.state;
    if (st.status !== "running") throw new Refused("bad_state", "no match is running");
    if (seat !== st.toAct) throw new Refused("not_your_turn", `seat ${st.toAct} is to act`);
    if (action.turn !== undefined && action.turn !== st.turnId) throw new Refused("stale_turn", "that turn has passed");
    const legal = this.legal(seat);
    const entry = legal.find((a) => a.type === action.type);
    if (!entry) throw new Refused("illegal_action", `${action.type} is not legal now`);
    const p = this.player(seat);
    let total = p.bet;  // the seat's street total after the action
    switch (action.type) {
      case "fold": p.folded = true; break;
      case "check": break;
      case "call": total = p.bet + entry.min; break;
      case "bet": case "raise": {
        const amount = action.amount;
        if (!Number.isInteger(amount) || amount < entry.min || amount > entry.max) {
          throw new Refused("illegal_action", `amount must be ${entry.min}..${entry.max}`);
        }
        total = amount;
        break;
      }
      case "all_in": total = entry.max; break;
      default: throw new Refused("illegal_action", `unknown action ${action.type}`);
    }
    const added = total - p.bet;
    p.stack -= added; p.bet = total; st.pot += added;
    if (p.stack === 0 && action.type !== "fold") p.allIn = true;
    if (total > this.currentBet) {
      const raise = total - this.currentBet;
      if (raise >= this.lastRaise) {  // a full bet or raise reopens the betting to everyone else
        this.lastRaise = raise;
        for (const s of this.acted.keys()) this.acted.set(s, false);
      }
      this.currentBet = total;
    }
    this.acted.set(seat, true);
    const name = action.type === "all_in" ? entry.as : action.type;
    p.lastAction = name;
    st.actions += 1; st.lastSeat = seat; st.lastAction = name; st.lastAmount = added;
    this.advance(seat);
  }

  /** After `seat` acted: the next turn, the next street, or the hand's end. */
  advance(seat) {
    const inHand = this.after(0, (p) => p.inHand && !p.folded);
    if (inHand.length === 1) { this.closeStreet(); return this.award([inHand], false); }
    this.nextTurn(seat);
  }

  nextTurn(from) {
    const st = this.state;
    const next = this.after(from, (p) => p.inHand && !p.folded && !p.allIn
      && (!this.acted.get(p.seat) || p.bet < this.currentBet))[0];
    if (next !== undefined) return this.setTurn(next);
    this.closeStreet();
    const canBet = this.after(0, (p) => p.inHand && !p.folded && !p.allIn);
    if (st.street === "river") return this.showdown();
    if (canBet.length <= 1) return this.runOut();
    this.deal();
    this.currentBet = 0; this.lastRaise = st.bigBlind;
    for (const s of this.acted.keys()) this.acted.set(s, false);
    const first = this.after(st.button, (p) => p.inHand && !p.folded && !p.allIn)[0];
    this.setTurn(first);
  }

  setTurn(seat) {
    const st = this.state;
    const p = this.player(seat);
    st.toAct = seat; st.turnId += 1;
    st.toCall = Math.min(this.currentBet - p.bet, p.stack);
    const legal = this.legal(seat);
    const raise = legal.find((a) => a.type === "bet" || a.type === "raise");
    st.canRaise = Boolean(raise);
    st.canAllIn = legal.some((a) => a.type === "all_in");
    st.raiseKind = this.currentBet === 0 ? "bet" : "raise";
    st.minRaiseTo = raise ? raise.min : 0;
    st.maxRaiseTo = p.bet + p.stack;
  }

  /** Move the street's bets into the hand's contributions and the public pots. */
  closeStreet() {
    const st = this.state;
    for (const s of this.contributed.keys()) {
      const p = this.player(s);
      this.contributed.set(s, this.contributed.get(s) + p.bet);
      p.bet = 0;
    }
    st.pots.clear();
    for (const pot of this.pots()) st.pots.push(new Pot({ amount: pot.amount, eligible: pot.eligible }));
  }

  /** The main pot and side pots from the contributions: [{amount, eligible: [seats]}]. */
  pots() {
    const levels = [...new Set([...this.contributed.values()].filter((c) => c > 0))].sort((a, b) => a - b);
    const out = [];
    let below = 0;
    for (const level of levels) {
      let amount = 0;
      const eligible = [];
      for (const [s, c] of this.contributed) {
        amount += Math.min(c, level) - Math.min(c, below);
        if (c >= level && !this.player(s).folded) eligible.push(s);
      }
      const last = out[out.length - 1];
      if (last && (eligible.length === 0 || eligible.join() === last.eligible.join())) last.amount += amount;
      else if (amount > 0) out.push({ amount, eligible });
      below = level;
    }
    return out;
  }

  deal() {
    const st = this.state;
    const n = st.street === "preflop" ? 3 : 1;
    st.street = st.street === "preflop" ? "flop" : st.street === "flop" ? "turn" : "river";
    this.deck.pop();  // burn
    for (let i = 0; i < n; i++) st.board.push(this.deck.pop());
  }

  /** At most one player can still bet: show every hand, deal the rest of the board, award. */
  runOut() {
    const st = this.state;
    st.toAct = 0;
    for (const s of this.after(0, (p) => p.inHand && !p.folded)) this.player(s).shown.push(...this.holes.get(s));
    while (st.street !== "river") this.deal();
    this.showdown(true);
  }

  showdown(allShown = false) {
    const st = this.state;
    const board = [...st.board];
    const rank = new Map();
    for (const s of this.after(0, (p) => p.inHand && !p.folded)) {
      rank.set(s, phe.evaluateCards([...this.holes.get(s), ...board]));  // smaller is better
    }
    const groups = this.pots().map((pot) => {
      const top = Math.min(...pot.eligible.map((s) => rank.get(s)));
      return { amount: pot.amount, winners: pot.eligible.filter((s) => rank.get(s) === top), contested: pot.eligible.length > 1 };
    });
    if (!allShown) {  // in turn from the button's left: a hand is shown when it ties or beats those shown, or wins a contested pot
      let best = Infinity;
      for (const s of this.after(st.button, (p) => p.inHand && !p.folded)) {
        if (rank.get(s) <= best || groups.some((g) => g.contested && g.winners.includes(s))) {
          best = Math.min(best, rank.get(s));
          this.player(s).shown.push(...this.holes.get(s));
        }
      }
    }
    this.award(groups, true);
  }

  /** Pay each pot ([{amount, winners}] or, uncontested, [[seat]]), then end the hand. */
  award(groups, contested) {
    const st = this.state;
    if (!contested) {
      const total = [...this.contributed.values()].reduce((a, b) => a + b, 0);
      groups = [{ amount: total, winners: groups[0] }];
    }
    for (const { amount, winners } of groups) {
      const order = this.after(st.button, (p) => winners.includes(p.seat));
      const share = Math.floor(amount / order.length);
      let odd = amount - share * order.length;
      for (const s of order) {
        this.player(s).stack += share + (odd > 0 ? 1 : 0);
        if (odd > 0) odd -= 1;
      }
    }
    st.pot = 0; st.toAct = 0; st.street = "";
    for (const s of this.after(0, (p) => p.inHand && p.stack === 0)) this.player(s).out = true;
    this.startHand();
  }

  endMatch() {
    const st = this.state;
    st.status = "finished"; st.toAct = 0; st.street = "";
  }

  /** A player asks for the next match (cardhall's `rematch`): only once the match is finished. */
  rematch() {
    if (this.state.status !== "finished") throw new Refused("bad_state", "the match is not finished");
    this.startMatch();
  }
}

module.exports = { Player, Pot, TableState, HoldemTable, Refused, shuffled };
