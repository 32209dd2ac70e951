// The renderer of a game the page has no drawing for (the catalogue names no renderer module for it,
// or the module failed to load): everything as data. The table's centre shows the latest event of
// each type, newest first, and the view of the snapshot the page joined with, as key/value lists; a
// seat shows the fields of those that are seat-keyed maps ({"1": ..., "2": ...}); the log has every
// event as "type: key value, ...". Its actions panel is actions.js's genericPanel, driven by the
// legal actions' shape.

import { h } from "../dom.js";
import { cardEl, cardText } from "../cards.js";
import { nameOf } from "./common.js";
import { genericPanel } from "../actions.js";

/** Events kept for the centre (the latest of each type). */
const KEEP = 6;
/** View fields that say nothing a person needs here. */
const SKIP = new Set(["game", "viewer"]);

const isCard = (v) => typeof v === "string" && /^(?:[2-9TJQKA][cdhs]|X[rb])$/.test(v);
const isSeatMap = (v) => v && typeof v === "object" && !Array.isArray(v) && Object.keys(v).length > 0
  && Object.keys(v).every((k) => /^[1-9]$/.test(k));

/** A value as readable text: cards by name, lists by commas, maps as "k v · k v". */
export function valueText(v) {
  if (v === null || v === undefined) return "–";
  if (isCard(v)) return cardText(v);
  if (Array.isArray(v)) return v.length ? v.map(valueText).join(", ") : "none";
  if (typeof v === "object") return Object.entries(v).map(([k, x]) => `${k}: ${valueText(x)}`).join(" · ") || "none";
  return String(v);
}

/** A value as nodes: cards drawn, the rest as text. */
function valueEl(v) {
  if (isCard(v)) return cardEl(v);
  if (Array.isArray(v) && v.length && v.every(isCard)) return h("span", { class: "cards" }, v.map((c) => cardEl(c)));
  return valueText(v);
}

function kvList(obj, cls) {
  const rows = Object.entries(obj).filter(([k]) => !SKIP.has(k) && k !== "type");
  return h("dl", { class: `kv-list ${cls}` }, rows.map(([k, v]) => [h("dt", {}, k.replace(/_/g, " ")), h("dd", { "data-key": k }, valueEl(v))]));
}

function init() {
  return { view: null, latest: {}, order: [] };
}

function reduce(s, e) {
  s.latest[e.type] = e;
  s.order = [e.type, ...s.order.filter((t) => t !== e.type)].slice(0, KEEP);
  for (const t of Object.keys(s.latest)) if (!s.order.includes(t)) delete s.latest[t];
}

function fromView(v) {
  return { ...init(), view: v };
}

function seatView(s, seat) {
  const k = String(seat);
  const lines = [];
  const seen = new Set();
  for (const source of [...s.order.map((t) => s.latest[t]), s.view || {}]) {
    for (const [name, value] of Object.entries(source)) {
      if (seen.has(name) || !isSeatMap(value) || !(k in value)) continue;
      seen.add(name);
      lines.push(h("span", { class: "kv-line", "data-key": name }, `${name.replace(/_/g, " ")}: ${valueText(value[k])}`));
    }
  }
  return { badges: [], status: null, cards: null, bet: null, lines };
}

function center(s) {
  const events = s.order.map((t) => h("div", { class: "generic-event", "data-type": t }, h("h3", {}, t.replace(/_/g, " ")), kvList(s.latest[t], "event")));
  return h("div", { class: "center-info generic-view" },
    events.length ? h("div", { class: "generic-events" }, events) : null,
    s.view ? h("details", { class: "generic-state", open: events.length ? null : true },
      h("summary", {}, "State when you joined"), kvList(s.view, "state")) : null);
}

function describe(e, names) {
  const parts = Object.entries(e).filter(([k]) => k !== "type")
    .map(([k, v]) => `${k.replace(/_/g, " ")} ${k === "seat" ? nameOf(names, v) : valueText(v)}`);
  return parts.length ? `${e.type}: ${parts.join(", ")}` : e.type;
}

export default {
  unit: "",
  panel: (legal, state, send) => genericPanel(legal, send),
  firstEvent: null, // any game event starts the drawing (the table's match_started clears it)
  init, reduce, fromView, seatView, center, describe,
};
