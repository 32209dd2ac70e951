// A game's own web renderer, served from its registration (tests/browser/test_generic_renderer.py):
// the generic renderer with a mark in the centre, so the test can tell the page imported this file.

import generic from "/web/js/games/generic.js";
import { h } from "/web/js/dom.js";

export default {
  ...generic,
  center: (s, ctx) => h("div", { class: "drawn-by-plugin" }, generic.center(s, ctx)),
  lobby: { high_card_drawn: { featured: ["hands"], blurb: "High Card, drawn by its own module." } },
};
