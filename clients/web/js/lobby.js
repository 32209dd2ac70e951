// The lobby: the open tables (GET /api/tables, refreshed) and the form that creates one
// (game, seats, bots, the game's options, table options) over the websocket.

import { h, mount } from "./dom.js";
import { GAMES, TABLE_OPTIONS, gameInfo } from "./games/index.js";
import { forgetTable, savedTables } from "./table.js";

const LAST_GAME = "cardhall.lastGame";

function field(opt, prefix) {
  const id = `${prefix}-${opt.name}`;
  let input;
  if (opt.type === "checkbox") input = h("input", { type: "checkbox", id, name: opt.name, checked: opt.value ? true : null });
  else if (opt.type === "select") input = h("select", { id, name: opt.name }, opt.choices.map(([v, l]) => h("option", { value: v, selected: v === opt.value ? true : null }, l)));
  else input = h("input", { type: "number", id, name: opt.name, value: opt.value, min: opt.min, max: opt.max, step: opt.step, inputmode: "decimal" });
  return h("div", { class: `field field-${opt.type}` }, h("label", { for: id }, opt.label), input);
}

/** The form's values as a create_table message (options that differ from the defaults only). */
function readForm(form) {
  const game = form.game.value;
  const g = GAMES[game];
  const seats = Number(form.seats.value);
  const bots = Number(form.bots.value);
  const botName = form.bot.value || null;
  const options = {};
  const convert = (opt, raw) => {
    if (opt.type === "checkbox") return Boolean(raw);
    if (raw === "" || raw === null || raw === undefined) return null;
    if (opt.type === "select") return /^\d+$/.test(raw) ? Number(raw) : raw;
    return Number(raw);
  };
  for (const opt of [...g.options, ...TABLE_OPTIONS]) {
    const el = form.elements[opt.name];
    if (!el) continue;
    let v = convert(opt, opt.type === "checkbox" ? el.checked : el.value);
    if (opt.name === "blind_levels" && v === 0) v = null;
    if (v !== convert(opt, opt.value)) options[opt.name] = v;
  }
  return { type: "create_table", game, seats, options, bots: Array.from({ length: bots }, () => botName) };
}

export class Lobby {
  constructor(conn, onCreated) {
    this.conn = conn;
    this.onCreated = onCreated;
    this.root = null;
    this.tables = [];
    this.error = null;
    this.timer = null;
    this.game = localStorage.getItem(LAST_GAME) || "no_limit_holdem";
  }

  attach(root) {
    this.root = root;
    this.renderShell();
    this.refresh();
    this.timer = setInterval(() => this.refresh(), 2500);
  }

  detach() {
    clearInterval(this.timer);
    this.root = null;
  }

  async refresh() {
    try {
      const r = await fetch("/api/tables", { cache: "no-store" });
      this.tables = await r.json();
      this.listError = null;
      const open = new Set(this.tables.map((t) => t.id));
      for (const t of savedTables()) if (!open.has(t.table)) forgetTable(t.table); // closed since
    } catch (err) {
      this.listError = "The lobby is unreachable; retrying…";
    }
    this.renderList();
  }

  renderShell() {
    if (!this.root) return;
    const games = Object.entries(GAMES);
    const form = h("form", { class: "create", "aria-labelledby": "create-title", onsubmit: (ev) => { ev.preventDefault(); this.create(ev.currentTarget); } },
      h("h2", { id: "create-title" }, "New table"),
      h("div", { class: "field" }, h("label", { for: "game" }, "Game"),
        h("select", { id: "game", name: "game", onchange: (ev) => { this.game = ev.currentTarget.value; localStorage.setItem(LAST_GAME, this.game); this.renderShell(); this.renderList(); } },
          games.map(([id, g]) => h("option", { value: id, selected: id === this.game ? true : null }, g.title)))),
      h("p", { class: "blurb" }, gameInfo(this.game).blurb),
      this.gameFields(),
      h("details", { class: "more" }, h("summary", {}, "Table options (clocks, pacing)"),
        h("div", { class: "grid" }, TABLE_OPTIONS.map((o) => field(o, "t")))),
      h("button", { type: "submit", class: "primary", id: "create-button" }, "Create table and sit down"),
      h("div", { class: "form-error", role: "alert", id: "create-error" }));
    mount(this.root, h("section", { class: "lobby" },
      h("div", { class: "lobby-intro" }, h("h1", {}, "Card tables"),
        h("p", {}, "Play Hold'em, Alamo, Loco Poker or Avalanche against people and bots, or watch any table. Every deal can be checked: the server commits to its seed before the match and this page replays every card when it ends.")),
      h("div", { class: "lobby-grid" }, form,
        h("section", { class: "tables", "aria-labelledby": "tables-title" }, h("h2", { id: "tables-title" }, "Open tables"), h("div", { id: "table-list" })))));
  }

