// Cards as the protocol writes them ("Ah", "Td", jokers "Xr"/"Xb"), decks in canonical order
// (engine/cards.py), and how the page draws them.

import { h } from "./dom.js";

export const RANKS = "23456789TJQKA";
export const SUITS = "cdhs";
const SUIT_SYMBOL = { c: "♣", d: "♦", h: "♥", s: "♠" };
const SUIT_NAME = { c: "clubs", d: "diamonds", h: "hearts", s: "spades" };
const RANK_NAME = {
  2: "Two", 3: "Three", 4: "Four", 5: "Five", 6: "Six", 7: "Seven", 8: "Eight", 9: "Nine",
  T: "Ten", J: "Jack", Q: "Queen", K: "King", A: "Ace", X: "Joker",
};
const RANK_SHOWN = { T: "10" };

/** One 52-card deck, clubs, diamonds, hearts, spades; 2..A within a suit; then jokers red, black, ... */
export function standardDeck(jokers = 0) {
  const deck = [];
  for (const s of SUITS) for (const r of RANKS) deck.push(r + s);
  for (let i = 0; i < jokers; i++) deck.push(i % 2 ? "Xb" : "Xr");
  return deck;
}

/** `decks` standard decks, then `jokers` jokers (Avalanche, AV-1). */
export function multiDeck(decks, jokers) {
  const deck = [];
  for (let i = 0; i < decks; i++) deck.push(...standardDeck());
  for (let i = 0; i < jokers; i++) deck.push(i % 2 ? "Xb" : "Xr");
  return deck;
}

export const isJoker = (card) => card[0] === "X";
export const rankValue = (rank) => (rank === "X" ? 15 : RANKS.indexOf(rank) + 2);

export function rankLabel(rank) {
  return rank === "X" ? "Joker" : RANK_SHOWN[rank] || rank;
}

export function cardName(card) {
  if (isJoker(card)) return `${card[1] === "r" ? "red" : "black"} joker`;
  return `${RANK_NAME[card[0]]} of ${SUIT_NAME[card[1]]}`;
}

/** Short text for logs: "A♥", "10♠", "Joker". */
export function cardText(card) {
  if (isJoker(card)) return card[1] === "r" ? "Joker(red)" : "Joker(black)";
  return (RANK_SHOWN[card[0]] || card[0]) + SUIT_SYMBOL[card[1]];
}

export function cardsText(cards) {
  return (cards || []).map(cardText).join(" ");
}

function isRed(card) {
  return isJoker(card) ? card[1] === "r" : card[1] === "h" || card[1] === "d";
}

const FOUR_COLOUR_KEY = "cardhall.fourColour";

/** Is the four-colour deck on (diamonds blue, clubs green; kept in localStorage)? */
export function fourColour() {
  return localStorage.getItem(FOUR_COLOUR_KEY) === "on";
}

/** Turn the four-colour deck on or off: a class on <html> that the stylesheet reads (`.card.suit-d`, `.card.suit-c`). */
export function setFourColour(on) {
  localStorage.setItem(FOUR_COLOUR_KEY, on ? "on" : "off");
  document.documentElement.classList.toggle("four-colour", on);
}

/** A face-up card element (classes: red or black, and suit-c/d/h/s for the four-colour deck). */
export function cardEl(card, extra = "") {
  if (isJoker(card)) {
    return h("span", { class: `card joker ${isRed(card) ? "red" : "black"} ${extra}`, role: "img",
      "aria-label": cardName(card), "data-card": card, title: cardName(card) },
    h("span", { class: "rank" }, "★"), h("span", { class: "suit" }, "JOKER"));
  }
  return h("span", { class: `card ${isRed(card) ? "red" : "black"} suit-${card[1]} ${extra}`, role: "img",
    "aria-label": cardName(card), "data-card": card, title: cardName(card) },
  h("span", { class: "rank" }, rankLabel(card[0])), h("span", { class: "suit" }, SUIT_SYMBOL[card[1]]));
}

/** A face-down card. */
export function backEl(extra = "") {
  return h("span", { class: `card back ${extra}`, role: "img", "aria-label": "face-down card" });
}

/** An empty place (a board card still to come). */
export function slotEl() {
  return h("span", { class: "card slot", "aria-hidden": "true" });
}

export function cardsEl(cards, extra = "") {
  return h("span", { class: `cards ${extra}` }, ...(cards || []).map((c) => cardEl(c)));
}
