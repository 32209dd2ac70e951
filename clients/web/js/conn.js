// The websocket to /ws with the cardhall.v1.json subprotocol: hello, requests answered by `re`,
// server frames dispatched to listeners, and reconnection by itself (hello with the saved token;
// the tables then join again with `since`, see table.js) whenever the websocket closes, whatever
// its close code: 1001 (the server or its node is going away) and 4012 (a node of the service lost
// track of a table the page watches, protocol 1.2) ask for exactly this, and a code the page does
// not know means the same (SPEC "Closing codes", "Versioning"). The player is renamed in place with
// `rename` (protocol 1.4), never by a new hello.
//
// Given a JWT from the operator's site (signin.js), the hello says `auth` instead of the kept token
// (SPEC "Identity"); the welcome's resume token is kept as a guest's is, and the JWT is dropped once
// a welcome has come. A hello the server refuses for who is asking (`bad_auth`, `auth_required`)
// stops the connection (the "refused" event): another try would be refused the same way.

const TOKEN_KEY = "cardhall.token";
const NAME_KEY = "cardhall.name";
/** The first minor version of protocol 1 with the `rename` message. */
const RENAME_MINOR = 4;
/** The refusals of `hello` that trying again cannot mend (SPEC "Identity"). */
const REFUSALS = new Set(["bad_auth", "auth_required"]);

export class ServerError extends Error {
  constructor(frame) {
    super(frame.message || frame.code);
    this.code = frame.code;
    this.frame = frame;
  }
}

/** The name the next `hello` says: a new player is created under it (a resumed player keeps the
 * name the server holds for it, SPEC "Client messages"). */
export function savedName() {
  return localStorage.getItem(NAME_KEY) || "";
}

export function saveName(name) {
  localStorage.setItem(NAME_KEY, name);
}

/**
 * Events (EventTarget): "status" (detail: "connecting" | "online" | "reconnecting" | "refused"),
 * "ready" (after each welcome: detail = the welcome frame), "frame" (detail: every server frame
 * that is not a reply: `event` frames; snapshots and replies also reach their request), "refused"
 * (detail: the error frame of a `hello` refused with `bad_auth` or `auth_required`; the connection
 * has stopped, `refusal` holds the frame).
 *
 * `auth`: a JWT from the server's operator (signin.js), said in the first hello instead of the kept
 * token; null: the kept token, else a new guest.
 */
export class Connection extends EventTarget {
  constructor(url, auth = null) {
    super();
    this.url = url;
    this.auth = auth;
    this.refusal = null;
    this.ws = null;
    this.nextId = 1;
    this.pending = new Map();
    this.player = null;
    this.welcome = null;
    this.status = "connecting";
    this.retry = 0;
    this.stopped = false;
    this.lastFrame = 0;
    this.readyPromise = null;
    this._resolveReady = null;
    this._newReadyPromise();
    setInterval(() => this._heartbeat(), 10000);
  }

  _newReadyPromise() {
    this.readyPromise = new Promise((resolve) => { this._resolveReady = resolve; });
  }

  /** Resolves once the connection has said hello (again after a reconnect). */
  ready() {
    return this.readyPromise;
  }

  start() {
    this.stopped = false;
    this._open();
  }

  _setStatus(status) {
    this.status = status;
    this.dispatchEvent(new CustomEvent("status", { detail: status }));
  }

  _open() {
    this._setStatus(this.retry ? "reconnecting" : "connecting");
    const ws = new WebSocket(this.url, ["cardhall.v1.json"]);
    this.ws = ws;
    ws.onopen = () => this._hello();
    ws.onmessage = (msg) => this._receive(msg.data);
    ws.onclose = () => { // any close code (1001, 4012, one we do not know): reconnect, join with since
      if (this.ws !== ws) return;
      this.ws = null;
      for (const [, p] of this.pending) p.reject(new ServerError({ code: "disconnected", message: "connection lost" }));
      this.pending.clear();
      if (this.welcome) this._newReadyPromise();
      this.welcome = null;
      if (this.stopped) return;
      this.retry += 1;
      this._setStatus("reconnecting");
      const delay = Math.min(5000, 250 * 2 ** Math.min(this.retry, 5)) * (0.75 + Math.random() / 2);
      setTimeout(() => this._open(), delay);
    };
  }

