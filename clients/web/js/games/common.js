// Pieces the game modules share: the board, amounts, seat keys.

import { h } from "../dom.js";
import { backEl, cardEl, slotEl } from "../cards.js";

export const fmt = (n) => (typeof n === "number" ? n.toLocaleString("en-US") : String(n ?? ""));

/** `n` chips / cards, with the unit. */
export function amount(n, unit) {
  return `${fmt(n)} ${unit === "cards" && n === 1 ? "card" : unit}`;
}

/** The board: dealt cards then empty places up to `size`. */
export function boardEl(cards, size = 5, label = "Board") {
  const slots = [];
  for (let i = 0; i < size; i++) slots.push(cards && cards[i] ? cardEl(cards[i]) : slotEl());
  return h("div", { class: "board", role: "group", "aria-label": `${label}: ${(cards || []).length} of ${size} cards` }, slots);
}

/** Two hole cards for a seat: its own or shown ones face up, else backs while in the hand. */
export function holeEl(cards, count) {
  if (cards && cards.length) return h("span", { class: "cards hole" }, cards.map((c) => cardEl(c)));
  if (count) return h("span", { class: "cards hole" }, Array.from({ length: count }, () => backEl()));
  return null;
}

export const has = (list, seat) => (list || []).includes(seat);
export const key = (seat) => String(seat);

/** "Ann", "bot 2" ... for a seat, from the table's occupants. */
export function nameOf(names, seat) {
  return (names && names[seat]) || `seat ${seat}`;
}
