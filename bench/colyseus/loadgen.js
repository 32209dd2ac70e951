"use strict";
/**
 * The load generator of the comparison: one Node process that plays `--tables` no-limit Hold'em
 * tables on either server, 6 players and 2 spectators per table, each a websocket of its own, with
 * one action policy (policy.js), and measures both servers the same way.
 *
 *   node loadgen.js --system cardhall --url ws://127.0.0.1:8000/ws --codec json|msgpack \
 *                   --tables 100 --think 0 --warmup 10 --duration 20 --server-pid PID [--deflate 1] [--compact 0] [--group 0]
 *   node loadgen.js --system colyseus --url ws://127.0.0.1:2567 ...
 *
 * cardhall: its public protocol (protocol/SPEC.md): `hello` with `batch: true` and `compact: true` (1.8: each step's
 * events as one compact array, decoded with `welcome.layouts` as protocol/compact.py reads it; `--compact 0`: with
 * `group: true` instead, `events` frames as a 1.7 client gets them; `--compact 0 --group 0`: one `event` frame per
 * event, as a 1.6 client), the subprotocol
 * `cardhall.v1.json` or `cardhall.v1.msgpack`, seat 1's player creates the table (`pause` 0, an
 * `action_clock` of 600 s so that no turn times out while the other tables are set up), the
 * players `join` their seats, the spectators `join` as spectators, each turn is answered with `act`
 * naming the turn, and seat 1 asks for the `rematch` when a match ends. Colyseus: colyseus.js joins
 * the room (seat 1 creates it), `act` / `rematch` messages, the state decoded by @colyseus/schema.
 *
 * No seat acts before every table is set up (a turn that came earlier waits for that moment); the
 * warm-up starts then. Measured over the window that follows the warm-up:
 * actions completed (an action counts when the first frame showing it reaches the client that sent
 * it: cardhall's `action` event of its seat, Colyseus's patch whose `actions` counter passed the one
 * the client saw when it sent), latency (that frame's arrival minus the send, same client and clock),
 * websocket messages and payload bytes received by all connections, the server's CPU (utime + stime
 * of its process and its descendants, /proc/PID/stat) and this process's own CPU (/proc/self/stat)
 * and event-loop delay. `saturated` is true when this process used over 90 % of its core or its
 * event loop's p99 delay was over 50 ms: the figures are then bounded by the load, not the server.
 * Also counted over the whole run: error replies, lost connections and hole-card leaks (a frame to a
 * spectator carrying hole cards, a seat receiving cards another seat holds in the same hand, a
 * Colyseus client decoding another seat's `hole`).
 *
 * `--deflate 1` (cardhall): every connection offers `permessage-deflate` (ws's `perMessageDeflate`, as a
 * browser does); the bytes received then count the payloads as decompressed, and `wire_bytes_per_s`
 * (cardhall, either way) the bytes read from the sockets: the frames as they travelled.
 *
 * Prints one JSON object on stdout.
 */
const fs = require("node:fs");
const { execSync } = require("node:child_process");
const { performance, monitorEventLoopDelay } = require("node:perf_hooks");
const WebSocket = require("ws");
const { Decoder: MsgpackDecoder, encode: msgpackEncode } = require("@msgpack/msgpack");
const { Client: ColyseusClient, Room: ColyseusRoom } = require("colyseus.js");
const { decide, thinkTime } = require("./policy");

const SEATS = 6;
const SPECTATORS = 2;
const LOAD_SATURATED_CPU = 0.9;
const LOAD_SATURATED_LAG_MS = 50;

function parseArgs(argv) {
  const out = { system: "cardhall", url: "", codec: "json", tables: 10, think: 0, warmup: 5, duration: 10,
    serverPid: 0, concurrency: 20, deflate: 0, compact: 1, group: 1 };
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, "").replace(/-([a-z])/g, (_, c) => c.toUpperCase());
    if (!(key in out)) throw new Error(`unknown option ${argv[i]}`);
    out[key] = typeof out[key] === "number" ? Number(argv[i + 1]) : argv[i + 1];
  }
  if (!out.url) throw new Error("--url is required");
  return out;
}

// -- counting -------------------------------------------------------------------------------------
const windowed = { measuring: false, messages: 0, bytes: 0, done: 0, latencies: [] };
const whole = { messages: 0, bytes: 0, done: 0, sent: 0, errors: {}, violations: 0, leaks: [], holeChecks: 0 };
/** the sockets of cardhall's connections: their bytes read are the bytes on the wire */
const sockets = [];
const wireBytes = () => sockets.reduce((sum, sock) => sum + sock.bytesRead, 0);

