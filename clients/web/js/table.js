// One table as this page sees it: joins (as a player or spectator), keeps the model up to date from
// the event stream (gap-free by `seq`; after a reconnect or a reload it joins again with `since`),
// keeps what the G-2 check needs, and draws the table.
//
// The model is plain data saved in localStorage with its `seq`, so a reload resumes where it was:
//   {table, seq, you, info, state (the game's view, see games/*.js), drawing (the renderer the state
//    was built with: games/index.js), turn, legal, log, record, nextCommitment, ended, verification,
//    seed, skew, played (the names of the last match's seats: `playedNames`)}

import { h, mount, plural } from "./dom.js";
import { gameInfo, howToPlay } from "./games/index.js";
import { continueButton, genericPanel } from "./actions.js";
import { preactionBoxes, takePreaction } from "./preactions.js";
import { newClientSeed } from "./fair.js";
import { verifyMatch } from "./verify.js";
import { alertFor, showAlert } from "./alerts.js";
import { Motion } from "./motion.js";
import { fitFelt, reuseFit } from "./feltfit.js";
import { playSound } from "./sounds.js";
import { nameOf } from "./games/common.js";
import { historyPanel } from "./history.js";
import { CHAT_EVENTS, ChatPanel, chatEvent, describeChat } from "./chat.js";
import { HOST_EVENTS, describeHost, hostEvent, hostPanel, requestsFrom } from "./hostpanel.js";

const STORE_PREFIX = "cardhall.table.";
/** Table events that leave the current turn open (every other event ends it unless it carries one). */
const KEEP_TURN = new Set(["presence", "seated", "left", "sat_out", "sat_in", "paused", "renamed", ...CHAT_EVENTS, ...HOST_EVENTS]);
const TABLE_EVENTS = new Set(["seated", "left", "presence", "match_started", "match_ended", "rematch", "timeout",
  "sat_out", "sat_in", "paused", "resumed", "awaiting", "closed", "broken", "renamed", ...CHAT_EVENTS, ...HOST_EVENTS]);
/** Table events left out of the match's record (the G-2 check and the hand history replay the rest). */
const UNRECORDED = new Set(["match_started", "renamed", ...CHAT_EVENTS, ...HOST_EVENTS]);
/** Table controls sent without the turn's id (they are not moves of the game). */
const CONTROLS = new Set(["start", "pause", "resume", "rematch", "sit_out", "sit_in", "approve", "deny", "kick", "ban", "transfer", "close"]);
/** What this page's player is told when a host event concerns it (hostpanel.js `hostEvent`). */
const TOLD = {
  denied: "The host did not let you sit: watching",
  lapsed: "Your request for a seat lapsed: watching",
  kicked: "The host took your seat: you now watch the table",
};
const LOG_LINES = 120;
/** Milliseconds between two looks at the number of spectators (no event tells it: GET /api/tables/{id}). */
const WATCHERS_EVERY = 10000;
/** The `action` events' kinds that put chips in by choice (SPEC "Events"): the bet sound. */
const BET_ACTIONS = new Set(["bet", "raise", "all_in"]);
/** Seconds an event may be late (beyond the page's clock skew) and still make a sound: a catch-up is silent. */
const SOUND_LATE = 5;
/** Milliseconds during which joins answered `unavailable` are sent again before the page stops asking
 * and lets the player try again. A store failing over takes seconds to tens of seconds (SPEC "Resuming
 * and reconnecting"): Redis Sentinel notices a dead primary only after 30 s by default, then promotes a
 * replica, so 60 s rides out such a failover, and the table's clocks stop while its store is down
 * (deploy/README.md), so the wait costs the player nothing. A table refused for longer is down rather
 * than moving: the player is better told so than shown a wait that never ends. */
const REJOIN_FOR = 60000;
/** For tests only: localStorage "cardhallRejoinFor" (milliseconds) replaces REJOIN_FOR. */
const REJOIN_FOR_KEY = "cardhallRejoinFor";
/** What the page shows while it joins the table again, and while it has stopped asking. */
const REJOINING = "Joining the table again…";
const NOT_AVAILABLE = "The table is not available right now.";

export function savedTables() {
  const out = [];
  for (let i = 0; i < localStorage.length; i++) {
    const k = localStorage.key(i);
    if (!k.startsWith(STORE_PREFIX)) continue;
    try {
      const v = JSON.parse(localStorage.getItem(k));
      out.push({ table: k.slice(STORE_PREFIX.length), role: v.role, seat: v.model && v.model.you });
    } catch { /* ignore */ }
  }
  return out;
}

export function forgetTable(id) {
  localStorage.removeItem(STORE_PREFIX + id);
}

/** REJOIN_FOR, or the milliseconds a test put in localStorage (REJOIN_FOR_KEY). */
function rejoinFor() {
  try {
    const ms = Number(localStorage.getItem(REJOIN_FOR_KEY));
    if (ms > 0) return ms;
  } catch { /* no storage: the default */ }
  return REJOIN_FOR;
}

export class Table {
  constructor(conn, id) {
    this.conn = conn;
    this.id = id;
    this.root = null;
    this.joined = false;
    this.rejoinDelay = 0; // seconds before the next join after an `unavailable` one (0.25 doubling to 2)
    this.rejoinTimer = null;
    this.rejoining = false; // joining again (after a reconnect): nothing can be sent for the table yet (`blocked`)
    this.refusedAt = null; // when the first of the joins refused in a row as unavailable was answered (ms)
    this.rejoinFor = rejoinFor(); // how long such refusals are asked again before the page stops (ms)
    this.unavailable = false; // the page stopped asking: the player may try again (`retry`)
    this.disposed = false;
    this.joining = null;
    this.error = null;
    this.wantSeat = null;
    this.toast = null;
    this.panelKey = null;
    this.saveTimer = null;
    this.invite = null; // the table's invite from an invite link (SPEC "Private tables"), kept with the table
    this.password = null; // the password typed for this table, sent with the next join
    this.ask = false; // the table approves seats: a join as player asks for one
    this.pending = false; // a request for a seat waits for the host
    this.removed = false; // the host banned this player
    this.chat = new ChatPanel(this);
    this.motion = new Motion(); // cards dealt, chips moved, amounts counted between two drawings (motion.js)
    this.live = false; // the last event came as it happened (not in a catch-up): it may make a sound
    const saved = this._load();
    this.role = saved ? saved.role : "spectator";
    this.seed = saved ? saved.seed : null;
    this.model = saved ? saved.model : null;
    if (saved && saved.invite) this.invite = saved.invite;
    this.onFrame = (ev) => { const f = ev.detail; if (f.table === this.id) this._frame(f); };
    this.onReady = () => { this.joined = false; this.retry(); }; // a new connection: the table is joined again
    // the connection dropped: the table must be joined again before it takes a request
    this.onStatus = (ev) => { if (ev.detail !== "online" && !this.rejoining) { this.rejoining = true; this.render(); } };
    conn.addEventListener("frame", this.onFrame);
    conn.addEventListener("ready", this.onReady);
    conn.addEventListener("status", this.onStatus);
    this.tab = "table"; // the phone's tab: the table or a side panel (`_tabs`)
    this.chatSeen = null; // chat lines seen on the phone's chat tab (null until the first drawing: all so far)
    this.fit = null; // the felt's last fit (feltfit.js): drawn again at once by every drawing
    this.fitFrame = 0; // the animation frame that fits the felt next (`_fitSoon`)
    this.drawFrame = 0; // the animation frame that draws the table next (`_renderSoon`)
    this.onResize = () => { if (this.root && this.root.isConnected) this.fit = fitFelt(this.root.querySelector(".table-page")) || this.fit; };
    addEventListener("resize", this.onResize);
    this.clockTimer = setInterval(() => this._tick(), 200);
    this.watchTimer = setInterval(() => this._watchers(), WATCHERS_EVERY);
    addEventListener("pagehide", () => this._save());
  }

