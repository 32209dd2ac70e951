// The lobby: the open tables (GET /api/tables, refreshed) and the form that creates one over the
// websocket: game, seats, bots, the game's options and the table options, all as the server's
// catalogue (GET /api/games) describes them.

import { h, mount } from "./dom.js";
import { loadedCatalogue } from "./catalogue.js";
import { TABLE_LABELS, gameInfo, howToPlay, loadGames as loadGamesAndRenderers } from "./games/index.js";
import { forgetTable, savedTables } from "./table.js";
import { Seated, freeText, joinable, keepOrder, sortTables, stakesText } from "./lobbyrows.js";

const LAST_GAME = "cardhall.lastGame";

/** The table options of a private table (SPEC "Private tables"), shown at once with a line of help each. */
const PRIVACY = {
  visibility: "Unlisted: the table is in no lobby; people join it with its invite link.",
  password: "Players need it to sit down (leave it empty for none).",
  password_spectators: "Spectators need the password too.",
  approve_seats: "You let each player sit (or not) before they take a seat.",
};
const PRIVACY_LABELS = { visibility: "Visibility", password: "Password", password_spectators: "Spectators need it too", approve_seats: "Approve seats" };

/** A privacy field: the catalogue's option drawn as `field` does (its help line this page's own
 * words), a password input for the password. */
function privacyField(opt) {
  const el = field({ ...opt, meaning: PRIVACY[opt.name], rule: null }, "t");
  el.querySelector("label").textContent = PRIVACY_LABELS[opt.name];
  if (opt.name === "password") {
    const input = el.querySelector("input");
    input.type = "password";
    input.autocomplete = "new-password";
  }
  return el;
}

/** "a, b or c" */
const listOf = (words) => (words.length > 1 ? `${words.slice(0, -1).join(", ")} or ${words[words.length - 1]}` : words.join(""));
/** The words of an option's field: `words` is gameInfo()'s {labels, choiceLabels} (the table's only by default). */
const TABLE_WORDS = { labels: TABLE_LABELS, choiceLabels: {} };
const label = (opt, words) => words.labels[opt.name] || opt.name.replace(/_/g, " ");
const choiceLabel = (opt, v, words) => (words.choiceLabels[opt.name] || {})[v] || String(v);

/**
 * One form field for a catalogue option (GET /api/games: name, type, default, nullable, min, max,
 * choices, meaning, rule), its `meaning` (and rule tag) as a line of help under it (#<id>-help).
 * Choices and nullable booleans are selects (option values: the choices as text, "" = null);
 * `seats` bounds seat-valued options; `words` labels the field and its choices.
 */
function field(opt, prefix, seats, words = TABLE_WORDS) {
  const id = `${prefix}-${opt.name}`;
  const hint = opt.meaning + (opt.rule ? ` (${opt.rule})` : "");
  let input;
  if (opt.type === "bool" && !opt.nullable) {
    input = h("input", { type: "checkbox", id, name: opt.name, checked: opt.default ? true : null });
  } else if (opt.type === "choice" || opt.type === "bool") {
    const values = opt.type === "bool" ? [true, false] : opt.choices;
    const items = values.map((v) => h("option", { value: String(v), selected: v === opt.default ? true : null },
      opt.type === "bool" ? (v ? "yes" : "no") : choiceLabel(opt, v, words)));
    if (opt.nullable) items.unshift(h("option", { value: "", selected: opt.default === null ? true : null }, "automatic"));
    input = h("select", { id, name: opt.name }, items);
  } else if (opt.type === "text") {
    input = h("input", { type: "text", id, name: opt.name, value: opt.default ?? "", maxlength: opt.max });
  } else {
    const seat = opt.type === "seat";
    input = h("input", { type: "number", id, name: opt.name, value: opt.default ?? "", inputmode: "decimal",
      min: seat ? 1 : opt.nullable && opt.min > 0 ? 0 : opt.min, max: seat ? seats : opt.max,
      step: opt.type === "number" ? "any" : 1, placeholder: opt.nullable ? "automatic" : null });
  }
  const help = opt.meaning ? h("p", { class: "hint", id: `${id}-help` }, hint) : null;
  if (help) input.setAttribute("aria-describedby", help.id);
  return h("div", { class: `field field-${input.type === "checkbox" ? "checkbox" : opt.type}` },
    h("label", { for: id }, label(opt, words)), input, help);
}