function received(bytes) {
  whole.messages += 1; whole.bytes += bytes;
  if (windowed.measuring) { windowed.messages += 1; windowed.bytes += bytes; }
}

function completed(ms) {
  whole.done += 1;
  if (windowed.measuring) { windowed.done += 1; windowed.latencies.push(ms); }
}

function error(code) {
  whole.errors[code] = (whole.errors[code] || 0) + 1;
}

function leak(what) {
  whole.violations += 1;
  if (whole.leaks.length < 5) whole.leaks.push(what);
}

/** Seat `seat`'s cards `cards` in hand `key` of `table`: a leak when another seat holds one of them. */
function holeCards(table, key, seat, cards) {
  whole.holeChecks += 1;
  if (table.holeKey !== key) { table.holeKey = key; table.holes = new Map(); }
  for (const [other, theirs] of table.holes) {
    if (other !== seat && cards.some((c) => theirs.includes(c))) {
      leak(`${table.id} hand ${key}: seat ${seat} got ${cards} and seat ${other} ${theirs}`);
    }
  }
  table.holes.set(seat, cards);
}

/** Seats whose turn came before every table was set up: they act when play begins (`begin`). */
const held = [];
let playing = false;

function begin() {
  playing = true;
  for (const [seat, turnId, legal, mark] of held.splice(0)) seat.turn(turnId, legal, mark);
}

/** A seat's decisions: the policy on each new turn, after the think time; the stopwatch on each action. */
class Seat {
  constructor(seat, think, send) {
    this.seat = seat; this.think = think; this.send = send;
    this.turnDone = -1; this.sentAt = 0; this.mark = 0;
  }

  turn(turnId, legal, mark) {
    if (turnId === this.turnDone) return;
    if (!playing) { held.push([this, turnId, legal, mark]); return; }
    this.turnDone = turnId;
    const action = decide(legal, Math.random);
    const delay = thinkTime(this.think, Math.random);
    if (delay > 0) setTimeout(() => this.fire(action, turnId, mark), delay * 1000);
    else this.fire(action, turnId, mark);
  }

  fire(action, turnId, mark) {
    this.sentAt = performance.now();
    this.mark = typeof mark === "function" ? mark() : mark;
    whole.sent += 1;
    this.send(action, turnId);
  }

  /** The frame that arrived at `now` shows this seat's action. */
  seen(now) {
    if (!this.sentAt) return;
    completed(now - this.sentAt);
    this.sentAt = 0;
  }
}

// -- cardhall: compact events (protocol 1.8) -------------------------------------------------------
// A step's events of a table as one array, `[table, seq, ts, element, ...]`, read as protocol/compact.py's `expand`
// (the protocol's reference) reads it, under `layouts` (`welcome.layouts`: a list of `[game or null, type, fields]`).
// Malformed input throws an Error where the reference raises ValueError.

/** A plain object (a map of the wire), not an array or null. */
const isMap = (x) => typeof x === "object" && x !== null && !Array.isArray(x);

/** The event map `written` stands for: a map is the event itself; `[index, v1, ..., vk]` is layout `index`'s type with
 * its fields' values in order, and `[index, v1, ..., vk, {name: value}]` adds the event's further fields. */
function expandEvent(written, layouts) {
  if (isMap(written)) return written;
  if (!Array.isArray(written) || !written.length || !Number.isInteger(written[0])) {
    throw new Error(`a compact event is a map or [index, values...], not ${JSON.stringify(written)}`);
  }
  const index = written[0];
  if (index < 0 || index >= layouts.length) throw new Error(`no layout ${index} (the server sent ${layouts.length})`);
  const [, kind, fields] = layouts[index];
  const rest = written.length - 1 - fields.length;  // 0, or 1: the map of the further fields
  if (rest !== 0 && !(rest === 1 && isMap(written[written.length - 1]))) {
    throw new Error(`event ${kind} has ${written.length - 1} values for ${fields.length} fields`);
  }
  const event = { type: kind };
  for (let i = 0; i < fields.length; i++) event[fields[i]] = written[i + 1];
  if (rest === 1) Object.assign(event, written[written.length - 1]);
  return event;
}

/** The `turn` map of a compact turn: `[seat, id]` (a bot's), `[seat, id, true]` (the solo player's `continue`),
 * `[seat, id, clock, bank]` (a person's, seconds). */