  // ---------------------------------------------------------------- storage
  _load() {
    try {
      return JSON.parse(localStorage.getItem(STORE_PREFIX + this.id));
    } catch {
      return null;
    }
  }

  _save() {
    clearTimeout(this.saveTimer);
    this.saveTimer = null;
    if (this.role === "gone") return;
    const model = this.model ? { ...this.model, log: this.model.log.slice(-LOG_LINES) } : null;
    try {
      localStorage.setItem(STORE_PREFIX + this.id, JSON.stringify({ role: this.role, seed: this.seed, model, invite: this.invite }));
    } catch { /* storage full: the page still works, a reload gets a snapshot */ }
  }

  _saveSoon() {
    if (!this.saveTimer) this.saveTimer = setTimeout(() => this._save(), 300);
  }

  // ---------------------------------------------------------------- joining
  /** Join (again): with `since` when the page holds the table's events, else from a snapshot. */
  join() {
    if (!this.joining) this.joining = this._join().finally(() => { this.joining = null; });
    return this.joining;
  }

  async _join() {
    clearTimeout(this.rejoinTimer); // this join is the one a timer would have sent
    await this.conn.ready();
    try {
      // one join in the page's role: a player whose join takes the last seat gets the table's
      // snapshot from before the match, then the whole match from match_started (SPEC "Resuming"),
      // which the G-2 check needs; a spectator's seat would only count it among the watchers
      const msg = { type: "join", table: this.id, role: this.role };
      if (this.model) msg.since = this.model.seq;
      if (this.invite) msg.invite = this.invite;
      if (this.password) msg.password = this.password;
      if (this.role === "player") {
        if (!this.seed) this.seed = newClientSeed();
        msg.seed = this.seed;
        if (this.wantSeat) msg.seat = this.wantSeat;
        const approves = this.model && this.model.info.options && this.model.info.options.approve_seats;
        if ((this.ask || approves) && !(this.model && this.model.you != null)) msg.ask = true;
      }
      const answer = await this.conn.request(msg);
      if (answer && answer.type === "snapshot") this.pending = !!answer.pending;
      this.password = null; // let in once: the table remembers this player (SPEC "Private tables")
      this.joined = true;
      this._rejoined();
      this.wantSeat = null; // taken (or another seat given): a later join asks for none
      this._watchers();
      this.error = null;
    } catch (err) {
      if (err.code === "disconnected") return; // joined again on "ready"
      if (err.code === "unavailable" && !this.disposed) return this._refused();
      if (this.role === "player" && err.code === "approval_required" && !this.ask) {
        this.ask = true; // an approve_seats table: ask the host for the seat
        return this._join();
      }
      if (this.role === "player" && ["table_full", "match_running", "seat_taken", "kicked", "seat_denied"].includes(err.code)) {
        this.role = "spectator";
        this._flash(`${err.message}: watching instead`);
        return this._join();
      }
      this.error = err;
      this._rejoined();
      this.wantSeat = null;
      if (err.code === "banned") this.removed = true;
      if (err.code === "unknown_table" || err.code === "table_closed" || err.code === "banned") forgetTable(this.id);
    }
    this._save();
    this.render();
  }

  /** A join answered `unavailable`: the table is moving between nodes or its store is failing over,
   * which may take many seconds (SPEC "Resuming and reconnecting"). The table is still there, so the
   * join is sent again, backing off (0.25 s doubling to 2 s), until `rejoinFor` has passed since the
   * first refusal; then the page stops and says so, with a button to try again (`_unavailablePanel`). */
  _refused() {
    const now = Date.now();
    if (this.refusedAt === null) this.refusedAt = now;
    const first = !this.rejoinDelay;
    this.rejoinDelay = Math.min(this.rejoinDelay ? this.rejoinDelay * 2 : 0.25, 2);
    if (now + this.rejoinDelay * 1000 > this.refusedAt + this.rejoinFor) {
      this._rejoined();
      this.unavailable = true;
    } else { // asking again (also after a plain join of a table whose page had stopped: a return to it)
      if (first) this._flash("The table is busy for a moment: joining again");
      this.unavailable = false;
      this.rejoining = true;
      this.rejoinTimer = setTimeout(() => { if (!this.disposed) this.join(); }, this.rejoinDelay * 1000);
    }
    this.render();
  }

  /** No join is being asked again (none yet, or it passed, failed or was given up): the backoff and its
   * deadline start afresh. */
  _rejoined() {
    this.rejoining = false;
    this.unavailable = false;
    this.rejoinDelay = 0;
    this.refusedAt = null;
  }

  /** Join now, nothing sent for the table until the join passes (`blocked`), refusals counted and backed
   * off afresh: a table with a saved model opened (a reload, a return to it), a new connection, or the
   * player's "Try again" once the page stopped asking. */
  retry() {
    clearTimeout(this.rejoinTimer);
    this._rejoined();
    this.rejoining = true;
    this.render();
    return this.join();
  }

