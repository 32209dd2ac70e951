// The action panel: buttons from the turn's `legal` list (with amount inputs), the solo player's
// Continue, and Avalanche's rank-and-count play. `send(action)` posts an `act`.

import { h } from "./dom.js";
import { rankLabel, rankValue } from "./cards.js";
import { fmt } from "./games/common.js";
import { outcome } from "./games/avalanche.js";

const KEYS = { fold: "f", check: "c", call: "c", bet: "r", raise: "r", all_in: "a", snowfall: "s", play: "p" };

function button(label, action, send, opts = {}) {
  const k = opts.key || KEYS[action.type];
  return h("button", {
    class: `act act-${opts.kind || action.type}`, type: "button", "data-action": opts.kind || action.type,
    "aria-keyshortcuts": k ? k.toUpperCase() : null, title: k ? `${label} (key ${k.toUpperCase()})` : label,
    onclick: () => send(typeof action === "function" ? action() : action),
  }, label, k ? h("kbd", { "aria-hidden": "true" }, k.toUpperCase()) : null);
}

/** A raise-to (or bet) amount: slider and number kept together, clamped to [min, max]. */
function amountInput(legal, unit, onChange) {
  const id = `amount-${legal.type}`;
  const range = h("input", { type: "range", min: legal.min, max: legal.max, step: 1, value: legal.min, "aria-label": `${legal.type === "bet" ? "Bet" : "Raise to"} amount (${unit})` });
  const number = h("input", { type: "number", id, min: legal.min, max: legal.max, step: 1, value: legal.min, inputmode: "numeric", "aria-label": `${legal.type === "bet" ? "Bet" : "Raise to"} (${legal.min} to ${legal.max} ${unit})` });
  const clamp = (v) => Math.max(legal.min, Math.min(legal.max, Math.round(Number(v) || legal.min)));
  range.addEventListener("input", () => { number.value = range.value; onChange(clamp(range.value)); });
  number.addEventListener("input", () => { if (number.value !== "") { range.value = clamp(number.value); onChange(clamp(number.value)); } });
  number.addEventListener("change", () => { number.value = clamp(number.value); range.value = number.value; onChange(clamp(number.value)); });
  return { el: h("span", { class: "amount" }, range, number, h("span", { class: "range-hint" }, `${fmt(legal.min)}–${fmt(legal.max)}`)), value: () => clamp(number.value) };
}

/** Hold'em and Alamo: fold, check, call, bet/raise with an amount, all-in. */
export function bettingPanel(legal, unit, send) {
  const out = [];
  for (const a of legal) {
    if (a.type === "fold") out.push(button("Fold", { type: "fold" }, send));
    else if (a.type === "check") out.push(button("Check", { type: "check" }, send));
    else if (a.type === "call") out.push(button(`Call ${fmt(a.min)}`, { type: "call" }, send));
    else if (a.type === "all_in") out.push(button(`All-in ${fmt(a.max)}`, { type: "all_in" }, send));
    else if (a.type === "bet" || a.type === "raise") {
      const word = a.type === "bet" ? "Bet" : "Raise to";
      if (a.min === a.max) {
        out.push(button(`${word} ${fmt(a.min)}`, { type: a.type, amount: a.min }, send));
      } else {
        let btn;
        const input = amountInput(a, unit, (v) => { btn.firstChild.textContent = `${word} ${fmt(v)}`; });
        btn = button(`${word} ${fmt(a.min)}`, () => ({ type: a.type, amount: input.value() }), send, { kind: a.type });
        out.push(h("span", { class: "raise-group" }, input.el, btn));
      }
    }
  }
  return out;
}

/** Loco Poker: check, fold, all-in, call (no amounts). */
export function locoPanel(legal, send) {
  const labels = { check: "Check", fold: "Fold", all_in: "All-in!", call: "Call the all-in" };
  return legal.map((a) => button(labels[a.type] || a.type, { type: a.type }, send));
}

/**
 * Avalanche: pick a rank from your hand (the `groups` of the legal play) and a count; or snowfall.
 * `state` gives the avalanche on the table for the grow/stop/fall preview.
 */
export function avalanchePanel(legal, state, send) {
  const play = legal.find((a) => a.type === "play");
  const snow = legal.find((a) => a.type === "snowfall");
  const out = [];
  if (snow) out.push(button("Snowfall (draw a card)", { type: "snowfall" }, send));
  if (!play) return out;
  const groups = Object.entries(play.groups).sort((a, b) => rankValue(a[0]) - rankValue(b[0]));
  let [rank, count] = suggestion(groups, state.avalanche || []);
  const preview = h("span", { class: "preview", "aria-live": "polite" });
  const countInput = h("input", { type: "number", min: 1, max: count, value: count, class: "count", "aria-label": "How many cards" });
  const playBtn = button("Play", () => ({ type: "play", rank, count }), send, { kind: "play" });
  const picks = groups.map(([r, n]) => h("button", {
    type: "button", class: "rank-pick", "data-rank": r, "aria-pressed": String(r === rank),
    "aria-label": `${rankLabel(r)}: you hold ${n}`,
    onclick: (ev) => { rank = r; count = Math.min(Math.max(count, 1), n); update(ev.currentTarget); },
  }, h("span", { class: `rank-face${r === "X" ? " joker" : ""}`, "aria-hidden": "true" }, r === "X" ? "JOKER" : rankLabel(r)), h("span", { class: "rank-count" }, `×${n}`)));
  function update() {
    for (const p of picks) p.setAttribute("aria-pressed", String(p.dataset.rank === rank));
    countInput.max = play.groups[rank];
    countInput.value = count;
    playBtn.firstChild.textContent = `Play ${count} × ${rankLabel(rank)}`;
    const what = outcome(state.avalanche || [], count, rank);
    preview.textContent = { start: "starts an avalanche", grow: "grows the avalanche", stop: "stops it: all to the neutral pile", fall: "lets it fall on the previous player" }[what];
    preview.dataset.outcome = what;
  }
  countInput.addEventListener("input", () => {
    const v = Math.round(Number(countInput.value));
    if (v >= 1 && v <= play.groups[rank]) { count = v; update(); }
  });
  update();
  out.push(h("div", { class: "rank-picks", role: "group", "aria-label": "Choose a rank to play" }, picks));
  out.push(h("span", { class: "play-group" }, h("label", { class: "count-label" }, "Cards ", countInput), playBtn, preview));
  return out;
}

/**
 * The play selected at first: with no avalanche, the largest group; on an avalanche, the smallest
 * play that grows it, else one that stops it, else one low card (it falls).
 */
function suggestion(groups, avalanche) {
  if (!avalanche.length) {
    const [r, n] = groups.reduce((best, g) => (g[1] > best[1] ? g : best));
    return [r, n];
  }
  const plays = [];
  for (const [r, n] of groups) for (let c = 1; c <= n; c++) plays.push([r, c]);
  const order = { grow: 0, stop: 1, fall: 2 };
  plays.sort((a, b) => order[outcome(avalanche, a[1], a[0])] - order[outcome(avalanche, b[1], b[0])]
    || a[1] - b[1] || rankValue(a[0]) - rankValue(b[0]));
  return plays[0];
}

/** The solo player's Continue (G-4: the table waits for you between steps). */
export function continueButton(send) {
  return button("Continue", { type: "continue" }, send, { key: "space", kind: "continue" });
}
