// A game's "How to play" page (GET /rules/<game>, server/rules.py): the server renders the rules'
// Markdown and writes each card of a `cards` block as codes, <code class="cards-codes"
// data-cards="Ah Td ??">; this module draws them with the table's card faces (cards.js): a face-up
// card for a card code, a face-down one for "??". A row holding anything else keeps its text, and
// a page without scripts shows the codes as they are.

import { backEl, cardEl, fourColour, setFourColour } from "./cards.js";
import { h } from "./dom.js";

/** A card code of the protocol ("Ah", "Td", jokers "Xr"/"Xb") or "??" (face down). */
const CODE = /^(?:[2-9TJQKA][cdhs]|X[rb]|\?\?)$/;

/** The elements of one row's codes, or null when one of them is not a card code. */
export function cardFaces(codes) {
  const words = codes.split(/\s+/).filter(Boolean);
  if (!words.length || !words.every((w) => CODE.test(w))) return null;
  return h("span", { class: "cards", "data-cards": codes }, words.map((w) => (w === "??" ? backEl() : cardEl(w))));
}

/** Replace each row's codes under `root` with card faces; returns how many rows were drawn. */
export function drawCards(root = document) {
  let drawn = 0;
  for (const code of root.querySelectorAll("code.cards-codes[data-cards]")) {
    const faces = cardFaces(code.dataset.cards);
    if (!faces) continue;
    code.replaceWith(faces);
    drawn += 1;
  }
  return drawn;
}

setFourColour(fourColour()); // the reader's deck, as the table draws it
drawCards();
document.body.dataset.cardsDrawn = "true";