  /** Why no request for this table can be sent now, or null when one can: the page is joining the
   * table again (the connection dropped, or joins are refused as unavailable), or it stopped asking.
   * A request sent before the join passes would get `not_joined`, so every control that sends one is
   * inert meanwhile (`_gate`, ChatPanel) and `act` sends nothing; the action panel says why. */
  blocked() {
    if (this.unavailable) return NOT_AVAILABLE;
    return this.rejoining ? REJOINING : null;
  }

  /** The number of spectators as the server counts it now (info.spectators of a snapshot goes
   * stale: people come and go without an event, and this page's own seat moves it). */
  async _watchers() {
    if (!this.model || !this.root || !this.root.isConnected || document.hidden) return;
    if (this.model.info.status === "closed") return; // the server serves a closed table no more (404)
    try {
      // an unlisted table answers only with its invite (SPEC "Private tables": header X-Table-Invite)
      const invite = this.model.info.invite || this.invite;
      if (!invite && this.model.info.options && this.model.info.options.visibility === "unlisted") return;
      const headers = invite ? { "X-Table-Invite": invite } : {};
      const r = await fetch(`/api/tables/${encodeURIComponent(this.id)}`, { cache: "no-store", headers });
      if (!r.ok) return;
      const { spectators } = await r.json();
      if (this.model && Number.isInteger(spectators) && spectators !== this.model.info.spectators) {
        this.model.info.spectators = spectators;
        this.render();
      }
    } catch { /* unreachable for now: the next look tries again */ }
  }

  /** Take a seat (from watching): join as a player with `since`, so nothing is missed. */
  async sit(seat) {
    this.role = "player";
    this.wantSeat = seat || null; // asked for until a join passes or fails (a join refused as unavailable is sent again)
    await this.join();
  }

  async leave() {
    if (this.role === "gone") return;
    try {
      await this.conn.send({ type: "leave", table: this.id });
    } catch { /* not joined any more */ }
    this.dispose();
    forgetTable(this.id);
    this.role = "gone";
  }

  dispose() {
    this.disposed = true;
    clearTimeout(this.rejoinTimer);
    this.conn.removeEventListener("frame", this.onFrame);
    this.conn.removeEventListener("ready", this.onReady);
    this.conn.removeEventListener("status", this.onStatus);
    clearInterval(this.clockTimer);
    clearInterval(this.watchTimer);
    removeEventListener("resize", this.onResize);
  }

  async act(action) {
    if (this.blocked()) return this._flash(this.blocked());
    const m = this.model;
    const msg = { type: "act", table: this.id, action };
    if (m && m.turn && !CONTROLS.has(action.type)) msg.turn = m.turn.id;
    try {
      await this.conn.send(msg);
    } catch (err) {
      this._flash(err.code === "stale_turn" ? "Too late: that turn has passed" : err.message);
    }
  }

  _flash(text) {
    this.toast = { text, until: Date.now() + 4000 };
    this.render();
  }

  // ---------------------------------------------------------------- frames
  _frame(f) {
    if (f.type === "snapshot") this._snapshot(f);
    else if (f.type === "event") {
      const m = this.model;
      if (!m) return; // the snapshot is on its way
      if (!this._renderer()) { // the game's renderer loaded since the state was built: start again from a snapshot
        this.model = null;
        (this.joining || Promise.resolve()).then(() => this.join());
        return;
      }
      if (f.seq <= m.seq) return; // already held
      if (f.seq !== m.seq + 1) { // a gap: start again from a snapshot
        this.model = null;
        (this.joining || Promise.resolve()).then(() => this.join());
        return;
      }
      this._event(f);
    } else return;
    this._saveSoon();
    this._renderSoon();
  }

  /** A spectator's page draws the table once before the next paint, however many frames arrive first:
   * a fast table (bots acting at once) sends events faster than a busy device draws, and a drawing per
   * event would leave the page ever further behind (and deaf to clicks). A player's page draws every
   * event, so that an amount won at its seat is drawn, counted and heard even when the next hand's
   * events come in the same batch (motion.js); so does a hidden page, which paints nothing. A drawing
   * that comes first (a click's) takes the pending one's place. */
  _renderSoon() {
    if (document.hidden || (this.model && this.model.you != null)) return this.render();
    if (this.drawFrame) return;
    this.drawFrame = requestAnimationFrame(() => {
      this.drawFrame = 0;
      this.render();
    });
  }

  _snapshot(f) {
    const old = this.model;
    if (f.info.invite) this.invite = f.info.invite; // the owner's (SPEC "Private tables"): kept with the table
    if (old && !("re" in f) && f.seq === old.seq && f.info.game === old.info.game) {
      // sent on its own at the seq this page holds (a new host's, SPEC "The host's controls"): the
      // same table with the owner's info; the state, the turn and the match's record stay
      old.info = f.info;
      requestsFrom(old, f.info);
      return;
    }
    const drawn = gameInfo(f.info.game);
    const game = drawn.module;
    const m = {
      table: this.id, seq: f.seq, you: f.you, info: f.info, drawing: drawn.drawing,
      state: f.state && game ? game.fromView(f.state) : null,
      turn: f.turn ? { ...f.turn, at: Date.now() } : null, legal: f.legal || null,
      log: old ? old.log : [], chat: old ? old.chat : [], record: null, nextCommitment: null, ended: old ? old.ended : null,
      played: old ? old.played : null,
      verification: old ? old.verification : null, skew: old ? old.skew : null,
    };
    if (f.info.status === "running" && f.state) {
      m.record = newRecord(m, null);
      m.record.complete = false;
      m.record.snapshot = f.state;
    } else {
      m.nextCommitment = f.info.commitment;
    }
    if (old) Object.assign(m, { requests: old.requests, known: old.known, banned: old.banned });
    requestsFrom(m, f.info);
    if (f.you != null) this.role = "player";
    m.log.push({ seq: f.seq, text: old ? "Reconnected (fresh snapshot)" : `Joined ${f.you != null ? `at seat ${f.you}` : "as a spectator"}`, cls: "sys" });
    this.model = m;
  }

