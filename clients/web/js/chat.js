// Table chat (SPEC "Chat"): the messages of the table's `chat` events, an input that sends `chat`,
// a per-player mute kept in this browser, and the owner's switch for spectators' chat.
//
// Names and text are the server's data: they go into text nodes only (dom.js `h`), never HTML.
// The model keeps the last messages as m.chat = [{seq, seat (null: a spectator), name, text, from}],
// saved with the rest of the model, so a reload that resumes with `since` keeps them.

import { h, mount } from "./dom.js";

/** The table events this module handles (table.js keeps the turn open across them). */
export const CHAT_EVENTS = new Set(["chat", "spectator_chat"]);
/** The longest message the server takes, in characters (code points). */
export const MAX_CHARS = 200;
/** Messages kept in the model. */
const KEEP = 100;
/** localStorage key: the public ids of the players this browser mutes (a JSON list). */
const MUTED_KEY = "cardhall.chat.muted";

/** The set of muted player ids (public ids, `chat.from`). */
export function mutedPlayers() {
  try {
    const list = JSON.parse(localStorage.getItem(MUTED_KEY));
    return new Set(Array.isArray(list) ? list.filter((x) => typeof x === "string") : []);
  } catch {
    return new Set();
  }
}

function saveMuted(set) {
  try {
    localStorage.setItem(MUTED_KEY, JSON.stringify([...set]));
  } catch { /* storage full: the mute lasts for this page only */ }
}

/**
 * Apply a `chat` or `spectator_chat` event `e` (its frame's `seq`) to the table model `m`:
 * a message goes to m.chat, the switch to m.info.spectator_chat.
 */
export function chatEvent(m, e, seq) {
  if (e.type === "spectator_chat") {
    m.info.spectator_chat = e.on;
    return;
  }
  const line = { seq, seat: e.seat ?? null, name: String(e.name), text: String(e.text), from: String(e.from) };
  m.chat = (m.chat || []).concat([line]).slice(-KEEP);
}

/** The log line of a `spectator_chat` event (null for a message: it shows in the chat panel). */
export function describeChat(e) {
  if (e.type !== "spectator_chat") return null;
  return e.on ? "The owner allowed spectators' chat" : "The owner turned spectators' chat off";
}

/**
 * The chat panel of one table page. `table` is table.js's Table (its conn, id, model, `blocked`). The panel is
 * one element for the page's whole life, put back into each redraw, so what is typed stays.
 */
export class ChatPanel {
  constructor(table) {
    this.table = table;
    this.muted = mutedPlayers();
    this.error = null;
    this.sending = false;
    this.list = h("ol", { class: "chat-lines", role: "log", "aria-live": "polite", "aria-label": "Chat messages" });
    this.counter = h("span", { class: "chat-count", "aria-live": "off" }, `0/${MAX_CHARS}`);
    this.input = h("input", { class: "chat-input", type: "text", maxlength: MAX_CHARS * 2, autocomplete: "off",
      spellcheck: "true", "aria-label": "Chat message", placeholder: "Say something…",
      oninput: () => this._count(), onkeydown: (ev) => this._key(ev) });
    this.status = h("p", { class: "chat-error", role: "alert" });
    this.switchBox = h("input", { type: "checkbox", "data-control": "spectator-chat",
      onchange: () => this._switch(this.switchBox.checked) });
    this.switchRow = h("label", { class: "chat-switch" }, this.switchBox, " Spectators may chat");
    this.mutedRow = h("p", { class: "chat-muted" });
    this.el = h("section", { class: "chat", "aria-label": "Table chat" },
      h("h2", {}, "Chat"), this.list, this.mutedRow,
      h("div", { class: "chat-form" }, this.input, this.counter), this.status, this.switchRow);
  }