function expandTurn(turn) {
  if (turn.length === 2) return { seat: turn[0], id: turn[1] };
  if (turn.length === 3 && turn[2] === true) return { seat: turn[0], id: turn[1], continue: true };
  if (turn.length === 4) return { seat: turn[0], id: turn[1], clock: turn[2], bank: turn[3] };
  throw new Error(`a compact turn is [seat, id], [seat, id, true] or [seat, id, clock, bank], not ${JSON.stringify(turn)}`);
}

/** The 1.7 `events` frame a compact array stands for. An element whose first entry is an array or a map is an event
 * with its turn, `[event, turn]` or `[event, turn, legal]`; any other element is an event alone. */
function expandCompact(message, layouts) {
  if (message.length < 4 || typeof message[0] !== "string" || !Number.isInteger(message[1])) {
    throw new Error("a compact events frame is [table, seq, ts, element, ...] with at least one element");
  }
  const events = [];
  for (let i = 3; i < message.length; i++) {
    const element = message[i];
    if (Array.isArray(element) && element.length && (Array.isArray(element[0]) || isMap(element[0]))) {
      if (element.length !== 2 && element.length !== 3) throw new Error("an event with its turn is [event, turn] or [event, turn, legal]");
      const item = { event: expandEvent(element[0], layouts), turn: expandTurn(element[1]) };
      if (element.length === 3) item.legal = element[2];
      events.push(item);
    } else events.push({ event: expandEvent(element, layouts) });
  }
  return { type: "events", table: message[0], seq: message[1], ts: message[2], events };
}

// -- cardhall ---------------------------------------------------------------------------------------
const msgpackDecoder = new MsgpackDecoder();

/** One websocket to a cardhall server: requests with `id`, frames (unbatched, `events` frames and compact arrays
 * as one `event` frame per event) to `onFrame(frame, now)`. */
class CardhallConnection {
  constructor(url, codec, deflate) {
    this.codec = codec;
    this.layouts = null;  // welcome.layouts once the server granted compact events
    this.pending = new Map();
    this.nextId = 1;
    this.onFrame = null;
    this.closing = false;
    this.ws = new WebSocket(url, codec === "msgpack" ? "cardhall.v1.msgpack" : "cardhall.v1.json",
      { perMessageDeflate: deflate });
    this.ws.once("upgrade", (res) => sockets.push(res.socket));
    this.opened = new Promise((resolve, reject) => {
      this.ws.once("open", resolve);
      this.ws.once("error", reject);
    });
    this.ws.on("message", (data) => this.receive(data));
    this.ws.on("error", () => {});
    this.ws.on("close", (code) => {
      if (!this.closing) error(`connection_lost_${code}`);
      for (const p of this.pending.values()) p.reject(new Error(`closed ${code}`));
      this.pending.clear();
    });
  }

  send(message) {
    if (this.ws.readyState !== WebSocket.OPEN) return;
    this.ws.send(this.codec === "msgpack" ? msgpackEncode(message) : JSON.stringify(message));
  }

  request(message) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.send({ ...message, id });
    });
  }

  receive(data) {
    const now = performance.now();
    received(data.length);
    const frame = this.codec === "msgpack" ? msgpackDecoder.decode(data) : JSON.parse(data.toString());
    if (frame.type === "batch") for (const f of frame.frames) this.handle(f, now);
    else this.handle(frame, now);
  }

  handle(frame, now) {
    if (Array.isArray(frame)) {  // 1.8 compact events: read as the `events` frame it stands for
      try {
        frame = expandCompact(frame, this.layouts || []);
      } catch (err) {
        error(`compact: ${String(err.message).slice(0, 80)}`);
        return;
      }
    }
    const waiting = frame.re !== undefined && frame.re !== null ? this.pending.get(frame.re) : undefined;
    if (waiting) {
      this.pending.delete(frame.re);
      if (frame.type === "error") waiting.reject(new Error(`${frame.code}: ${frame.message}`));
      else waiting.resolve(frame);
      if (frame.type !== "snapshot") return;
    } else if (frame.type === "error") {
      error(frame.code);
      return;
    }
    if (!this.onFrame) return;
    if (frame.type === "events") {  // 1.7 grouped events: each element is an event frame without its envelope
      // built field by field: an object spread of each element costs the load generator several times more
      const { table, seq, ts, events } = frame;
      for (let i = 0; i < events.length; i++) {
        const item = events[i];
        this.onFrame({ type: "event", table, seq: seq + i, ts, event: item.event, turn: item.turn, legal: item.legal }, now);
      }
    } else this.onFrame(frame, now);
  }
}