  _event(f) {
    const m = this.model;
    const e = f.event;
    m.seq = f.seq;
    const lag = Date.now() / 1000 - f.ts;
    if (m.skew === null || lag < m.skew) m.skew = lag;
    const game = this._renderer();
    const was = e.type === "renamed" ? this._nameOfPlayer(e) : null; // the log names the old name
    if (TABLE_EVENTS.has(e.type)) this._tableEvent(e, f);
    else if (game) {
      if (e.type === game.firstEvent || (!m.state && !game.firstEvent)) m.state = game.init(e);
      if (m.state) game.reduce(m.state, e, m.you);
    }
    if (m.record && !m.record.done && !UNRECORDED.has(e.type)) m.record.events.push({ ...e, seq: f.seq });
    if (f.turn) {
      m.turn = { ...f.turn, at: (f.ts + m.skew) * 1000 };
      m.legal = f.legal || null;
    } else if (!KEEP_TURN.has(e.type)) {
      m.turn = null;
      m.legal = null;
    }
    if (e.type === "paused" && m.turn) m.turn.frozen = Date.now();
    const text = e.type === "renamed" ? describeRename(e, was) : this._describe(e, game);
    if (text) m.log.push({ seq: f.seq, text, cls: e.type });
    if (m.log.length > LOG_LINES * 2) m.log.splice(0, m.log.length - LOG_LINES);
    if (e.type === "match_ended") this._verify();
    // sounds (sounds.js): a bet or raise by anyone, this viewer's match won; not for old events
    const live = !!(this.root && this.root.isConnected) && lag - m.skew < SOUND_LATE;
    this.live = live; // the drawing that follows may sound too (render)
    if (live && e.type === "action" && BET_ACTIONS.has(e.action)) playSound("bet");
    if (live && e.type === "match_ended" && m.you != null && ((e.result && e.result.winners) || []).includes(m.you)) playSound("win");
  }

  _tableEvent(e) {
    const m = this.model;
    const info = m.info;
    const occ = (seat) => info.occupants.find((o) => o.seat === seat);
    switch (e.type) {
      case "seated":
        if (e.player && e.player === this.conn.player) { m.you = e.seat; this.role = "player"; }
        info.occupants = info.occupants.filter((o) => o.seat !== e.seat).concat([{ ...e, connected: true }]).sort((a, b) => a.seat - b.seat);
        delete info.occupants.find((o) => o.seat === e.seat).type;
        info.taken = info.occupants.length;
        break;
      case "left":
        info.occupants = info.occupants.filter((o) => o.seat !== e.seat);
        info.taken = info.occupants.length;
        if (e.seat === m.you) { m.you = null; this.role = "spectator"; }
        break;
      case "presence":
        if (occ(e.seat)) occ(e.seat).connected = e.connected;
        break;
      case "sat_out":
        if (occ(e.seat)) occ(e.seat).sitting_out = true;
        break;
      case "sat_in":
        if (occ(e.seat)) occ(e.seat).sitting_out = false;
        break;
      case "match_started":
        Object.assign(info, { status: "running", match: e.match, result: null, commitment: e.commitment, paused: false });
        for (const o of e.seats) if (occ(o.seat)) Object.assign(occ(o.seat), o);
        m.state = null;
        m.ended = null;
        m.verification = null;
        m.record = newRecord(m, m.nextCommitment);
        m.record.startCommitment = e.commitment;
        m.nextCommitment = null;
        // who plays this match: its names (protocol 1.6), else the names its seats carry
        m.played = { match: e.match, names: e.names || Object.fromEntries(e.seats.map((o) => [o.seat, o.name])) };
        break;
      case "match_ended":
        Object.assign(info, { status: "finished", result: e.result, commitment: e.next_commitment });
        m.ended = e;
        m.nextCommitment = e.next_commitment;
        // who played (1.6: its names, leavers included); else match_started's, else the seats now
        // (a leaver's seat is freed only after this event)
        if (e.names) m.played = { match: e.match, names: e.names };
        else if (!m.played || m.played.match !== e.match) m.played = { match: e.match, names: this.names() };
        break;
      case "rematch":
        Object.assign(info, { status: "waiting", match: e.match, commitment: e.commitment });
        m.nextCommitment = e.commitment;
        break;
      case "paused":
        info.paused = true;
        info.status = "paused";
        break;
      case "resumed":
        info.paused = false;
        info.status = "running";
        break;
      case "closed":
        info.status = "closed";
        break;
      case "broken":
        info.status = "broken";
        break;
      case "chat":
      case "spectator_chat":
        chatEvent(m, e, m.seq);
        break;
      case "renamed": // a player's new name (protocol 1.4): on its seat, in the log; chat events carry the name they are sent under
        if (e.seat != null && occ(e.seat)) occ(e.seat).name = e.name;
        break;
      default:
        this._hostEvent(e);
    }
  }

  /** A host event (hostpanel.js): the model's requests and owner, and what it means for this page. */
  _hostEvent(e) {
    const m = this.model;
    const told = hostEvent(m, e, this.conn.player);
    if (!told) return;
    this.pending = told === "requested";
    if (told === "requested" || told === "approved") return; // seated by the `seated` that follows an approval
    if (told === "banned") {
      this.removed = true;
      this.role = "gone";
      m.you = null;
      forgetTable(this.id);
    } else {
      if (told === "kicked") m.you = null;
      this.role = "spectator";
      this.toast = { text: TOLD[told], until: Date.now() + 6000 };
    }
  }

  /** The name of player id `player` here: its seat's, a request's, its last chat message's, else "a player". */
  _who(player) {
    const m = this.model;
    if (player && player === this.conn.player) return "you";
    const seated = m.info.occupants.find((o) => o.player === player);
    if (seated) return seated.name;
    if (m.known && m.known[player]) return m.known[player];
    const said = (m.chat || []).filter((l) => l.from === player);
    return said.length ? said[said.length - 1].name : "a player";
  }

  /** The name player `e.player` had here before the `renamed` event `e`: its seat's, else the name
   * of its last chat message (a spectator); null when this page never saw it. */
  _nameOfPlayer(e) {
    const m = this.model;
    const seated = m.info.occupants.find((o) => (e.seat != null && o.seat === e.seat) || (o.player && o.player === e.player));
    if (seated) return seated.name;
    const said = (m.chat || []).filter((l) => l.from === e.player);
    return said.length ? said[said.length - 1].name : null;
  }

