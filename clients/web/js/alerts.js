// Turn alerts: the tab's title and icon say when it is this viewer's turn and when its clock runs
// low, so a player in another tab notices; a short tone too when the sound switch is on (off by
// default, kept in localStorage). The switch and the tones are sounds.js's (Web Audio API, no
// audio file); this module re-exports the switch for the page (app.js).
//
// For tests (and styles) the page shows its state on <body>: data-turn-alert ("", "turn", "low")
// and data-alert-sounds (how many tones were asked for since the page loaded).

import { playSound, setSound, soundOn } from "./sounds.js";

export { setSound, soundOn };

/** Seconds of action clock under which the clock counts as low (or a third of the clock, if less). */
const LOW_SECONDS = 10;
const PREFIX = { turn: "● Your turn – ", low: "⏳ Time running out – " };
const ICON_COLOUR = { turn: "#5fd0a0", low: "#e5484d" };

let baseTitle = document.title;
let baseIcon = null; // the page's own icon href, read on the first alert
let shown = "";

/** The page's title when no alert shows (app.js sets it per view); an alert shown keeps its prefix. */
export function setBaseTitle(text) {
  baseTitle = text;
  document.title = (PREFIX[shown] || "") + baseTitle;
}

/**
 * What the alert should be for `model` (table.js's model) with `left` (Table.clockLeft(): seconds
 * of clock and bank left, or null): "turn" when this viewer is to act (not a Continue), "low" when
 * its action clock is under 10 s (or a third of the clock, if less) or it lives on its time bank, else "".
 */
export function alertFor(model, left) {
  const t = model && model.turn;
  if (!t || model.you == null || t.seat !== model.you || t.continue || !model.legal || !model.legal.length) return "";
  if (model.info && (model.info.paused || model.info.status === "paused")) return "";
  if (left && left.total && (left.clock < Math.min(LOW_SECONDS, left.total / 3))) return "low";
  return "turn";
}

/** Show `kind` ("", "turn", "low"): title, favicon, and a tone when it begins (sound on). */
export function showAlert(kind) {
  if (kind === shown) return;
  const link = iconLink();
  if (baseIcon === null) baseIcon = link.getAttribute("href") || "data:,";
  shown = kind;
  document.title = (PREFIX[kind] || "") + baseTitle;
  link.setAttribute("href", kind ? icon(ICON_COLOUR[kind]) : baseIcon);
  document.body.dataset.turnAlert = kind;
  if (kind && soundOn()) tone(kind);
}

function iconLink() {
  let link = document.querySelector("link[rel~=icon]");
  if (!link) {
    link = document.createElement("link");
    link.rel = "icon";
    document.head.append(link);
  }
  return link;
}

/** A round icon of `colour` with a white dot, as an SVG data: URL. */
function icon(colour) {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><circle cx="8" cy="8" r="7.5" fill="${colour}"/><circle cx="8" cy="8" r="3" fill="#fff"/></svg>`;
  return `data:image/svg+xml,${encodeURIComponent(svg)}`;
}

/** Ask for the tone of alert `kind` ("turn" or "low"), counted on <body> (data-alert-sounds). */
function tone(kind) {
  document.body.dataset.alertSounds = String(Number(document.body.dataset.alertSounds || 0) + 1);
  playSound(kind);
}
