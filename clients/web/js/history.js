// The hand replayer: every hand of a table, step by step (an action or a card dealt each), forward
// and back, with the cards as they were shown at that step.
//
// Two sources, never mixed:
// * during a match, the hands already played as this page saw them: the page's own recorded
//   events (table.js keeps them in model.record for the G-2 check) replayed through the game's
//   renderer (games/*.js init/reduce/center/seatView), so nothing appears that this viewer was not
//   sent (no opponent's hole cards unless shown);
// * otherwise, the finished matches' histories from GET /api/tables/{id}/hands (every card, G-2),
//   read by hands.js; a game whose history is PHH (its module's `history.phh`) offers that text
//   to download beside it.
// The replayer is a <dialog> of its own beside the table (the table redraws its root often). While
// it is open it follows the table: the live match's hands grow with each event the page receives,
// and the finished matches' are read again when a match ends.

import { h, mount, plural } from "./dom.js";
import { backEl, cardEl, cardsEl } from "./cards.js";
import { gameInfo, loadGames } from "./games/index.js";
import { boardEl, nameOf } from "./games/common.js";
import { parseHands } from "./hands.js";

/** Table event types (SPEC "Games"): not a game's own, left out of a replay. */
const TABLE_EVENTS = new Set(["seated", "left", "presence", "match_started", "match_ended", "rematch", "timeout",
  "sat_out", "sat_in", "paused", "resumed", "awaiting", "closed", "broken"]);

const handsUrl = (id) => `/api/tables/${encodeURIComponent(id)}/hands`;
/** The headers the hands of `table` need: its invite when this page knows it (an unlisted table's
 * hands answer only with it, SPEC "Private tables", "HTTP"). */
const handsHeaders = (table) => {
  const invite = table.model.info.invite || table.invite;
  return invite ? { "X-Table-Invite": invite } : {};
};

/** The "Download PHH" link of `table`. A link cannot carry a header: with an invite the click
 * fetches the hands with it and saves what came. */
function downloadEl(table) {
  const name = `cardhall-${table.id}.phhs`;
  const headers = handsHeaders(table);
  const save = async (ev) => {
    ev.preventDefault();
    const r = await fetch(handsUrl(table.id), { cache: "no-store", headers });
    if (!r.ok) return;
    const url = URL.createObjectURL(await r.blob());
    const a = h("a", { href: url, download: name, hidden: true });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60_000); // the download reads the blob after the click
  };
  return h("a", { class: "phh-download", href: handsUrl(table.id), download: name,
    onclick: Object.keys(headers).length ? save : undefined }, "Download PHH");
}
/** Whether `game`'s hands are PHH text, offered to download (its module's `history.phh`). */
const isPHH = (game) => Boolean((gameInfo(game).module.history || {}).phh);
const isLive = (m) => m.info.status === "running" || m.info.status === "paused";
/** A finished match exists, so the server serves hands (SPEC "HTTP": finished matches only). */
const hasFinished = (m) => Boolean(m.ended) || m.info.match > 1 || m.info.status === "finished" || m.info.status === "closed";

/** The side panel's "Hand history" box for `table` (table.js's Table): the replayer's button and,
 * for a game whose history is PHH once a match has finished, the PHH download. */
export function historyPanel(table) {
  const m = table.model;
  const live = isLive(m) && Boolean(m.record);
  const finished = hasFinished(m);
  return h("section", { class: "history", "aria-label": "Hand history" },
    h("h2", {}, "Hand history"),
    h("div", { class: "history-actions" },
      h("button", { type: "button", class: "ctl", "data-control": "replay", "data-local": true, disabled: !live && !finished,
        onclick: () => openReplayer(table) }, live ? "Replay this match's hands" : "Replay the hands"),
      finished && isPHH(m.info.game) ? downloadEl(table) : null),
    h("p", { class: "hint" }, live ? "The hands so far, as you saw them."
      : finished ? "Every hand of the finished matches, all cards shown." : "The hands appear here once played."));
}