  _describe(e, game) {
    const names = this.names();
    const n = (seat) => nameOf(names, seat);
    switch (e.type) {
      case "seated": return `${e.name} sits at seat ${e.seat}${e.bot ? " (bot)" : ""}`;
      case "left": return `Seat ${e.seat} is free`;
      case "presence": return `${n(e.seat)} ${e.connected ? "connected" : "disconnected"}`;
      case "match_started": return `Match ${e.match} begins${playedWith(e.options, this.model.info.game)} (commitment ${e.commitment.slice(0, 12)}…)`;
      case "match_ended": return `Match ${e.match} is over; server seed revealed`;
      case "rematch": return `Rematch: match ${e.match}`;
      case "timeout": return `${n(e.seat)} ran out of time: ${e.action.type}`;
      case "sat_out": return `${n(e.seat)} sits out (${e.reason})`;
      case "sat_in": return `${n(e.seat)} is back in`;
      case "paused": return "The owner paused the table";
      case "resumed": return "The table resumes";
      case "closed": return e.reason === "owner" ? "The host closed the table" : `The table is closed (${e.reason})`;
      case "broken": return "The table failed and is out of service";
      case "chat": case "spectator_chat": return describeChat(e);
      default: return HOST_EVENTS.includes(e.type) ? describeHost(e, (p) => this._who(p)) : game ? game.describe(e, names) : null;
    }
  }

  async _verify() {
    const m = this.model;
    const rec = m.record;
    const ended = m.ended;
    if (!rec || !ended) return;
    rec.done = true;
    if (rec.match !== ended.match) return;
    m.verification = { status: "checking" };
    try {
      m.verification = await verifyMatch(rec, ended);
    } catch (err) {
      m.verification = { status: "error", mismatches: [], notes: [String(err.message || err)], checked: 0 };
    }
    m.verification.match = ended.match;
    m.record = null; // verified: the events are not needed any more
    this._save();
    this.render();
  }

  /** The renderer of this table's game (games/index.js), or null while the model's state was built
   * with another one (the page loaded the game's renderer since; the next frame rebuilds it). */
  _renderer() {
    const g = gameInfo(this.model.info.game);
    return g.drawing === this.model.drawing ? g.module : null;
  }

  names() {
    const out = {};
    for (const o of (this.model && this.model.info.occupants) || []) out[o.seat] = o.name;
    return out;
  }

  /** Seat -> name of who played the table's last match once it is over, which outlasts a seat
   * changing hands after it: `match_ended.names`, else `match_started.names` (protocol 1.6), else
   * the seats' names as it ended (model.played); a seat none of them names (a page that joined
   * after the end), and every seat while no match is over, by its occupant now (`names`). */
  playedNames() {
    const m = this.model;
    const now = this.names();
    const over = m && m.info.status !== "running" && m.info.status !== "paused" && m.played && m.played.match === m.info.match;
    return over ? { ...now, ...m.played.names } : now;
  }

  // ---------------------------------------------------------------- clocks
  /** Seconds left on the action clock and in the time bank for the current turn. */
  clockLeft() {
    const t = this.model && this.model.turn;
    if (!t || t.clock == null) return null;
    const now = t.frozen || Date.now();
    const elapsed = Math.max(0, (now - t.at) / 1000);
    const clock = Math.max(0, t.clock - elapsed);
    const bank = elapsed <= t.clock ? t.bank : Math.max(0, t.bank - (elapsed - t.clock));
    return { clock, bank, total: t.clock, fraction: t.clock ? clock / t.clock : 0 };
  }

  _tick() {
    if (!this.root || !this.root.isConnected) return;
    const left = this.clockLeft();
    for (const el of this.root.querySelectorAll(".clock")) {
      if (!left) { el.hidden = true; continue; }
      el.hidden = false;
      const inBank = left.clock <= 0;
      el.classList.toggle("bank", inBank);
      el.querySelector(".clock-bar").style.width = `${Math.round((inBank ? (left.bank / Math.max(1, this.model.turn.bank)) : left.fraction) * 100)}%`;
      el.querySelector(".clock-text").textContent = inBank ? `time bank ${Math.ceil(left.bank)}s` : `${Math.ceil(left.clock)}s · bank ${Math.ceil(left.bank)}s`;
    }
    showAlert(alertFor(this.model, left)); // the tab's title and icon on this viewer's turn (alerts.js)
    if (this.toast && Date.now() > this.toast.until) { this.toast = null; this.render(); }
  }

  // ---------------------------------------------------------------- drawing
  attach(root) {
    this.root = root;
    this.panelKey = null;
    this.motion.reset(); // the table as it is now, without motion
    this.render();
  }

  detach() {
    this.root = null;
  }

  render() {
    if (this.drawFrame) {
      cancelAnimationFrame(this.drawFrame);
      this.drawFrame = 0;
    }
    const root = this.root;
    if (!root || !root.isConnected) return;
    const m = this.model;
    if (this.removed) {
      mount(root, h("section", { class: "table-page removed" },
        h("div", { class: "notice error", role: "alert", "data-removed": "" }, "The host removed you from this table. ", h("a", { href: "#/" }, "Back to the lobby"))));
      return;
    }
    if (!m || (this.error && this.error.code === "bad_password")) {
      mount(root, h("section", { class: "table-page loading" }, this._loading()));
      return;
    }
    // the action panel is kept while its turn lasts (inputs keep their values and focus)
    const panelKey = JSON.stringify([m.turn && m.turn.id, m.turn && m.turn.continue, m.legal, m.you, m.info.status, m.info.taken, this.blocked()]);
    let panel = root.querySelector(".action-panel");
    const keepPanel = panel && panelKey === this.panelKey;
    if (!keepPanel) panel = this._actionPanel();
    this.panelKey = panelKey;
    const tabs = this._tabs(); // first: it may move the phone's tab back to the table
    const page = h("section", { class: "table-page", "data-tab": this.tab, "data-game": m.info.game, "data-status": m.info.status, "data-you": m.you ?? "" },
      this._head(),
      this.error ? h("div", { class: "notice error", role: "alert" }, this.error.message) : null,
      this.pending ? h("div", { class: "notice", role: "status", "data-pending": "" }, "Waiting for the host to let you sit…") : null,
      this.toast ? h("div", { class: "toast", role: "alert" }, this.toast.text) : null,
      tabs,
      h("div", { class: "table-layout" },
        h("div", { class: "play-area" }, this._felt(), this._myArea(), panel),
        h("aside", { class: "side" }, this._panes())));
    this._gate(page);
    const focused = document.activeElement && keepPanel && panel.contains(document.activeElement) ? document.activeElement : null;
    const oldLog = root.querySelector(".log ol");
    const follow = !oldLog || oldLog.scrollTop + oldLog.clientHeight >= oldLog.scrollHeight - 8;
    const scrolled = oldLog ? oldLog.scrollTop : 0;
    mount(root, page);
    if (focused) focused.focus();
    const log = root.querySelector(".log ol");
    if (log) log.scrollTop = follow ? log.scrollHeight : scrolled; // the log follows unless scrolled back
    if (this.motion.update(root, m.you).won && this.live) playSound("win"); // an amount won at this viewer's seat, just now
    reuseFit(page, this.fit); // where the last fit put the seats, at once; the exact fit before the next paint
    this._fitSoon();
    this._tick();
  }