async function cardhallTable(args, index, connections) {
  const open = async (name) => {
    const c = new CardhallConnection(args.url, args.codec, args.deflate > 0);
    connections.push(c);
    await c.opened;
    const compact = args.compact > 0;
    const welcome = await c.request({ type: "hello", name, batch: true, group: compact || args.group > 0,
      ...(compact ? { compact: true } : {}) });
    if (compact) {
      if (welcome.compact !== true || !Array.isArray(welcome.layouts)) throw new Error("the server did not grant compact events");
      c.layouts = welcome.layouts;
    }
    return c;
  };
  const owner = await open(`t${index} seat 1`);
  const created = await owner.request({ type: "create_table", game: "no_limit_holdem", seats: SEATS,
    options: { pause: 0, action_clock: 600 } });
  const table = { id: created.table, holeKey: "", holes: new Map() };
  for (let k = 0; k < SPECTATORS; k++) {
    const c = await open(`t${index} watcher ${k + 1}`);
    c.onFrame = (frame) => {
      const ev = frame.type === "event" ? frame.event : null;
      if (ev && ev.type === "hole_cards" && ev.cards) leak(`${table.id}: a spectator got hole cards ${ev.cards}`);
      if (frame.type === "snapshot" && frame.state && frame.state.hole) leak(`${table.id}: a spectator's snapshot holds hole cards`);
    };
    await c.request({ type: "join", table: table.id, role: "spectator" });
  }
  const joins = [];
  for (let seat = 1; seat <= SEATS; seat++) {
    const c = seat === 1 ? owner : await open(`t${index} seat ${seat}`);
    let match = 0; let hand = 0;
    const player = new Seat(seat, args.think, (action, turn) => c.send({ type: "act", table: table.id, action, turn }));
    c.onFrame = (frame, now) => {
      if (frame.type === "event") {
        const ev = frame.event;
        if (ev.type === "action") { if (ev.seat === seat) player.seen(now); }
        else if (ev.type === "hand_start") hand = ev.hand;
        else if (ev.type === "match_started") match = ev.match;
        else if (ev.type === "hole_cards" && ev.cards) holeCards(table, `${match}.${hand}`, seat, ev.cards);
        else if (ev.type === "match_ended" && seat === 1) c.send({ type: "act", table: table.id, action: { type: "rematch" } });
      }
      if (frame.turn && frame.turn.seat === seat && frame.legal) player.turn(frame.turn.id, frame.legal, 0);
    };
    joins.push(c);
  }
  // the sixth join starts the match: every seat listens before it is sent
  for (let seat = 1; seat <= SEATS; seat++) {
    await joins[seat - 1].request({ type: "join", table: table.id, role: "player", seat });
  }
}

// -- Colyseus ---------------------------------------------------------------------------------------
const ROOM_STATE = 14;
const ROOM_STATE_PATCH = 15;

// every message a colyseus.js room receives is counted, then decoded, then shown to the room's handler
const originalOnMessage = ColyseusRoom.prototype.onMessageCallback;
ColyseusRoom.prototype.onMessageCallback = function onMessageCallback(event) {
  const now = performance.now();
  const bytes = new Uint8Array(event.data);
  received(bytes.length);
  originalOnMessage.call(this, event);
  if (this.benchPatch && (bytes[0] === ROOM_STATE_PATCH || bytes[0] === ROOM_STATE)) this.benchPatch(now);
};

/** The legal actions of `me`, the seat to act, from the public state (cardhall's form). */
function colyseusLegal(st, me) {
  const legal = [st.toCall > 0 ? { type: "fold" } : { type: "check" }];
  if (st.toCall > 0) legal.push({ type: "call", min: st.toCall, max: st.toCall });
  if (st.canRaise) legal.push({ type: st.raiseKind, min: st.minRaiseTo, max: st.maxRaiseTo });
  if (st.canAllIn) legal.push({ type: "all_in", min: me.bet + me.stack, max: me.bet + me.stack });
  return legal;
}

/**
 * The floor (floor_server.py): table `index`'s 8 connections (`/ws?t=T&v=V`); the seats 0..5 act in turn, each
 * sending one small message as soon as the previous seat's answer reached it (think 0), or after its think time.
 * An action completes when the sender gets its own answer; no rules, no checks: what the stack alone costs.
 */
