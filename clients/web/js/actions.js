// The action panels: buttons from the turn's `legal` list (with amount inputs) for the betting
// games, the generic panel of a game drawn as data, and the solo player's Continue; `button` for a
// game's own panel. A game's renderer picks its panel (its `panel`, games/index.js).
// `send(action)` posts an `act`.

import { h } from "./dom.js";
import { cardText } from "./cards.js";
import { fmt } from "./games/common.js";
import { betPresets } from "./presets.js";

const KEYS = { fold: "f", check: "c", call: "c", bet: "r", raise: "r", all_in: "a", snowfall: "s", play: "p" };

/** A button for `action` (or a function making it when clicked); `opts.key` its keys, space-separated,
 * the first shown on it (default by type), `opts.kind` its data-action (default the action's type). */
export function button(label, action, send, opts = {}) {
  const keys = (opts.key || KEYS[action.type] || "").split(" ").filter(Boolean).map((k) => k.toUpperCase());
  const k = keys[0];
  return h("button", {
    class: `act act-${opts.kind || action.type}`, type: "button", "data-action": opts.kind || action.type,
    "aria-keyshortcuts": k ? keys.join(" ") : null, title: k ? `${label} (key ${k})` : label,
    onclick: () => send(typeof action === "function" ? action() : action),
  }, label, k ? h("kbd", { "aria-hidden": "true" }, k) : null);
}

/** The amount typed for the open turn, kept across redraws and reloads: {turn, value} in sessionStorage. */
const TYPED = "cardhall.typed-amount";

function typedFor(turn) {
  try {
    const t = JSON.parse(sessionStorage.getItem(TYPED));
    return t && t.turn === turn ? t.value : null;
  } catch { return null; }
}

function keepTyped(turn, value) {
  try { sessionStorage.setItem(TYPED, JSON.stringify({ turn, value })); } catch { /* storage off: kept until the next redraw only */ }
}

/** A raise-to (or bet) amount: slider and number kept together, clamped to [min, max]; starts at
 * `start`; `onChange(v)` on every change, `onEnter()` when Enter is pressed in it. */
function amountInput(legal, unit, start, onChange, onEnter) {
  const id = `amount-${legal.type}`;
  const range = h("input", { type: "range", min: legal.min, max: legal.max, step: 1, value: start, "aria-label": `${legal.type === "bet" ? "Bet" : "Raise to"} amount (${unit})` });
  const number = h("input", { type: "number", id, min: legal.min, max: legal.max, step: 1, value: start, inputmode: "numeric", "aria-label": `${legal.type === "bet" ? "Bet" : "Raise to"} (${legal.min} to ${legal.max} ${unit})` });
  const clamp = (v) => Math.max(legal.min, Math.min(legal.max, Math.round(Number(v) || legal.min)));
  const set = (v) => { number.value = v; range.value = v; onChange(clamp(v)); };
  range.addEventListener("input", () => { number.value = range.value; onChange(clamp(range.value)); });
  number.addEventListener("input", () => { if (number.value !== "") { range.value = clamp(number.value); onChange(clamp(number.value)); } });
  number.addEventListener("change", () => set(clamp(number.value)));
  for (const el of [range, number]) {
    el.addEventListener("keydown", (ev) => {
      if (ev.key !== "Enter") return;
      ev.preventDefault();
      ev.stopPropagation();
      set(clamp(number.value));
      onEnter();
    });
  }
  return { el: h("span", { class: "amount" }, range, number, h("span", { class: "range-hint" }, `${fmt(legal.min)}–${fmt(legal.max)}`)),
    value: () => clamp(number.value), set };
}

/** Enter on a preset confirms the bet, as in the amount field (Space still picks the preset). */
function confirmOnEnter(ev, btn) {
  if (ev.key !== "Enter") return;
  ev.preventDefault();
  ev.stopPropagation();
  btn.click();
}

/**
 * Hold'em and Alamo: fold, check, call, bet/raise with an amount (and presets, presets.js), all-in.
 * `state` the game's state (its `pot`, `bets`, `hand`, `street`: the presets and the typed amount's turn).
 * A call that puts the player all in is one button ("Call 40 (all in)", keys C and A), as is a raise
 * whose only size is all-in ("All-in 90", keys A and R).
 */
export function bettingPanel(legal, unit, send, state = {}) {
  const callE = legal.find((a) => a.type === "call");
  const allE = legal.find((a) => a.type === "all_in");
  const raiseE = legal.find((a) => a.type === "bet" || a.type === "raise");
  const callAllIn = Boolean(callE && allE && (allE.as === "call" || !raiseE));
  const raiseAllIn = Boolean(raiseE && allE && raiseE.min === raiseE.max && allE.max === raiseE.max);
  // the turn, as far as the panel can tell: one player's two turns in a street always differ in the pot
  const turn = JSON.stringify([state.game, state.hand, state.street, state.pot, legal]);
  const out = [];
  for (const a of legal) {
    if (a.type === "fold") out.push(button("Fold", { type: "fold" }, send));
    else if (a.type === "check") out.push(button("Check", { type: "check" }, send));
    else if (a.type === "call") {
      out.push(callAllIn ? button(`Call ${fmt(a.min)} (all in)`, { type: "call" }, send, { key: "c a" }) : button(`Call ${fmt(a.min)}`, { type: "call" }, send));
    } else if (a.type === "all_in") {
      if (!callAllIn) out.push(button(`All-in ${fmt(a.max)}`, { type: "all_in" }, send, raiseAllIn ? { key: "a r" } : {}));
    } else if (a.type === "bet" || a.type === "raise") {
      const word = a.type === "bet" ? "Bet" : "Raise to";
      if (raiseAllIn) continue;
      if (a.min === a.max) {
        out.push(button(`${word} ${fmt(a.min)}`, { type: a.type, amount: a.min }, send));
      } else {
        const start = typedFor(turn) ?? a.min;
        let btn;
        const input = amountInput(a, unit, start, (v) => { btn.firstChild.textContent = `${word} ${fmt(v)}`; keepTyped(turn, v); }, () => btn.click());
        btn = button(`${word} ${fmt(input.value())}`, () => ({ type: a.type, amount: input.value() }), send, { kind: a.type, key: "r" });
        const presets = betPresets(a, { pot: state.pot, bets: state.bets, call: callE ? callE.min : 0, allIn: Boolean(allE && allE.max === a.max) })
          .map((p) => h("button", { type: "button", class: "preset", "data-preset": p.name, "data-amount": p.amount, title: `${word} ${fmt(p.amount)}`,
            onclick: () => input.set(p.amount), onkeydown: (ev) => confirmOnEnter(ev, btn) }, p.label));
        out.push(h("span", { class: "raise-group" }, h("span", { class: "presets", role: "group", "aria-label": "Bet sizes" }, presets), input.el, btn));
      }
    }
  }
  return out;
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
