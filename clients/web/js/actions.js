// The action panels: buttons from the turn's `legal` list (with amount inputs) for the betting
// games and Loco Poker, the generic panel of a game drawn as data, and the solo player's Continue.
// A game's renderer picks its panel (its `panel`, games/index.js); Avalanche's is its own.
// `send(action)` posts an `act`.

import { h } from "./dom.js";
import { cardText } from "./cards.js";
import { fmt } from "./games/common.js";

const KEYS = { fold: "f", check: "c", call: "c", bet: "r", raise: "r", all_in: "a", snowfall: "s", play: "p" };

/** A button for `action` (or a function making it when clicked); `opts.key` its key (default by
 * type), `opts.kind` its data-action (default the action's type). */
export function button(label, action, send, opts = {}) {
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
 * Any game, from the shape of its legal actions alone (protocol/SPEC.md "Games": the generic
 * conventions): one button per legal action, keys 1..9; `min`/`max` give the action an `amount`
 * field in that range, a `cards` list a pick of those cards (sent as `cards`), any other list of
 * plain values a choice of one (sent under that field's name). The other fields are shown as hints.
 */
export function genericPanel(legal, send) {
  return legal.map((a, i) => {
    const fields = [];
    const read = [];
    const label = a.type.replace(/_/g, " ");
    if (Number.isInteger(a.min) && Number.isInteger(a.max)) {
      if (a.min === a.max) read.push((action) => { action.amount = a.min; });
      else {
        const clamp = (v) => Math.max(a.min, Math.min(a.max, Math.round(Number(v) || a.min)));
        const input = h("input", { type: "number", id: `amount-${a.type}`, class: "amount-field", min: a.min, max: a.max, step: 1,
          value: a.min, inputmode: "numeric", "aria-label": `${label}: amount (${a.min} to ${a.max})` });
        input.addEventListener("change", () => { input.value = clamp(input.value); });
        fields.push(h("label", { class: "amount" }, "amount ", input, h("span", { class: "range-hint" }, `${fmt(a.min)}–${fmt(a.max)}`)));
        read.push((action) => { action.amount = clamp(input.value); });
      }
    }
    for (const [name, values] of Object.entries(a)) {
      if (["type", "min", "max"].includes(name)) continue;
      const plain = Array.isArray(values) && values.length && values.every((v) => ["string", "number"].includes(typeof v));
      if (plain && name === "cards") {
        const picked = new Set();
        const picks = values.map((c) => h("button", { type: "button", class: "card-pick", "data-card": c, "aria-pressed": "false",
          onclick: (ev) => { if (picked.has(c)) picked.delete(c); else picked.add(c); ev.currentTarget.setAttribute("aria-pressed", String(picked.has(c))); } },
        cardText(c)));
        fields.push(h("span", { class: "card-picks", role: "group", "aria-label": `${label}: cards` }, picks));
        read.push((action) => { action.cards = values.filter((c) => picked.has(c)); });
      } else if (plain) {
        const select = h("select", { "data-field": name, "aria-label": `${label}: ${name.replace(/_/g, " ")}` },
          values.map((v) => h("option", { value: String(v) }, String(v))));
        fields.push(h("label", { class: "choice" }, `${name.replace(/_/g, " ")} `, select));
        read.push((action) => { action[name] = values.find((v) => String(v) === select.value); });
      } else {
        fields.push(h("span", { class: "hint" }, `${name.replace(/_/g, " ")}: ${JSON.stringify(values)}`));
      }
    }
    const action = () => { const out = { type: a.type }; for (const r of read) r(out); return out; };
    const key = i < 9 ? String(i + 1) : null;
    return h("span", { class: "act-group", "data-legal": a.type }, fields, button(label[0].toUpperCase() + label.slice(1), action, send, { kind: a.type, key }));
  });
}

/** The solo player's Continue (G-4: the table waits for you between steps). */
export function continueButton(send) {
  return button("Continue", { type: "continue" }, send, { key: "space", kind: "continue" });
}