  /** The panel drawn for model `m` (the same element every time). */
  render(m) {
    const focused = document.activeElement === this.input;
    const [start, end] = [this.input.selectionStart, this.input.selectionEnd];
    const follow = this.list.scrollTop + this.list.clientHeight >= this.list.scrollHeight - 8;
    const me = this.table.conn.player;
    const lines = (m.chat || []).filter((l) => !this.muted.has(l.from));
    mount(this.list, lines.map((l) => this._line(l, me)));
    this._mutedList(m);
    const owner = me && m.info.owner === me;
    this.switchRow.hidden = !owner;
    this.switchBox.checked = m.info.spectator_chat !== false;
    const silenced = m.you == null && m.info.spectator_chat === false;
    const closed = ["closed", "broken"].includes(m.info.status);
    const blocked = this.table.blocked(); // not joined yet: a message would be refused (`not_joined`)
    this.input.disabled = silenced || closed || Boolean(blocked);
    this.input.placeholder = blocked || (silenced ? "The owner turned spectators' chat off" : "Say something…");
    this.switchBox.disabled = Boolean(blocked);
    this.status.textContent = this.error || "";
    this.status.hidden = !this.error;
    // table.js mounts the page right after this returns: then the input gets its focus back
    queueMicrotask(() => {
      if (follow) this.list.scrollTop = this.list.scrollHeight;
      if (focused && this.input.isConnected && document.activeElement !== this.input && !this.input.disabled) {
        this.input.focus({ preventScroll: true });
        this.input.setSelectionRange(start, end);
      }
    });
    return this.el;
  }

  _line(l, me) {
    const who = l.seat == null ? `${l.name} (watching)` : l.name;
    return h("li", { class: `chat-line${l.from === me ? " mine" : ""}`, "data-from": l.from, "data-seq": l.seq },
      h("span", { class: "chat-name" }, who), h("span", { class: "chat-text" }, l.text),
      l.from !== me ? h("button", { type: "button", class: "chat-mute", "data-mute": l.from, title: `Mute ${l.name} (only for you)`,
        "aria-label": `Mute ${l.name}`, onclick: () => this._mute(l.from, true) }, "mute") : null);
  }

  _mutedList(m) {
    const names = new Map();
    for (const l of m.chat || []) if (this.muted.has(l.from)) names.set(l.from, l.name);
    const buttons = [...names].map(([id, name]) => h("button", { type: "button", class: "chat-unmute", "data-unmute": id,
      "aria-label": `Unmute ${name}`, onclick: () => this._mute(id, false) }, `${name} ×`));
    mount(this.mutedRow, buttons.length ? ["Muted: ", buttons] : []);
    this.mutedRow.hidden = !buttons.length;
  }

  _mute(id, on) {
    this.muted = mutedPlayers(); // another tab may have changed it
    if (on) this.muted.add(id); else this.muted.delete(id);
    saveMuted(this.muted);
    this.table.render();
  }

  _count() {
    const n = [...this.input.value].length;
    this.counter.textContent = `${n}/${MAX_CHARS}`;
    this.counter.classList.toggle("over", n > MAX_CHARS);
  }

  _key(ev) {
    ev.stopPropagation(); // the table's keys (F, C, Space, Enter continues) are not for this field
    if (ev.key === "Enter" && !ev.isComposing) {
      ev.preventDefault();
      this._send();
    }
  }

  async _send() {
    const text = this.input.value.trim();
    if (!text || this.sending) return;
    if ([...text].length > MAX_CHARS) {
      this._show(`At most ${MAX_CHARS} characters`);
      return;
    }
    this.sending = true;
    try {
      await this.table.conn.send({ type: "chat", table: this.table.id, text });
      this.input.value = "";
      this._count();
      this._show(null);
    } catch (err) {
      this._show(err.code === "rate_limited" ? "Slow down: too many messages" : err.message);
    } finally {
      this.sending = false;
    }
  }

  async _switch(on) {
    try {
      await this.table.conn.send({ type: "act", table: this.table.id, action: { type: "spectator_chat", on } });
    } catch (err) {
      this._show(err.message);
    }
  }

  _show(text) {
    this.error = text;
    this.table.render();
  }
}