/** Open the replayer for `table` (closing any other): the live match's hands as this page saw
 * them, else the finished matches' from the server. Resolves once it shows. */
export async function openReplayer(table) {
  for (const old of document.querySelectorAll("dialog.replayer")) old.close();
  const m = table.model;
  const live = isLive(m) && Boolean(m.record);
  const dlg = h("dialog", { class: "replayer", "aria-label": "Hand replayer", "data-source": live ? "live" : "server" });
  const close = () => dlg.open && dlg.close();
  dlg.addEventListener("close", () => { dlg.remove(); removeEventListener("hashchange", close); });
  addEventListener("hashchange", close);
  document.body.append(dlg);
  mount(dlg, h("p", { class: "notice" }, "Loading the hands…"));
  dlg.show(); // not modal: the table stays playable beside it
  const source = live ? new LiveHands(table) : null;
  let hands;
  try {
    hands = live ? source.hands() : await serverHands(table);
  } catch (err) {
    mount(dlg, header(live, close), h("p", { class: "notice error", role: "alert" }, `The hands could not be read: ${err.message}`));
    return;
  }
  if (!dlg.isConnected) return; // closed while the hands were read
  const replayer = new Replayer(dlg, hands, { live, close, download: !live && isPHH(m.info.game) ? () => downloadEl(table) : null });
  follow(table, dlg, source ? () => (source.update() ? source.hands() : null) : () => serverHands(table), replayer);
}

/**
 * Keep the open replayer `dlg` in step with `table`: after each of the table's frames (once the
 * table has taken it: its listener was added first, and this one waits a microtask more), the live
 * source's hands (`next` gives them, or null when nothing changed); a server source is read again
 * when a match ends, the moment the server serves more hands (SPEC "HTTP": finished matches only).
 * Stops when the dialog closes.
 */
function follow(table, dlg, next, replayer) {
  let reading = null;
  const refresh = async () => {
    try {
      const hands = await next();
      if (hands && dlg.isConnected) replayer.update(hands);
    } catch { /* the next change tries again */ }
  };
  const onFrame = (ev) => {
    const f = ev.detail;
    if (f.table !== table.id || !dlg.isConnected) return;
    if (!replayer.opts.live && !(f.type === "event" && f.event.type === "match_ended")) return;
    queueMicrotask(() => {
      reading = (reading || Promise.resolve()).then(refresh); // one reading at a time, in order
    });
  };
  table.conn.addEventListener("frame", onFrame);
  dlg.addEventListener("close", () => table.conn.removeEventListener("frame", onFrame));
}

async function serverHands(table) {
  const r = await fetch(handsUrl(table.id), { cache: "no-store", headers: handsHeaders(table) });
  if (r.status === 404) return [];
  if (!r.ok) throw new Error(`HTTP ${r.status}`);
  await loadGames(); // the game's module makes its hands
  return parseHands(await r.text(), table.model.info.game, table.playedNames()).map((hd) => ({
    label: hd.label, steps: hd.steps.map((s) => ({ text: s.text, draw: () => sceneEl(s.scene) })),
  }));
}

/**
 * The hands of the match being played, from this page's own events (model.record): one hand per
 * `hand_start` (a game without hands: the match so far as one), each step an event the game's
 * renderer describes, drawn from the state after it. The hand under way is the last one.
 * `update()` reads the events recorded since it last read (a new record, the next match's or one
 * from a fresh snapshot: it starts again from that record) and says whether any came.
 */
export class LiveHands {
  constructor(table) {
    this.table = table;
    this._start(table.model.record);
    this.update();
  }

  _start(rec) {
    const m = this.table.model;
    this.rec = rec;
    this.read = 0; // events of rec.events taken so far
    this.game = gameInfo(m.info.game).module;
    this.ctx = { you: m.you, names: this.table.playedNames() }; // read when a step is drawn: renames show
    this.state = rec.snapshot ? this.game.fromView(rec.snapshot) : null;
    this.list = [];
    // joined during a match: its events until the next hand_start belong to the hand joined in
    this.cur = rec.snapshot ? { label: "Since you joined", steps: [] } : null;
    if (this.cur) this.list.push(this.cur);
    this.prelude = []; // the match's first events, before its first hand: shown with hand 1
  }