  gameFields() {
    const g = GAMES[this.game];
    const [lo, hi] = g.seats;
    return h("div", { class: "grid" },
      h("div", { class: "field" }, h("label", { for: "seats" }, `Seats (${lo}–${hi})`),
        h("input", { type: "number", id: "seats", name: "seats", min: lo, max: hi, value: g.defaultSeats, required: true,
          oninput: (ev) => { // keep a seat free for you
            const bots = ev.currentTarget.form.elements.bots;
            const seats = Number(ev.currentTarget.value);
            if (seats >= lo && seats <= hi) { bots.max = seats - 1; if (Number(bots.value) >= seats) bots.value = seats - 1; }
          } })),
      h("div", { class: "field" }, h("label", { for: "bots" }, "Bots"),
        h("input", { type: "number", id: "bots", name: "bots", min: 0, max: hi - 1, value: g.defaultSeats - 1 })),
      h("div", { class: "field" }, h("label", { for: "bot" }, "Bot strategy"),
        h("select", { id: "bot", name: "bot" }, h("option", { value: "" }, `default (${g.bots[0]})`), g.bots.map((b) => h("option", { value: b }, b)))),
      g.options.map((o) => field(o, "g")));
  }

  async create(form) {
    const msg = readForm(form);
    const error = this.root.querySelector("#create-error");
    error.textContent = "";
    if (msg.bots.length >= msg.seats) { error.textContent = "Leave at least one seat for yourself: fewer bots than seats."; return; }
    const button = form.querySelector("#create-button");
    button.disabled = true;
    try {
      const created = await this.conn.send(msg);
      this.onCreated(created.table, "player");
    } catch (err) {
      error.textContent = `Could not create the table: ${err.message}`;
    } finally {
      button.disabled = false;
    }
  }

  renderList() {
    const list = this.root && this.root.querySelector("#table-list");
    if (!list) return;
    const mine = new Map(savedTables().map((t) => [t.table, t]));
    const rows = this.tables.map((t) => {
      const g = gameInfo(t.game);
      const seat = mine.get(t.id);
      const canSit = (t.status === "waiting" || t.status === "finished") && t.taken < t.seats;
      return h("li", { class: `table-row status-${t.status}`, "data-table": t.id, "data-game": t.game },
        h("div", { class: "row-main" },
          h("strong", {}, g.title),
          h("span", { class: "muted" }, ` · ${t.id}`),
          h("div", { class: "row-meta" },
            h("span", { class: `pill status-${t.status}` }, t.status),
            h("span", {}, `${t.taken}/${t.seats} seated`),
            h("span", {}, `${t.spectators} watching`),
            seat && seat.role === "player" ? h("span", { class: "pill you" }, "your table") : null)),
        h("div", { class: "row-actions" },
          seat && seat.role === "player"
            ? h("a", { class: "button primary", href: `#/t/${t.id}`, "data-go": "return" }, "Return")
            : canSit ? h("button", { type: "button", class: "primary", "data-go": "play", onclick: () => this.onCreated(t.id, "player") }, "Play") : null,
          h("a", { class: "button", href: `#/t/${t.id}/watch`, "data-go": "watch" }, "Watch")));
    });
    mount(list,
      this.listError ? h("p", { class: "notice error" }, this.listError) : null,
      rows.length ? h("ul", { class: "table-list" }, rows) : h("p", { class: "muted" }, "No open tables yet: create one."));
  }
}
