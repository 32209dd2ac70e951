// Turn alerts: the tab's title and icon say when it is this viewer's turn and when its clock runs
// low, so a player in another tab notices; a short tone too when the sound switch is on (off by
// default, kept in localStorage). The tone is made with the Web Audio API: no audio file.
//
// For tests (and styles) the page shows its state on <body>: data-turn-alert ("", "turn", "low")
// and data-alert-sounds (how many tones were asked for since the page loaded).

const SOUND_KEY = "cardhall.sound";
/** Seconds of action clock under which the clock counts as low (or a third of the clock, if less). */
const LOW_SECONDS = 10;
const PREFIX = { turn: "● Your turn – ", low: "⏳ Time running out – " };
const ICON_COLOUR = { turn: "#5fd0a0", low: "#e5484d" };

let baseTitle = document.title;
let baseIcon = null; // the page's own icon href, read on the first alert
let shown = "";
let audio = null;

/** Is the sound switch on? */
export function soundOn() {
  return localStorage.getItem(SOUND_KEY) === "on";
}

/** Turn the sound on or off (kept across reloads); called from a click, so audio may start. */
export function setSound(on) {
  localStorage.setItem(SOUND_KEY, on ? "on" : "off");
  if (on) context();
}

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
  if (kind && soundOn()) tone(kind === "low" ? 660 : 880);
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

function context() {
  const Ctx = window.AudioContext || window.webkitAudioContext;
  if (!Ctx) return null;
  if (!audio) audio = new Ctx();
  if (audio.state === "suspended") audio.resume().catch(() => {});
  return audio;
}

/** A short, soft beep of `hz` hertz (0.18 s). */
function tone(hz) {
  document.body.dataset.alertSounds = String(Number(document.body.dataset.alertSounds || 0) + 1);
  try {
    const ctx = context();
    if (!ctx) return;
    const osc = ctx.createOscillator();
    const gain = ctx.createGain();
    osc.frequency.value = hz;
    gain.gain.setValueAtTime(0.0001, ctx.currentTime);
    gain.gain.exponentialRampToValueAtTime(0.15, ctx.currentTime + 0.02);
    gain.gain.exponentialRampToValueAtTime(0.0001, ctx.currentTime + 0.18);
    osc.connect(gain).connect(ctx.destination);
    osc.start();
    osc.stop(ctx.currentTime + 0.2);
  } catch { /* no audio here: the title and icon still say it */ }
}
