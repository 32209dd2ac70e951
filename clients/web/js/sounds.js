// Sounds at a table: short tones made with the Web Audio API (no audio file), one for each of
// "turn" (this viewer is to act: two rising notes), "bet" (somebody bets or raises: two quick chip
// clicks), "win" (this viewer won an amount or the match: three notes up) and "low" (this viewer's
// clock runs low: one plain beep).
//
// They play only while the page's sound switch is on (off by default, kept in localStorage; the
// switch is the page's, app.js) and only once the person has clicked or pressed a key on the page:
// browsers refuse audio before that, so the AudioContext is made then and not before.
//
// For tests: with localStorage "cardhallSoundLog" set (any value), window.__cardhallSounds lists the
// names of the sounds started, in order; nothing else changes.

const SOUND_KEY = "cardhall.sound";
const LOG_KEY = "cardhallSoundLog";
/** Each sound's notes: [frequency (Hz), start (s after the sound begins), length (s), wave, peak gain]. */
const NOTES = {
  turn: [[660, 0, 0.09, "sine", 0.15], [990, 0.1, 0.14, "sine", 0.15]],
  bet: [[1320, 0, 0.035, "triangle", 0.12], [1050, 0.055, 0.045, "triangle", 0.12]],
  win: [[523, 0, 0.09, "sine", 0.14], [659, 0.09, 0.09, "sine", 0.14], [784, 0.18, 0.22, "sine", 0.16]],
  low: [[660, 0, 0.18, "sine", 0.15]],
};
/** Milliseconds within which a sound is not started again (a hand's last award and the match's end come together). */
const AGAIN_MS = 600;

let audio = null;
let gestured = false;
const lastPlayed = {};

/** Is the sound switch on? */
export function soundOn() {
  return localStorage.getItem(SOUND_KEY) === "on";
}

/** Turn the sound on or off (kept across reloads); called from a click, so audio may start. */
export function setSound(on) {
  localStorage.setItem(SOUND_KEY, on ? "on" : "off");
  if (on) {
    gestured = true;
    context();
  }
}

/**
 * Start sound `name` ("turn", "bet", "win" or "low"; see NOTES): true when it started, false when the
 * switch is off, the person has not clicked or pressed a key on the page yet, the same sound started
 * less than 600 ms ago, or the browser has no Web Audio. Never throws.
 */
export function playSound(name) {
  const notes = NOTES[name];
  if (!notes || !soundOn() || !activated()) return false;
  const now = performance.now();
  if (now - (lastPlayed[name] ?? -Infinity) < AGAIN_MS) return false;
  try {
    const ctx = context();
    if (!ctx) return false;
    const start = ctx.currentTime + 0.01;
    for (const [hz, at, length, wave, peak] of notes) note(ctx, hz, start + at, length, wave, peak);
  } catch {
    return false; // no audio here: the page works on without it
  }
  lastPlayed[name] = now;
  record(name);
  return true;
}

/** Has the person clicked or pressed a key on this page (the browsers' condition for audio)? */
function activated() {
  return gestured || !!(navigator.userActivation && navigator.userActivation.hasBeenActive);
}

function onGesture() {
  gestured = true;
  removeEventListener("pointerdown", onGesture, true);
  removeEventListener("keydown", onGesture, true);
  if (soundOn()) context();
}
addEventListener("pointerdown", onGesture, true);
addEventListener("keydown", onGesture, true);

/** The page's one AudioContext, made on first use (after a gesture) and resumed if suspended; null without Web Audio. */
function context() {
  const Ctx = window.AudioContext || window.webkitAudioContext;
  if (!Ctx) return null;
  try {
    if (!audio) audio = new Ctx();
    if (audio.state === "suspended") audio.resume().catch(() => {});
  } catch {
    return null;
  }
  return audio;
}

/** One note: `wave` at `hz` from `at` (the context's seconds) for `length` s, a soft attack and decay to silence. */
function note(ctx, hz, at, length, wave, peak) {
  const osc = ctx.createOscillator();
  const gain = ctx.createGain();
  osc.type = wave;
  osc.frequency.value = hz;
  gain.gain.setValueAtTime(0.0001, at);
  gain.gain.exponentialRampToValueAtTime(peak, at + Math.min(0.015, length / 3));
  gain.gain.exponentialRampToValueAtTime(0.0001, at + length);
  osc.connect(gain).connect(ctx.destination);
  osc.start(at);
  osc.stop(at + length + 0.02);
}

/** Note `name` in window.__cardhallSounds when a test asked for the log (localStorage "cardhallSoundLog"). */
function record(name) {
  let wanted = false;
  try {
    wanted = !!localStorage.getItem(LOG_KEY);
  } catch { /* no storage: no log */ }
  if (!wanted) return;
  if (!Array.isArray(window.__cardhallSounds)) window.__cardhallSounds = [];
  window.__cardhallSounds.push(name);
}