/** The value a field holds, typed as its option wants (null for an empty nullable field). */
function fieldValue(opt, el) {
  if (opt.type === "bool" && !opt.nullable) return el.checked;
  const raw = el.value;
  if (opt.type === "choice" || opt.type === "bool") {
    if (raw === "") return null;
    return (opt.type === "bool" ? [true, false] : opt.choices).find((v) => String(v) === raw);
  }
  if (opt.type === "text") return raw === "" && opt.nullable ? null : raw;
  if (raw === "") return opt.nullable ? null : opt.default;
  const n = Number(raw);
  if (opt.nullable && n === 0 && opt.min > 0) return null; // "0: never", e.g. blind levels
  return n;
}

/** The form's values as a create_table message (options that differ from the defaults only). */
function readForm(form, catalogue) {
  const game = form.game.value;
  const g = gameInfo(game);
  const seats = Number(form.seats.value);
  const bots = Number(form.bots.value);
  const botName = form.bot.value || null;
  const options = {};
  for (const opt of [...g.options, ...catalogue.table_options]) {
    const el = form.elements[opt.name];
    if (!el) continue;
    const v = fieldValue(opt, el);
    if (JSON.stringify(v) !== JSON.stringify(opt.default)) options[opt.name] = v;
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
    this.catalogueError = null;
    this.game = localStorage.getItem(LAST_GAME); // null: the catalogue's first game (renderShell)
    this.seated = new Seated();
    this.filters = { game: "", free: "", bots: "" }; // GET /api/tables's query (SPEC "HTTP"): "" = any
    this.onFocus = () => { if (!document.hidden) this.refresh(); }; // back to the tab: the list is fresh at once
  }

  attach(root) {
    this.root = root;
    this.renderShell();
    if (!loadedCatalogue()) this.loadGames();
    this.refresh();
    this.timer = setInterval(() => { if (!document.hidden) this.refresh(); }, 2500);
    addEventListener("focus", this.onFocus);
    document.addEventListener("visibilitychange", this.onFocus);
  }

  /** The form needs the server's catalogue (GET /api/games) and the games' renderers: fetch them,
   * retrying while it fails. */
  async loadGames() {
    try {
      await loadGamesAndRenderers();
      this.catalogueError = null;
    } catch (err) {
      this.catalogueError = "The list of games is unreachable; retrying…";
      setTimeout(() => this.root && this.loadGames(), 2000);
    }
    this.renderShell();
    this.renderList();
  }

  detach() {
    clearInterval(this.timer);
    removeEventListener("focus", this.onFocus);
    document.removeEventListener("visibilitychange", this.onFocus);
    this.root = null;
  }

  async refresh() {
    try {
      const query = new URLSearchParams(Object.entries(this.filters).filter(([, v]) => v !== ""));
      if (this.conn.player) query.set("player", this.conn.player); // the server lists this player's tables first
      const r = await fetch(`/api/tables${query.toString() ? `?${query}` : ""}`, { cache: "no-store" });
      if (!r.ok) throw new Error(`HTTP ${r.status}`);
      const seats = new Set(savedTables().filter((t) => t.role === "player").map((t) => t.table));
      const me = this.conn.player;
      const sorted = sortTables(await r.json(), (t) => (me && t.owner === me) || seats.has(t.id));
      this.tables = this.pointerIn && this.tables ? keepOrder(sorted, this.tables) : sorted;
      this.listError = null;
      this.seated.refresh(this.tables, () => this.renderList());
      const open = new Set(this.tables.map((t) => t.id));
      for (const t of savedTables()) if (!open.has(t.table)) forgetTable(t.table); // closed since
    } catch (err) {
      this.listError = "The lobby is unreachable; retrying…";
    }
    this.renderList();
  }

  renderShell() {
    if (!this.root) return;
    const catalogue = loadedCatalogue();
    let form;
    if (!catalogue) {
      form = h("section", { class: "create", "aria-labelledby": "create-title" }, h("h2", { id: "create-title" }, "New table"),
        h("p", { class: this.catalogueError ? "notice error" : "muted" }, this.catalogueError || "Loading the games…"));
    } else {
      if (!catalogue.games.some((g) => g.name === this.game)) this.game = catalogue.games[0].name;
      form = h("form", { class: "create", "aria-labelledby": "create-title", onsubmit: (ev) => { ev.preventDefault(); this.create(ev.currentTarget); } },
        h("h2", { id: "create-title" }, "New table"),
        h("div", { class: "field" }, h("label", { for: "game" }, "Game"),
          h("select", { id: "game", name: "game", onchange: (ev) => { this.game = ev.currentTarget.value; localStorage.setItem(LAST_GAME, this.game); this.renderShell(); this.renderList(); } },
            catalogue.games.map((g) => h("option", { value: g.name, selected: g.name === this.game ? true : null }, g.title))),
          howToPlay(this.game, `How to play ${gameInfo(this.game).title}`, "rules-create")),
        h("p", { class: "blurb" }, gameInfo(this.game).blurb),
        this.gameFields(),
        h("fieldset", { class: "privacy" }, h("legend", {}, "Who may join"),
          h("div", { class: "grid" }, catalogue.table_options.filter((o) => o.name in PRIVACY).map(privacyField))),
        h("details", { class: "more" }, h("summary", {}, "Table options (clocks, pacing)"),
          h("div", { class: "grid" }, catalogue.table_options.filter((o) => !(o.name in PRIVACY)).map((o) => field(o, "t")))),
        h("button", { type: "submit", class: "primary", id: "create-button" }, "Create table and sit down"),
        h("div", { class: "form-error", role: "alert", id: "create-error" }));
    }
    mount(this.root, h("section", { class: "lobby" },
      h("div", { class: "lobby-intro" }, h("h1", {}, "Card tables"),
        h("p", {}, `Play ${catalogue ? listOf(catalogue.games.map((g) => g.title)) : "cards"} against people and bots, or watch any table. Every deal can be checked: the server commits to its seed before the match and this page replays every card when it ends.`)),
      h("div", { class: "lobby-grid" }, form,
        h("section", { class: "tables", "aria-labelledby": "tables-title" }, h("h2", { id: "tables-title" }, "Open tables"),
          this.filterBar(catalogue), h("div", { id: "table-list",
            onpointerenter: () => { this.pointerIn = true; }, onpointerleave: () => { this.pointerIn = false; } })))));
  }

  /** The list's filters: game, free seats, bots (each a query parameter of GET /api/tables). */
  filterBar(catalogue) {
    const set = (name) => (ev) => { this.filters[name] = ev.currentTarget.value; this.refresh(); };
    const opt = (value, text, now) => h("option", { value, selected: value === now ? true : null }, text);
    const f = this.filters;
    return h("div", { class: "filters", role: "group", "aria-label": "Filter the tables" },
      h("label", {}, "Game ", h("select", { id: "filter-game", onchange: set("game") }, opt("", "any", f.game),
        (catalogue ? catalogue.games : []).map((g) => opt(g.name, g.title, f.game)))),
      h("label", {}, "Free seats ", h("select", { id: "filter-free", onchange: set("free") }, opt("", "any", f.free),
        ["1", "2", "3", "4"].map((n) => opt(n, `${n}+`, f.free)))),
      h("label", {}, "Bots ", h("select", { id: "filter-bots", onchange: set("bots") }, opt("", "any", f.bots),
        opt("true", "with bots", f.bots), opt("false", "people only", f.bots))));
  }

  gameFields() {
    const g = gameInfo(this.game);
    const { min: lo, max: hi } = g.seats;
    const seats = g.seats.default;
    const featured = g.options.filter((o) => g.featured.includes(o.name));
    const others = g.options.filter((o) => !g.featured.includes(o.name));
    return h("div", {},
      h("div", { class: "grid" },
        h("div", { class: "field" }, h("label", { for: "seats" }, `Seats (${lo}–${hi})`),
          h("input", { type: "number", id: "seats", name: "seats", min: lo, max: hi, value: seats, required: true,
            oninput: (ev) => { // keep a seat free for you
              const form = ev.currentTarget.form;
              const bots = form.elements.bots;
              const n = Number(ev.currentTarget.value);
              if (n >= lo && n <= hi) {
                bots.max = n - 1;
                if (Number(bots.value) >= n) bots.value = n - 1;
                for (const o of g.options) if (o.type === "seat" && form.elements[o.name]) form.elements[o.name].max = n;
              }
            } })),
        h("div", { class: "field" }, h("label", { for: "bots" }, "Bots"),
          h("input", { type: "number", id: "bots", name: "bots", min: 0, max: hi - 1, value: seats - 1 })),
        h("div", { class: "field" }, h("label", { for: "bot" }, "Bot strategy"),
          h("select", { id: "bot", name: "bot" }, h("option", { value: "" }, `default (${g.default_bot})`), g.bots.map((b) => h("option", { value: b }, b)))),
        featured.map((o) => field(o, "g", seats, g))),
      others.length ? h("details", { class: "more-game" }, h("summary", {}, `More ${g.title} options`),
        h("div", { class: "grid" }, others.map((o) => field(o, "g", seats, g)))) : null);
  }

  async create(form) {
    const msg = readForm(form, loadedCatalogue());
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
      const canSit = joinable(t);
      const players = this.seated.text(t);
      return h("li", { class: `table-row status-${t.status}${canSit ? " joinable" : ""}`, "data-table": t.id, "data-game": t.game },
        h("div", { class: "row-main" },
          h("strong", {}, g.title),
          h("span", { class: "muted" }, ` · ${t.id}`),
          h("div", { class: "row-meta" },
            h("span", { class: `pill status-${t.status}` }, t.status),
            h("span", { class: "row-stakes", "data-stakes": "" }, stakesText(t)),
            h("span", { "data-free": t.seats - t.taken }, `${t.taken}/${t.seats} seated · ${freeText(t)}`),
            h("span", {}, `${t.spectators} watching`),
            seat && seat.role === "player" ? h("span", { class: "pill you" }, "your table") : null,
            this.conn.player && t.owner === this.conn.player ? h("span", { class: "pill host" }, "you host") : null,
            t.password ? h("span", { class: "pill", title: "players need the table's password" }, "password") : null),
          players ? h("div", { class: "row-players", "data-players": "" }, players) : null),
        h("div", { class: "row-actions" },
          seat && seat.role === "player"
            ? h("a", { class: "button primary", href: `#/t/${t.id}`, "data-go": "return" }, "Return")
            : canSit ? h("button", { type: "button", class: "primary", "data-go": "play", onclick: () => this.onCreated(t.id, "player") }, "Play") : null,
          h("a", { class: "button", href: `#/t/${t.id}/watch`, "data-go": "watch" }, "Watch"),
          howToPlay(t.game)));
    });
    mount(list,
      this.listError ? h("p", { class: "notice error" }, this.listError) : null,
      rows.length ? h("ul", { class: "table-list" }, rows) : h("p", { class: "muted" }, "No open tables yet: create one."));
  }
}