  /** Take the events recorded since the last call; true when there were any (or a new record). */
  update() {
    const m = this.table.model;
    const rec = m && m.record;
    let changed = false;
    if (rec && rec !== this.rec) {
      this._start(rec);
      changed = true;
    }
    if (m) Object.assign(this.ctx, { you: m.you, names: this.table.playedNames() });
    const events = this.rec.events;
    const before = this.read;
    for (; this.read < events.length; this.read++) this._take(events[this.read]);
    return changed || this.read !== before;
  }

  _take(e) {
    const { game } = this;
    if (TABLE_EVENTS.has(e.type)) return;
    if (e.type === game.firstEvent || (!this.state && !game.firstEvent)) this.state = game.init(e);
    if (!this.state) return;
    game.reduce(this.state, e, this.ctx.you);
    if (e.type === "hand_start") {
      this.cur = { label: `Hand ${e.hand}`, steps: this.prelude };
      this.prelude = [];
      this.list.push(this.cur);
    }
    const text = game.describe(e, this.ctx.names);
    if (!text) return;
    const after = structuredClone(this.state);
    (this.cur ? this.cur.steps : this.prelude).push({ text, draw: () => liveSceneEl(game, after, this._seats(), this.ctx) });
  }

  /** The seats drawn: the taken ones (every seat at a table nobody sits at any more). */
  _seats() {
    const m = this.table.model;
    const names = this.ctx.names;
    const seats = Array.from({ length: m.info.seats }, (_, i) => i + 1);
    return Object.keys(names).length ? seats.filter((s) => names[s]) : seats;
  }

  /** The hands so far, each with at least one step. */
  hands() {
    const out = this.list.filter((hd) => hd.steps.length);
    if (this.prelude.length) out.push({ label: "The match so far", steps: this.prelude });
    return out;
  }
}

class Replayer {
  constructor(dlg, hands, opts) {
    this.dlg = dlg;
    this.hands = hands;
    this.opts = opts;
    this.hand = Math.max(0, hands.length - 1);
    this.step = 0;
    this.shown = null; // what the last render drew: hands, the hand's label and steps (see update)
    this.shownHand = null; // the hand the last render drew: its label and steps (`_hand`)
    dlg.addEventListener("keydown", (ev) => {
      // the replayer's keys stay here (the table's F/C/R... must not act on them)
      ev.stopPropagation();
      if (ev.key === "Escape") opts.close();
      else if (ev.key === "ArrowRight") this.go(this.step + 1);
      else if (ev.key === "ArrowLeft") this.go(this.step - 1);
      else return;
      ev.preventDefault();
    });
    this.render();
  }

  /** New `hands` from the source: the same hand and step stay shown; redrawn only when what is
   * seen changes (the list of hands, or the shown hand's steps), so a hand being read is left alone. */
  update(hands) {
    this.hands = hands;
    this.hand = Math.max(0, Math.min(this.hand, hands.length - 1));
    const steps = hands[this.hand] ? hands[this.hand].steps.length : 0;
    this.step = Math.max(0, Math.min(this.step, steps - 1));
    const seen = this._seen();
    if (seen === this.shown) return;
    const nav = this.dlg.querySelector(".replay-nav");
    if (nav && this.shown && this._hand() === this.shownHand) {
      this._updateNav(nav); // only the list of hands grew: the hand being read is left as it is
      this.shown = seen;
    } else {
      this.render(true);
    }
  }

  /** What a drawing shows: "hands|the shown hand" ("" without hands). */
  _seen() {
    return this.hands[this.hand] ? `${this.hands.length}|${this._hand()}` : "";
  }

  /** The shown hand as drawn: "its label|its steps" ("" without hands). */
  _hand() {
    const hd = this.hands[this.hand];
    return hd ? `${hd.label}|${hd.steps.length}` : "";
  }

