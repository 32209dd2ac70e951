// The page: one websocket, the lobby (#/) and the tables (#/t/<id>, #/t/<id>/watch, and an invite
// link's #table=<id>&invite=<secret>). Sent here by
// its operator's site with `#auth=<JWT>`, it signs in with that (signin.js); a server that refuses
// who is asking gets a page saying so instead of the lobby and the tables.

import { Connection } from "./conn.js";
import { SignInNeeded, fragmentHasAuth, takeAuthFragment } from "./signin.js";
import { NameField } from "./namefield.js";
import { Lobby } from "./lobby.js";
import { Table } from "./table.js";
import { gameInfo, loadGames } from "./games/index.js";
import { h, mount } from "./dom.js";
import { setBaseTitle, setSound, showAlert, soundOn } from "./alerts.js";
import { fourColour, setFourColour } from "./cards.js";

const auth = takeAuthFragment(); // first of all: the JWT leaves the address bar before anything else runs
const main = document.getElementById("main");
const statusEl = document.getElementById("conn-status");
const crumbs = document.getElementById("crumbs");

const wsUrl = `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}/ws`;
const conn = new Connection(wsUrl, auth);
const tables = new Map(); // table id -> Table (kept while joined, also when another view is shown)
let view = null;

conn.addEventListener("status", (ev) => {
  const text = { connecting: "connecting…", online: "online", reconnecting: "reconnecting…", refused: "not signed in" }[ev.detail];
  statusEl.textContent = text;
  statusEl.dataset.state = ev.detail;
});
// the name field renames this player in place: the same token, the same seats (namefield.js)
new NameField(conn, document.getElementById("player-name"), document.getElementById("name-status"));

// the page's switches (index.html): the turn sound (alerts.js) and the four-colour deck (cards.js)
const soundSwitch = document.getElementById("pref-sound");
const fourSwitch = document.getElementById("pref-four-colour");
soundSwitch.checked = soundOn();
soundSwitch.addEventListener("change", () => setSound(soundSwitch.checked));
// on a phone the switches and the name field fold behind the top bar's Settings button (style.css)
const more = document.getElementById("topbar-more");
more.addEventListener("click", () => {
  const open = more.closest(".topbar").classList.toggle("open");
  more.setAttribute("aria-expanded", String(open));
});
fourSwitch.checked = fourColour();
setFourColour(fourSwitch.checked);
fourSwitch.addEventListener("change", () => setFourColour(fourSwitch.checked));

/** The breadcrumb and title of a table of `game` (its name; null: not known yet). */
function tableCrumbs(game) {
  const g = game ? gameInfo(game).title : "Table";
  mount(crumbs, h("a", { href: "#/" }, "Lobby"), " › ", h("span", { "aria-current": "page" }, g));
  setBaseTitle(`${g} · cardhall`);
}

// a table opened before its first snapshot shows "Table" until the snapshot names the game
conn.addEventListener("frame", (ev) => {
  const f = ev.detail;
  if (f.type === "snapshot" && view instanceof Table && f.table === view.id && f.info) tableCrumbs(f.info.game);
});

function tableFor(id) {
  let t = tables.get(id);
  if (!t) {
    t = new Table(conn, id);
    tables.set(id, t);
  }
  return t;
}

/** From the lobby: go to table `id` as a player (sit down) or spectator. */
function openTable(id, role) {
  const t = tableFor(id);
  if (role === "player" && t.role !== "player") {
    t.role = "player";
    if (t.model) t.sit();
  }
  location.hash = `#/t/${id}`;
}

/** The table and invite of an invite link's fragment `#table=<id>&invite=<secret>` (SPEC "Private
 * tables"), else null. */
function invitation(hash) {
  if (!hash.startsWith("#table=")) return null;
  const q = new URLSearchParams(hash.slice(1));
  const table = q.get("table");
  const invite = q.get("invite");
  return table && /^[\w-]+$/.test(table) && invite ? { table, invite } : null;
}

function show(next) {
  if (view && view !== next) view.detach();
  view = next;
  view.attach(main);
}

function route() {
  if (conn.refusal) {
    show(new SignInNeeded(conn.refusal));
    mount(crumbs, h("span", { "aria-current": "page" }, "Sign in"));
    showAlert("");
    setBaseTitle("Sign in · cardhall");
    return;
  }
  const invited = invitation(location.hash);
  if (invited) { // an invite link: join with its invite, as a player; the address becomes the table's
    const t = tableFor(invited.table);
    t.invite = invited.invite;
    t.role = "player";
    history.replaceState(null, "", `#/t/${invited.table}`);
  }
  const hash = location.hash || "#/";
  const m = hash.match(/^#\/t\/([\w-]+)(\/watch)?$/);
  if (m) {
    const t = tableFor(m[1]);
    if (m[2] && t.role !== "player") t.role = "spectator";
    // a table with a saved model (a reload, a return from the lobby) is joined again: nothing is sent for
    // it until that join passes (Table.blocked)
    if (!t.joined && !t.joining) { if (t.model) t.retry(); else t.join(); }
    show(t);
    tableCrumbs(t.model && t.model.info.game);
  } else {
    // spectators stop receiving a table they no longer look at; players keep their seats
    for (const [id, t] of tables) {
      if (t.role !== "player") { t.leave(); tables.delete(id); }
    }
    show(new Lobby(conn, openTable));
    mount(crumbs, h("span", { "aria-current": "page" }, "Lobby"));
    showAlert(""); // the lobby shows no table's turn
    setBaseTitle("cardhall");
  }
  main.focus({ preventScroll: true });
}

// Keyboard: F fold, C check/call, R bet/raise (the amount in the field; Enter in the field too), A all-in,
// S snowfall, P play, Space/Enter continue.
document.addEventListener("keydown", (ev) => {
  if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const target = ev.target;
  const typing = target instanceof HTMLInputElement || target instanceof HTMLSelectElement || target instanceof HTMLTextAreaElement;
  const panel = document.querySelector(".action-panel");
  if (!panel) return;
  let key = ev.key.toLowerCase();
  if (key === " " || key === "enter") {
    if (typing) return; // Enter in a field is the field's (the amount, the chat, the name)
    const cont = panel.querySelector('[data-action="continue"]');
    if (cont && !(target instanceof HTMLButtonElement)) { ev.preventDefault(); cont.click(); }
    return;
  }
  if (typing || !/^[a-z0-9]$/.test(key)) return;
  const button = panel.querySelector(`button[aria-keyshortcuts~="${key.toUpperCase()}"]`); // a button may have several keys
  if (button) { ev.preventDefault(); button.click(); }
});

// a sign-in link followed while the page is open: load it afresh (takeAuthFragment, a new hello)
addEventListener("hashchange", () => (fragmentHasAuth() ? location.reload() : route()));
conn.addEventListener("refused", route);
conn.start();
loadGames().catch(() => {}).finally(route); // game titles, renderers and the lobby's form (the lobby retries a failure)