  /** While no request for this table can be sent (`blocked`), make inert every control of `page` that
   * sends one: each `data-control` element but those marked `data-local`, which act on this page only. */
  _gate(page) {
    if (!this.blocked()) return;
    for (const el of page.querySelectorAll("[data-control]:not([data-local])")) el.disabled = true;
  }

  /** Fit the felt to the screen (feltfit.js) once before the next paint, however many drawings come
   * first (a burst of events draws the table once per event, and a fit reads the layout). */
  _fitSoon() {
    if (this.fitFrame) return;
    this.fitFrame = requestAnimationFrame(() => {
      this.fitFrame = 0;
      const page = this.root && this.root.isConnected ? this.root.querySelector(".table-page") : null;
      if (page) this.fit = fitFelt(page, this.fit && this.fit.scale) || this.fit;
    });
  }

  /** The side panels, each named by its tab (`data-pane`); on a phone only the chosen tab's shows
   * (style.css), on a wider screen all of them, beside the table. */
  _panes() {
    const panes = [["host", hostPanel(this)], ["log", this._logPanel()], ["chat", this.chat.render(this.model)],
      ["hands", historyPanel(this)], ["fair", this._fairPanel()]];
    return panes.filter(([, el]) => el).map(([name, el]) => {
      el.dataset.pane = name;
      el.classList.toggle("pane-off", name !== this.tab);
      return el;
    });
  }

  /** The phone's tab bar (hidden on wider screens): the table, or one side panel in its place; the
   * action bar stays pinned under every tab. Chat's tab counts the lines not yet seen. */
  _tabs() {
    const m = this.model;
    const chatLines = (m.chat || []).length;
    if (this.tab === "chat" || this.chatSeen === null) this.chatSeen = chatLines; // what was there on arrival counts as seen
    const unseen = Math.max(0, chatLines - this.chatSeen);
    const me = this.conn.player;
    const tabs = [["table", "Table"], ["chat", unseen ? `Chat (${unseen})` : "Chat"], ["log", "Log"], ["hands", "Hands"], ["fair", "Fair"]];
    if (me && m.info.owner === me && m.info.status !== "closed") tabs.push(["host", "Host"]);
    if (!tabs.some(([name]) => name === this.tab)) this.tab = "table"; // its panel is gone (the host handed the table over)
    return h("nav", { class: "table-tabs", role: "tablist", "aria-label": "Table and panels" },
      tabs.map(([name, label]) => h("button", { type: "button", role: "tab", class: "tab", "data-tab": name,
        "aria-selected": String(this.tab === name), onclick: () => { this.tab = name; this.render(); } }, label)));
  }

  /** The page of a table not drawn yet: its password prompt, the join's error, the page's stop after
   * joins refused as unavailable, or the join on its way. */
  _loading() {
    if (this.error && this.error.code === "bad_password") return this._passwordForm();
    if (this.error) return h("div", { class: "notice error", role: "alert" }, `${this.error.message}. `, h("a", { href: "#/" }, "Back to the lobby"));
    if (this.unavailable) return h("div", { class: "notice" }, this._unavailablePanel());
    return h("p", { class: "notice" }, "Joining the table…");
  }

  /** The password prompt of a password table (SPEC "Private tables"): the server's message, a field,
   * and Join, which joins again with it. */
  _passwordForm() {
    const submit = (ev) => {
      ev.preventDefault();
      const value = ev.currentTarget.elements.password.value;
      if (!value) return;
      this.password = value;
      this.error = null;
      this.render();
      this.join();
    };
    return h("form", { class: "password-form", onsubmit: submit },
      h("p", {}, "This table has a password."),
      h("div", { class: "notice error", role: "alert", "data-error": this.error.code }, this.error.message),
      h("label", { for: "table-password" }, "Password"),
      h("input", { type: "password", id: "table-password", name: "password", maxlength: 64, autocomplete: "off", required: true }),
      h("button", { type: "submit", class: "primary", id: "password-join" }, "Join"),
      " ", h("a", { href: "#/" }, "Back to the lobby"));
  }

  _head() {
    const m = this.model;
    const info = m.info;
    const g = gameInfo(info.game);
    const owner = this.conn.player && info.owner === this.conn.player;
    const seated = m.you != null;
    const me = seated ? info.occupants.find((o) => o.seat === m.you) : null;
    const controls = [];
    if (owner && info.status === "waiting" && info.taken >= 2) controls.push(h("button", { type: "button", class: "ctl", "data-control": "start", onclick: () => this.act({ type: "start" }) }, "Start the match"));
    if (owner && info.status === "running") controls.push(h("button", { type: "button", class: "ctl", "data-control": "pause", onclick: () => this.act({ type: "pause" }) }, "Pause"));
    if (owner && info.status === "paused") controls.push(h("button", { type: "button", class: "ctl", "data-control": "resume", onclick: () => this.act({ type: "resume" }) }, "Resume"));
    if ((owner || seated) && info.status === "finished") controls.push(h("button", { type: "button", class: "ctl primary", "data-control": "rematch", onclick: () => this.act({ type: "rematch" }) }, "Rematch"));
    if (seated && (info.status === "running" || info.status === "paused") && me) {
      controls.push(me.sitting_out
        ? h("button", { type: "button", class: "ctl", "data-control": "sit_in", onclick: () => this.act({ type: "sit_in" }) }, "Sit in")
        : h("button", { type: "button", class: "ctl", "data-control": "sit_out", onclick: () => this.act({ type: "sit_out" }) }, "Sit out"));
    }
    if (!seated && !this.pending && (info.status === "waiting" || info.status === "finished") && info.taken < info.seats) {
      controls.push(h("button", { type: "button", class: "ctl primary", "data-control": "sit", onclick: () => this.sit() }, "Take a seat"));
    }
    controls.push(h("button", { type: "button", class: "ctl", "data-control": "leave",
      onclick: async () => {
        if (seated && info.status === "running" && !confirm("Leave the table? You will sit out the rest of the match.")) return;
        await this.leave();
        location.hash = "#/";
      } }, seated ? ["Leave", h("span", { class: "wide-only" }, " the table")] : "Stop watching"));
    const status = info.paused ? "paused" : info.status;
    return h("div", { class: "table-head" },
      h("h1", {}, g.title, h("span", { class: "table-id" }, ` · table ${this.id}`)),
      h("div", { class: "pills" },
        h("span", { class: `pill status-${status}`, "data-status": status }, status),
        h("span", { class: "pill" }, `match ${info.match}`),
        h("span", { class: "pill" }, seated ? `you: seat ${m.you}` : "watching"),
        h("span", { class: "pill", title: "spectators" }, `${info.spectators ?? 0} watching`),
        howToPlay(info.game, "How to play", "rules-table")),
      h("div", { class: "controls" }, controls));
  }