  go(step, hand = this.hand) {
    this.hand = Math.max(0, Math.min(hand, this.hands.length - 1));
    const steps = this.hands[this.hand] ? this.hands[this.hand].steps.length : 0;
    this.step = Math.max(0, Math.min(step, steps - 1));
    this.render();
  }

  /** The row of hands: previous, the list, next, the count, the download. */
  _nav() {
    const { hands, opts } = this;
    return h("div", { class: "replay-nav" },
      h("button", { type: "button", class: "ctl", "data-hand": "prev", disabled: this.hand === 0, onclick: () => this.go(0, this.hand - 1) }, "‹ Hand"),
      h("select", { class: "hand-pick", "data-hand": "pick", "aria-label": "Hand", onchange: (ev) => this.go(0, Number(ev.target.value)) },
        hands.map((x, i) => h("option", { value: i, selected: i === this.hand }, x.label))),
      h("button", { type: "button", class: "ctl", "data-hand": "next", disabled: this.hand === hands.length - 1, onclick: () => this.go(0, this.hand + 1) }, "Hand ›"),
      h("span", { class: "replay-count" }, plural(hands.length, "hand")),
      opts.download ? opts.download() : null);
  }

  /** Bring the row of hands `nav` (drawn by `_nav`) up to date in place: new hands appended to the
   * list, labels, the selection, next's state and the count. */
  _updateNav(nav) {
    const { hands } = this;
    const pick = nav.querySelector(".hand-pick");
    hands.forEach((x, i) => {
      const option = pick.options[i] || pick.appendChild(h("option", { value: i }, x.label));
      if (option.textContent !== x.label) option.textContent = x.label;
    });
    while (pick.options.length > hands.length) pick.lastElementChild.remove();
    if (pick.value !== String(this.hand)) pick.value = String(this.hand);
    nav.querySelector("[data-hand=prev]").disabled = this.hand === 0;
    nav.querySelector("[data-hand=next]").disabled = this.hand === hands.length - 1;
    nav.querySelector(".replay-count").textContent = plural(hands.length, "hand");
  }

  /** Draw the replayer; `quiet` (a redraw for new hands or steps, not the reader's move): the list
   * of steps keeps its scroll instead of bringing the current step into view, and the row of hands
   * stays in place. */
  render(quiet = false) {
    const { dlg, hands, opts } = this;
    const oldList = dlg.querySelector(".replay-steps");
    const listTop = oldList ? oldList.scrollTop : 0;
    this.shown = this._seen();
    this.shownHand = this._hand();
    const focused = document.activeElement && dlg.contains(document.activeElement) ? document.activeElement : null;
    const focusedStep = focused ? focused.dataset.step : null;
    const focusedHand = focused ? focused.dataset.hand : null;
    if (!hands.length) {
      mount(dlg, header(opts.live, opts.close), h("p", { class: "notice" }, opts.live ? "No hand has been played yet." : "No finished hand yet."));
      return;
    }
    const hd = hands[this.hand];
    const step = hd.steps[this.step];
    const last = hd.steps.length - 1;
    const btn = (label, data, target, disabled, aria) => h("button", { type: "button", class: "ctl", "data-step": data, disabled,
      "aria-label": aria, onclick: () => this.go(target) }, label);
    const stage = [
      h("div", { class: "replay-stage", "data-hand-index": this.hand, "data-step-index": this.step }, step.draw()),
      h("div", { class: "replay-controls", role: "group", "aria-label": "Step through the hand" },
        btn("« First", "first", 0, this.step === 0, "First step"),
        btn("◀ Back", "back", this.step - 1, this.step === 0, "Back one step"),
        h("span", { class: "replay-pos", "aria-live": "polite" }, `Step ${this.step + 1} of ${hd.steps.length}`),
        btn("Forward ▶", "forward", this.step + 1, this.step === last, "Forward one step"),
        btn("Last »", "last", last, this.step === last, "Last step")),
      h("p", { class: "replay-text", role: "status" }, step.text),
      h("ol", { class: "replay-steps" }, hd.steps.map((s, i) => h("li", { "aria-current": i === this.step ? "step" : null },
        h("button", { type: "button", class: "step-link", onclick: () => this.go(i) }, s.text))))];
    // a redraw for new hands or steps keeps the row of hands in place, brought up to date (a list a
    // reader has open stays open while the live table plays on); everything under it is drawn again
    const nav = quiet ? dlg.querySelector(".replay-nav") : null;
    if (nav) {
      this._updateNav(nav);
      while (nav.nextSibling) nav.nextSibling.remove();
      nav.after(...stage);
    } else {
      mount(dlg, header(opts.live, opts.close), this._nav(), stage);
    }
    const current = dlg.querySelector(".replay-steps [aria-current] button");
    const list = dlg.querySelector(".replay-steps");
    if (quiet && list) list.scrollTop = listTop;
    else if (current) current.scrollIntoView({ block: "nearest" });
    // keep the focus on the control used (it was redrawn), or on Forward once the start/end disables it
    const again = focusedStep ? dlg.querySelector(`[data-step="${focusedStep}"]:not([disabled])`) || dlg.querySelector("[data-step]:not([disabled])")
      : focusedHand ? dlg.querySelector(`[data-hand="${focusedHand}"]:not([disabled])`) || dlg.querySelector(".hand-pick") : null;
    if (again) again.focus({ preventScroll: quiet });
  }
}