/** the floor's legal actions at every turn, in the policy's form: checking only */
const CHECK_ONLY = [{ type: "check" }];

async function floorTable(args, index, opened) {
  const conns = [];
  for (let v = 0; v < SEATS + SPECTATORS; v++) {
    const ws = new WebSocket(`${args.url}?t=${index}&v=${v}`, { perMessageDeflate: false });
    opened.push(ws);
    await new Promise((resolve, reject) => { ws.once("open", resolve); ws.once("error", reject); });
    conns.push(ws);
  }
  let turn = 0;
  const seats = conns.slice(0, SEATS).map((ws, v) => new Seat(v + 1, args.think,
    (action, turnId) => ws.send(JSON.stringify({ type: "act", turn: turnId, action }))));
  conns.forEach((ws, v) => {
    ws.on("message", (data) => {
      received(data.length);
      if (v < SEATS && data[1] === 0x30 && seats[v].sentAt) {  // '"0...': the sender's own answer
        seats[v].seen(performance.now());
        turn += 1;
        seats[turn % SEATS].turn(turn, CHECK_ONLY, 0);
      }
    });
    ws.on("close", () => { if (!ws.benchClosing) error("lost_connection"); });
  });
  seats[0].turn(0, CHECK_ONLY, 0);
}

async function colyseusTable(args, index, rooms) {
  const client = new ColyseusClient(args.url);
  const watch = (room) => {
    rooms.push(room);
    room.onMessage("error", (e) => error(e.code));
    room.onLeave((code) => { if (!room.benchClosing) error(`connection_lost_${code}`); });
    room.onError((code) => error(`room_error_${code}`));
    return room;
  };
  const first = watch(await client.create("holdem", { seat: 1, name: `t${index} seat 1` }));
  const table = { id: first.roomId, holeKey: "", holes: new Map() };
  for (let k = 0; k < SPECTATORS; k++) {
    const room = watch(await client.joinById(table.id, { spectator: true }));
    room.benchPatch = () => {
      room.state.players.forEach((p) => {
        if (p.hole && p.hole.length) leak(`${table.id}: a spectator decoded seat ${p.seat}'s hole cards`);
      });
    };
  }
  for (let seat = 1; seat <= SEATS; seat++) {
    const room = seat === 1 ? first : watch(await client.joinById(table.id, { seat, name: `t${index} seat ${seat}` }));
    const key = String(seat);
    let asked = 0; let holeKey = "";
    const player = new Seat(seat, args.think, (action, turn) => room.send("act", { ...action, turn }));
    const mark = () => room.state.actions;
    room.benchPatch = (now) => {
      const st = room.state;
      if (player.sentAt && st.actions > player.mark) player.seen(now);
      if (!st.players) return;
      st.players.forEach((p) => {
        if (p.seat !== seat && p.hole && p.hole.length) leak(`${table.id}: seat ${seat} decoded seat ${p.seat}'s hole cards`);
      });
      const me = st.players && st.players.get(key);
      if (!me) return;  // the state is not decoded yet
      if (me.hole && me.hole.length === 2 && holeKey !== `${st.match}.${st.hand}`) {
        holeKey = `${st.match}.${st.hand}`;
        holeCards(table, holeKey, seat, [...me.hole]);
      }
      if (st.status === "running" && st.toAct === seat) player.turn(st.turnId, colyseusLegal(st, me), mark);
      else if (seat === 1 && st.status === "finished" && asked !== st.match) {
        asked = st.match;
        room.send("rematch", {});
      }
    };
    room.benchPatch(performance.now());  // a patch decoded before the handler was set is not missed
  }
}

// -- CPU and the window -----------------------------------------------------------------------------
const CLOCK_TICKS = Number(execSync("getconf CLK_TCK").toString().trim()) || 100;

/** utime + stime (ticks) of /proc/PID/stat, and its parent: null when the process is gone. */
function procStat(pid) {
  try {
    const text = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return { ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) };
  } catch {
    return null;
  }
}

/** CPU seconds used so far by `root` and every process descended from it. */
function treeSeconds(root) {
  const stats = new Map();
  for (const name of fs.readdirSync("/proc")) {
    if (/^\d+$/.test(name)) { const s = procStat(name); if (s) stats.set(Number(name), s); }
  }
  let ticks = 0;
  const todo = [root];
  while (todo.length) {
    const pid = todo.pop();
    const s = stats.get(pid);
    if (!s) continue;
    ticks += s.ticks;
    for (const [child, cs] of stats) if (cs.ppid === pid) todo.push(child);
  }
  return ticks / CLOCK_TICKS;
}