  _felt() {
    const m = this.model;
    const info = m.info;
    const game = this._renderer();
    const names = this.playedNames(); // the centre's results name who played (the seats name who sits)
    const ctx = { you: m.you, names };
    const n = info.seats;
    const first = m.you ?? 1;
    const seats = [];
    for (let i = 0; i < n; i++) seats.push(this._seat(((first - 1 + i) % n) + 1, ctx, game)); // from yours, clockwise: placed by feltfit.js
    const center = m.state && game ? game.center(m.state, ctx) : h("div", { class: "center-info" }, h("p", { class: "waiting" },
      info.status === "waiting" ? `Waiting for players: ${info.taken} of ${info.seats} seated` : info.status === "finished" ? "Match over" : ""));
    return h("div", { class: "felt", "data-seats": n }, seats, h("div", { class: "center" }, center), this._resultBanner());
  }

  _seat(seat, ctx, game) {
    const m = this.model;
    const occ = m.info.occupants.find((o) => o.seat === seat);
    const toAct = m.turn && m.turn.seat === seat;
    if (!occ) {
      return h("div", { class: "seat empty", "data-seat": seat, "aria-label": `Seat ${seat}: empty` },
        h("div", { class: "seat-head" }, h("span", { class: "seat-no" }, seat), h("span", { class: "seat-name" }, "empty seat")));
    }
    const view = m.state && game ? game.seatView(m.state, seat, ctx) : { badges: [], status: null, cards: null, bet: null, lines: [] };
    const badges = view.badges.map(([t, title]) => h("span", { class: `badge badge-${t.toLowerCase()}`, title, "aria-label": title }, t));
    if (occ.bot) badges.push(h("span", { class: "badge bot", title: `bot (${occ.bot})` }, "bot"));
    if (occ.sitting_out) badges.push(h("span", { class: "badge away" }, "sitting out"));
    if (!occ.connected && !occ.bot) badges.push(h("span", { class: "badge away" }, "offline"));
    const cls = ["seat", seat === m.you ? "me" : "", toAct ? "to-act" : "", view.status ? `st-${view.status.replace(/\s/g, "-")}` : ""].join(" ");
    const label = `Seat ${seat}: ${occ.name}${seat === m.you ? " (you)" : ""}${toAct ? ", to act" : ""}${view.status ? `, ${view.status}` : ""}`;
    return h("div", { class: cls, "data-seat": seat, "aria-label": label, role: "group" },
      h("div", { class: "seat-head" }, h("span", { class: "seat-no" }, seat), h("span", { class: "seat-name" }, occ.name, seat === m.you ? " (you)" : ""), badges),
      h("div", { class: "seat-cards" }, view.cards),
      h("div", { class: "seat-lines" }, view.lines),
      view.status ? h("div", { class: "seat-status" }, view.status) : null,
      toAct ? h("div", { class: "clock", role: "timer", "aria-label": "action clock" }, h("span", { class: "clock-bar" }), h("span", { class: "clock-text" }, m.turn.continue ? "waiting" : "")) : null,
      toAct && !m.turn.clock ? h("div", { class: "thinking" }, m.turn.continue ? "waiting for Continue" : "thinking…") : null,
      view.bet ? h("div", { class: "bet", "data-bet": view.bet }, view.bet) : null);
  }

  _myArea() {
    const m = this.model;
    const game = this._renderer();
    return m.state && game && game.myArea ? game.myArea(m.state, { you: m.you, names: this.names() }) : null;
  }

  _actionPanel() {
    const m = this.model;
    const send = (action) => this.act(action);
    let content = null;
    if (this.unavailable) {
      content = this._unavailablePanel();
    } else if (this.rejoining) { // the saved model is shown until the join again passes: nothing can be sent before
      content = h("span", { class: "prompt muted", "data-rejoining": "" }, REJOINING);
    } else if (m.info.paused || m.info.status === "paused") { // G-8: no action is accepted until the owner resumes
      content = h("span", { class: "prompt muted", "data-paused": "" }, "Paused by the owner: play resumes when the table does.");
    } else if (m.turn && m.turn.seat === m.you && m.you != null) {
      if (m.turn.continue) content = [h("span", { class: "prompt" }, "The table waits for you:"), continueButton(send)];
      else if (m.legal && m.legal.length) {
        const game = this._renderer() || gameInfo(m.info.game).module;
        const buttons = game.panel ? game.panel(m.legal, m.state || {}, send) : genericPanel(m.legal, send);
        content = [h("span", { class: "prompt" }, "Your turn:"), buttons];
        const pre = takePreaction(this.id, m); // chosen in advance: sent now, for this turn
        if (pre) queueMicrotask(() => send(pre));
      }
    } else if (m.turn) {
      content = [h("span", { class: "prompt muted" }, m.turn.continue
        ? `Waiting for ${nameOf(this.names(), m.turn.seat)} to continue…` : `Waiting for ${nameOf(this.names(), m.turn.seat)}…`),
      preactionBoxes(this.id, m, this._renderer())];
    } else {
      const info = m.info;
      const idle = {
        waiting: `Waiting for players: ${info.taken} of ${info.seats} seated.`,
        finished: m.you != null ? "Match over. Ask for a rematch, or leave the table." : "Match over.",
        paused: "The owner paused the table.",
        closed: "This table is closed.",
        broken: "This table failed and is out of service.",
      }[info.status] || (m.you == null ? "You are watching." : "Dealing…");
      content = h("span", { class: "prompt muted" }, idle);
    }
    return h("div", { class: `action-panel${content && m.turn && m.turn.seat === m.you ? " mine" : ""}`, role: "group", "aria-label": "Your actions" }, content);
  }