function header(live, close) {
  return h("div", { class: "replay-head" },
    h("h2", {}, "Hand history"),
    h("span", { class: "replay-source" }, live ? "this match, as you saw it" : "finished matches, every card"),
    h("button", { type: "button", class: "close", "aria-label": "Close the replayer", onclick: close }, "×"));
}

/** A step of a finished hand (hands.js's scene): the board or pile, a note, each seat's cards. */
function sceneEl(scene) {
  return h("div", { class: "replay-felt" },
    scene.board ? boardEl(scene.board) : null,
    scene.pile ? h("div", { class: "replay-pile" }, `${scene.pile.label}: `, scene.pile.cards.length ? cardsEl(scene.pile.cards, "small") : "none") : null,
    scene.note ? h("div", { class: "replay-note" }, scene.note) : null,
    h("ul", { class: "replay-seats" }, scene.seats.map((s) => h("li", { class: `replay-seat${s.status ? ` st-${s.status}` : ""}`, "data-seat": s.seat },
      h("span", { class: "seat-name", title: s.name }, s.name),
      s.cards ? h("span", { class: "cards" }, s.cards.map((c) => (c === "??" ? backEl("small") : cardEl(c, "small")))) : null,
      s.stack ? h("span", { class: "stack" }, s.stack) : null,
      s.bet ? h("span", { class: "replay-bet" }, `bet ${s.bet}`) : null,
      s.status ? h("span", { class: "seat-status" }, s.status) : null,
      s.shows ? h("span", { class: "hand-name" }, s.shows) : null))));
}

/** A step of a live hand: the game's own centre and seat drawings of the state after it. */
function liveSceneEl(game, state, seats, ctx) {
  return h("div", { class: "replay-felt live" },
    h("div", { class: "replay-center" }, game.center(state, ctx)),
    h("ul", { class: "replay-seats" }, seats.map((seat) => {
      const v = game.seatView(state, seat, ctx);
      return h("li", { class: `replay-seat${v.status ? ` st-${v.status.replace(/\s/g, "-")}` : ""}`, "data-seat": seat },
        h("span", { class: "seat-name", title: nameOf(ctx.names, seat) }, nameOf(ctx.names, seat), seat === ctx.you ? " (you)" : ""),
        v.cards, v.lines, v.bet ? h("span", { class: "replay-bet" }, `bet ${v.bet}`) : null,
        v.status ? h("span", { class: "seat-status" }, v.status) : null);
    })),
    game.myArea ? game.myArea(state, ctx) : null);
}