function selfSeconds() {
  return procStat("self").ticks / CLOCK_TICKS;
}

/** cardhall's client mode: how its events arrive (compact arrays, `events` frames or one `event` frame each). */
function clientMode(args) {
  if (args.compact > 0) return "compact";
  return args.group > 0 ? "group" : "event";
}

function percentile(sorted, q) {
  if (!sorted.length) return null;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

async function pool(count, concurrency, job) {
  let next = 0;
  const worker = async () => { while (next < count) await job(next++); };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const started = performance.now();
  const connections = [];
  const rooms = [];
  let ready = 0;
  await pool(args.tables, args.concurrency, async (i) => {
    try {
      if (args.system === "colyseus") await colyseusTable(args, i + 1, rooms);
      else if (args.system === "floor") await floorTable(args, i + 1, rooms);
      else await cardhallTable(args, i + 1, connections);
      ready += 1;
    } catch (err) {
      error(`setup: ${String(err.message || err).slice(0, 120)}`);
    }
  });
  const setup = (performance.now() - started) / 1000;
  begin();
  await sleep(args.warmup * 1000);
  const lag = monitorEventLoopDelay({ resolution: 10 });
  const cpu0 = { server: args.serverPid ? treeSeconds(args.serverPid) : 0, self: selfSeconds(), at: performance.now() };
  const wire0 = wireBytes();
  windowed.measuring = true;
  lag.enable();
  await sleep(args.duration * 1000);
  lag.disable();
  windowed.measuring = false;
  const cpu1 = { server: args.serverPid ? treeSeconds(args.serverPid) : 0, self: selfSeconds(), at: performance.now() };
  const wire = wireBytes() - wire0;
  const seconds = (cpu1.at - cpu0.at) / 1000;
  const serverCpu = cpu1.server - cpu0.server;
  const loadCpu = cpu1.self - cpu0.self;
  const lat = windowed.latencies.sort((a, b) => a - b);
  const lagP99 = lag.percentile(99) / 1e6;
  const round = (x, d = 3) => (x === null || !Number.isFinite(x) ? null : Number(x.toFixed(d)));
  const out = {
    system: args.system, codec: args.system === "colyseus" ? "schema" : args.codec, tables: args.tables,
    think: args.think, client: args.system === "colyseus" ? null : clientMode(args), tables_ready: ready,
    connections: ready * (SEATS + SPECTATORS), setup_s: round(setup, 1),
    window_s: round(seconds, 2),
    actions: windowed.done, actions_per_s: round(windowed.done / seconds, 1),
    server_cpu_s: round(serverCpu, 2), server_cpu_share: round(serverCpu / seconds),
    actions_per_server_cpu_s: serverCpu > 0 ? round(windowed.done / serverCpu, 1) : null,
    messages_per_s: round(windowed.messages / seconds, 1), bytes_per_s: round(windowed.bytes / seconds, 0),
    wire_bytes_per_s: args.system === "cardhall" ? round(wire / seconds, 0) : null, deflate: args.deflate > 0,
    latency_p50_ms: round(percentile(lat, 0.5)), latency_p99_ms: round(percentile(lat, 0.99)),
    load_cpu_share: round(loadCpu / seconds), loop_lag_p99_ms: round(lagP99, 1),
    saturated: loadCpu / seconds > LOAD_SATURATED_CPU || lagP99 > LOAD_SATURATED_LAG_MS,
    errors: whole.errors, violations: whole.violations, leaks: whole.leaks,
    run: { actions_sent: whole.sent, actions_completed: whole.done, messages: whole.messages, bytes: whole.bytes,
      hole_cards_checked: whole.holeChecks },
  };
  process.stdout.write(JSON.stringify(out) + "\n");
  for (const c of connections) c.closing = true;
  for (const r of rooms) r.benchClosing = true;
  process.exit(0);
}

if (require.main === module) {
  main().catch((err) => {
    process.stderr.write(`loadgen: ${err.stack || err}\n`);
    process.exit(1);
  });
}

// the decoder, for the check that it reads what protocol/compact.py writes (tests/bench/test_colyseus_smoke.py)
module.exports = { expandCompact };