  async _hello() {
    const name = savedName() || "player";
    const token = localStorage.getItem(TOKEN_KEY);
    // a JWT (until a welcome has come) names the player; else the kept token resumes one
    const who = this.auth ? { auth: this.auth } : token ? { token } : {};
    let welcome;
    try {
      try {
        welcome = await this.request({ type: "hello", name, batch: true, ...who });
      } catch (err) {
        if (err.code !== "unknown_token") throw err;
        localStorage.removeItem(TOKEN_KEY); // the server forgot us (no durable store): a new player
        welcome = await this.request({ type: "hello", name, batch: true });
      }
    } catch (err) {
      if (REFUSALS.has(err.code)) this._refused(err.frame);
      else if (this.ws) this.ws.close(); // dropped, rate limited, unavailable: try again later
      return;
    }
    this.auth = null; // exchanged for the resume token: reconnects resume with that
    localStorage.setItem(TOKEN_KEY, welcome.token);
    this.player = welcome.player;
    this.welcome = welcome;
    this.retry = 0;
    this._setStatus("online");
    this._resolveReady(welcome);
    this.dispatchEvent(new CustomEvent("ready", { detail: welcome }));
  }

  /** The server refused this page's hello (`frame`: its error): stop, say so, never retry. */
  _refused(frame) {
    this.stopped = true;
    this.refusal = frame;
    if (this.ws) this.ws.close();
    this._setStatus("refused");
    this.dispatchEvent(new CustomEvent("refused", { detail: frame }));
  }

  _receive(text) {
    this.lastFrame = Date.now();
    let frame;
    try {
      frame = JSON.parse(text);
    } catch {
      return;
    }
    const frames = frame.type === "batch" ? frame.frames : [frame];
    for (const f of frames) this._dispatch(f);
  }

  _dispatch(frame) {
    if (frame.type === "event" || (frame.type === "snapshot" && frame.re == null)) {
      this.dispatchEvent(new CustomEvent("frame", { detail: frame }));
      return;
    }
    if (frame.type === "snapshot") this.dispatchEvent(new CustomEvent("frame", { detail: frame }));
    const waiting = frame.re != null ? this.pending.get(frame.re) : undefined;
    if (waiting) {
      this.pending.delete(frame.re);
      if (frame.type === "error") waiting.reject(new ServerError(frame));
      else waiting.resolve(frame);
    } else if (frame.type === "error") {
      this.dispatchEvent(new CustomEvent("frame", { detail: frame }));
    }
  }

  /** Send `msg` with a fresh id; resolves with the reply, rejects with ServerError. */
  request(msg) {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN) {
      return Promise.reject(new ServerError({ code: "disconnected", message: "not connected" }));
    }
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.ws.send(JSON.stringify({ ...msg, id }));
    });
  }

  /** A request once the connection is ready (waits through a reconnect). */
  async send(msg) {
    await this.ready();
    return this.request(msg);
  }

  /** Whether the server renames a player in place (`rename`, protocol 1.4: welcome.minor >= 4). */
  canRename() {
    return Boolean(this.welcome) && (this.welcome.minor ?? 0) >= RENAME_MINOR;
  }

  /**
   * Rename this player in place (SPEC "Names", `rename`, protocol 1.4): the same player, token and
   * seats under another name. Resolves with the name as the server kept it (normalised, saved for
   * the next hello); rejects with ServerError: `bad_request` (the reason in `message`),
   * `rate_limited` (too many renames in a short time), `disconnected` (the connection dropped).
   * Only once the connection has said hello to a server of protocol 1.4 or later (`canRename`).
   */
  async rename(name) {
    if (!this.canRename()) throw new ServerError({ code: "cannot_rename", message: "this server cannot rename a player" });
    const reply = await this.request({ type: "rename", name });
    saveName(reply.name);
    if (this.welcome) this.welcome.name = reply.name;
    return reply.name;
  }

  _heartbeat() {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN || !this.welcome) return;
    if (Date.now() - this.lastFrame > 25000) { this.ws.close(); return; } // no pong for a while: reconnect
    this.request({ type: "ping" }).catch(() => {});
  }
}
