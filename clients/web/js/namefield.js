// The top bar's "Your name" field. A change renames this player in place (`rename`, protocol 1.4,
// SPEC "Names"): the same player, token and seats, so a seated player keeps playing. The name as
// the server kept it (normalised) goes back into the field and into localStorage (the next hello's
// name); a refused name puts the field back and shows the server's reason beside it.
//
// A name typed before the connection has said hello waits and is sent as a `rename` once it has.
// A server older than 1.4 cannot rename: the name is only saved for this browser's next new player
// (a hello without a token), the token and every seat stay, and the field says so.

import { saveName, savedName } from "./conn.js";

export class NameField {
  /** `conn`: conn.js's Connection; `input`: the text field; `status`: where a refusal or a note shows. */
  constructor(conn, input, status) {
    this.conn = conn;
    this.input = input;
    this.status = status;
    this.kept = null; // the player's name as the server holds it (welcome, rename, renamed); null before hello
    this.pending = null; // the newest name typed and not yet answered
    if (!savedName()) saveName(`guest-${Math.floor(1000 + Math.random() * 9000)}`);
    input.value = savedName();
    input.addEventListener("change", () => this._change());
    conn.addEventListener("ready", (ev) => this._ready(ev.detail));
    conn.addEventListener("frame", (ev) => this._frame(ev.detail));
  }

  _change() {
    const name = this.input.value.trim();
    if (!name) { // blank: nothing to send, the field shows the name again
      this.input.value = this.kept ?? savedName();
      return;
    }
    if (name === (this.kept ?? savedName()) && !this.pending) {
      this._show("", null);
      return;
    }
    this.pending = name;
    if (this.conn.welcome) this._send();
  }

  /** After each welcome: the name held for this player; a name typed meanwhile is sent now. */
  _ready(welcome) {
    this.kept = welcome.name;
    if (this.conn.canRename() && !this.pending) saveName(welcome.name);
    if (this.pending && this.pending !== welcome.name) this._send();
    else {
      this.pending = null;
      if (document.activeElement !== this.input) this.input.value = welcome.name;
    }
  }

  /** A `renamed` event about this player (another tab of this browser renamed it). */
  _frame(f) {
    const e = f.type === "event" ? f.event : null;
    if (!e || e.type !== "renamed" || e.player !== this.conn.player) return;
    this.kept = e.name;
    saveName(e.name);
    if (!this.pending && document.activeElement !== this.input) this.input.value = e.name;
  }

  async _send() {
    const name = this.pending;
    if (!this.conn.canRename()) {
      saveName(name);
      this.pending = null;
      this.input.value = this.kept;
      this._show(`This server cannot rename a player: “${name}” is kept for your next new player`, "note");
      return;
    }
    let kept;
    try {
      kept = await this.conn.rename(name);
    } catch (err) {
      if (err.code === "disconnected") return; // still pending: sent again after the next welcome
      if (this.pending !== name) return; // a newer name is on its way: its answer decides
      this.pending = null;
      this.input.value = this.kept;
      this._show(err.code === "rate_limited" ? `Too many renames: try again in a moment (${err.message})` : err.message, "error");
      return;
    }
    this.kept = kept;
    if (this.pending !== name) return;
    this.pending = null;
    this.input.value = kept;
    this._show("", null);
  }

  /** Show `text` beside the field (`kind`: "error" for a refusal, "note"; "" hides it). */
  _show(text, kind) {
    this.status.textContent = text;
    this.status.hidden = !text;
    if (kind) this.status.dataset.kind = kind;
    else delete this.status.dataset.kind;
  }
}
