// Acting in advance in the betting games (a renderer with `preactions: true`): while another seat
// is to act, boxes "Check/fold", "Check", "Call X", "Call any"; at most one is chosen. The choice
// remembers the situation it was made in and is dropped when that changes:
//   * a new hand or street drops every choice;
//   * a change of the amount to call (a bet or raise) drops "Check" and "Call X";
// and on the player's own turn the choice still standing is sent as a normal `act` for that turn:
//   check/fold: check if legal, else fold; check: check; call X: call when the call is still X;
//   call any: call, or check when there is nothing to call. The choice is then forgotten.

import { h } from "./dom.js";
import { fmt } from "./games/common.js";

/** The choice of each table: {kind, hand, street, toCall}, kept in memory (a reload forgets it). */
const chosen = new Map();

/**
 * The situation of seat `you` in the game state `s` (Hold'em's or Alamo's state: `players`,
 * `folded`, `bets`, `stacks`, `hand`, `street`): {hand, street, toCall} with `toCall` the chips
 * (cards) to add to call now, capped at the stack; null when the seat cannot act in advance
 * (not in the hand, folded, all in, or between hands).
 */
export function situation(s, you) {
  if (!s || you == null || s.street == null || s.finished) return null;
  const k = String(you);
  if (!(s.players || []).includes(you) || (s.folded || []).includes(you)) return null;
  const stack = Number((s.stacks || {})[k] || 0);
  if (stack <= 0) return null;
  const bets = s.bets || {};
  const top = Math.max(0, ...Object.values(bets).map(Number).filter(Number.isFinite));
  return { hand: s.hand, street: s.street, toCall: Math.min(stack, top - Number(bets[k] || 0)) };
}

/** Whether the choice `c` ({kind, hand, street, toCall}) still holds in the situation `now`. */
export function stillValid(c, now) {
  if (!c || !now || c.hand !== now.hand || c.street !== now.street) return false;
  if (c.kind === "check" || c.kind === "call") return c.toCall === now.toCall;
  return true;
}

/** The action the choice `c` makes of the turn's legal actions `legal`, or null (none fits). */
export function actionFor(c, legal) {
  const has = (t) => legal.find((a) => a.type === t);
  const call = has("call");
  switch (c.kind) {
    case "check_fold": return has("check") ? { type: "check" } : has("fold") ? { type: "fold" } : null;
    case "check": return has("check") ? { type: "check" } : null;
    case "call": return call && call.min === c.toCall ? { type: "call" } : null;
    case "call_any": return call ? { type: "call" } : has("check") ? { type: "check" } : null;
    default: return null;
  }
}

/** The choice of `table` that still holds for the model `m` (table.js's model), dropping one that does not. */
function current(table, m) {
  const c = chosen.get(table);
  if (c && !stillValid(c, situation(m.state, m.you))) chosen.delete(table);
  return chosen.get(table) || null;
}

/**
 * The boxes for the model `m` of `table` while another seat is to act, or null when they do not
 * apply (the game has no pre-actions, the player is not in the hand or sits out, the table waits or is paused).
 */
export function preactionBoxes(table, m, game) {
  if (!game || !game.preactions || !m.turn || m.turn.continue || m.turn.seat === m.you || m.info.status !== "running") return null;
  const me = (m.info.occupants || []).find((o) => o.seat === m.you);
  const now = situation(m.state, m.you);
  if (!now || !me || me.sitting_out) return null; // sitting out: the server acts for the seat
  const c = current(table, m);
  const options = [["check_fold", now.toCall ? "Fold" : "Check/fold"]];
  if (now.toCall) options.push(["call", `Call ${fmt(now.toCall)}`]);
  else options.push(["check", "Check"]);
  options.push(["call_any", "Call any"]);
  const boxes = options.map(([kind, label]) => {
    const input = h("input", { type: "checkbox", "data-preaction": kind, checked: c && c.kind === kind });
    input.addEventListener("change", () => {
      if (input.checked) chosen.set(table, { kind, ...now });
      else chosen.delete(table);
      for (const other of input.closest(".preactions").querySelectorAll("input")) if (other !== input) other.checked = false;
    });
    return h("label", { class: "preaction" }, input, label);
  });
  return h("span", { class: "preactions", role: "group", "aria-label": "Act in advance" }, boxes);
}

/**
 * On the player's own turn (`m.legal` set): the action of the standing choice of `table`, which
 * is forgotten, or null. The caller sends it as a normal `act` naming the turn.
 */
export function takePreaction(table, m) {
  const c = current(table, m);
  chosen.delete(table);
  return c && m.legal ? actionFor(c, m.legal) : null;
}