  /** The page stopped asking for the table (`_refused`): say so, offer to try again, or go to the lobby
   * (a player keeps the seat there, and the lobby lists the table to come back to). */
  _unavailablePanel() {
    return [h("span", { class: "prompt muted", role: "status", "data-unavailable": "" }, NOT_AVAILABLE, " ",
      h("a", { href: "#/" }, "Back to the lobby")),
    h("button", { type: "button", class: "ctl primary", "data-rejoin": "", onclick: () => this.retry() }, "Try again")];
  }

  _resultBanner() {
    const m = this.model;
    if (m.info.status !== "finished" || !m.info.result || this.bannerClosed === m.info.match) return null;
    const names = this.playedNames(); // who played the match, also once another sits in their seat
    const r = m.info.result;
    const ranking = (r.ranking || []).map((group, i) => h("li", {}, `${i + 1}. ${group.map((s) => nameOf(names, s)).join(", ")}`));
    const v = m.verification;
    const seated = m.you != null;
    const owner = this.conn.player && m.info.owner === this.conn.player;
    return h("div", { class: "result-banner", role: "status" },
      h("button", { type: "button", class: "close", "aria-label": "Hide the result (show the table)",
        onclick: () => { this.bannerClosed = m.info.match; this.render(); } }, "×"),
      h("h2", {}, `${(r.winners || []).map((s) => nameOf(names, s)).join(" & ")} ${(r.winners || []).length > 1 ? "win" : "wins"}!`),
      h("ol", { class: "ranking" }, ranking),
      v ? verdictEl(v, true) : null,
      (seated || owner) ? h("button", { type: "button", class: "ctl primary", "data-control": "rematch-banner", onclick: () => this.act({ type: "rematch" }) }, "Rematch") : null);
  }

  _logPanel() {
    const m = this.model;
    return h("section", { class: "log", "aria-label": "Last actions" },
      h("h2", {}, "Last actions"),
      h("ol", { role: "log", "aria-live": "off" }, m.log.slice(-LOG_LINES).map((l) => h("li", { class: `ev-${l.cls}`, "data-seq": l.seq }, l.text))));
  }

  _fairPanel() {
    const m = this.model;
    const short = (x) => (x ? `${x.slice(0, 16)}…` : "–");
    const rows = [];
    const current = (m.record && (m.record.commitment || m.record.startCommitment)) || m.nextCommitment || m.info.commitment;
    rows.push(h("div", { class: "kv" }, h("span", {}, m.info.status === "running" || m.info.status === "paused" ? "Commitment (this match)" : "Commitment (next match)"),
      h("code", { title: current, "data-commitment": current }, short(current))));
    if (m.you != null && this.seed) rows.push(h("div", { class: "kv" }, h("span", {}, "Your client seed"), h("code", { title: this.seed }, short(this.seed))));
    if (m.ended) {
      rows.push(h("div", { class: "kv" }, h("span", {}, `Server seed of match ${m.ended.match}`), h("code", { title: m.ended.server_seed }, short(m.ended.server_seed))));
      if (m.verification) rows.push(verdictEl(m.verification, false));
      rows.push(h("p", { class: "hint" }, h("a", { href: `/api/tables/${encodeURIComponent(this.id)}/hands`, target: "_blank", rel: "noopener" },
        "Hand histories"), " of the finished matches, every card included."));
    }
    return h("section", { class: "fair", "aria-label": "Fair deal check (G-2)" },
      h("h2", {}, "Fair deal (G-2)"),
      h("p", { class: "hint" }, "The server commits to a secret seed before the match and reveals it at the end; this page then replays the shuffles and checks every card it saw."),
      rows);
  }
}

/**
 * ": small blind 5, …, button seat 3" from match_started.options (SPEC "Game options"): the first
 * button or dealer, and the options whose value is not the catalogue's default.
 */
function playedWith(options, game) {
  if (!options) return "";
  const defaults = Object.fromEntries(gameInfo(game).options.map((o) => [o.name, o.default]));
  const parts = [];
  for (const [name, value] of Object.entries(options)) {
    if (name === "button" || name === "dealer") {
      if (value != null) parts.push(`${name} seat ${value}`);
    } else if (value !== null && JSON.stringify(value) !== JSON.stringify(defaults[name])
        && !(Array.isArray(value) && value.every((v) => v === value[0]) && value[0] === defaults[name])) {
      const words = name.replace(/_/g, " ");
      if (typeof value === "boolean") parts.push(value ? words : `no ${words}`); // "no jokers", not "jokers false"
      else parts.push(`${words} ${Array.isArray(value) ? (value.every((v) => v === value[0]) ? value[0] : value.join("/")) : value}`);
    }
  }
  return parts.length ? `: ${parts.join(", ")}` : "";
}

/** The log line of a `renamed` event `e` (`was`: the name before, null when unknown). */
function describeRename(e, was) {
  if (was === e.name) return null;
  if (was) return `${was} is now ${e.name}`;
  return e.seat != null ? `Seat ${e.seat} is now ${e.name}` : `A spectator is now ${e.name}`;
}

function newRecord(m, commitment) {
  return {
    game: m.info.game, match: m.info.match, you: m.you, options: m.info.options, commitment: commitment || null,
    complete: true, events: [], snapshot: null, done: false,
  };
}

/** The G-2 verdict: "verified", the mismatches, or why the check is partial. */
function verdictEl(v, compact) {
  // v.checked counts distinct cards (verify.js): each card dealt once, however often it was seen;
  // over several hands (fresh deals) it can pass the deck's size, so the hands are named then
  const cards = `${plural(v.checked || 0, "card")}${v.hands > 1 ? ` over ${plural(v.hands, "hand")}` : ""}`;
  const text = {
    checking: "Checking the deal…",
    verified: `✓ Verified: the revealed seed matches the commitment and deals every card seen (${cards})`,
    partial: `Partly checked: ${cards} verified`,
    mismatch: "✗ Mismatch: the revealed seed does not deal what was seen",
    unavailable: "Fair-deal check (G-2) not available for this game: the revealed seed matches the commitment",
    error: "The check failed to run",
  }[v.status] || v.status;
  return h("div", { class: `verdict verdict-${v.status}`, "data-status": v.status, "data-checked": v.checked ?? "", role: "status" },
    h("strong", {}, text),
    (v.mismatches || []).length ? h("ul", { class: "mismatches" }, v.mismatches.slice(0, compact ? 2 : 10).map((t) => h("li", {}, t))) : null,
    !compact && (v.notes || []).length ? h("ul", { class: "notes" }, v.notes.map((t) => h("li", {}, t))) : null);
}

