// Motion at the table: short CSS animations (style.css, the "Motion" block) on what changed since
// the table was last drawn, and the pot and each amount won counted out.
//
// * a card that appears: dealt from the middle of the felt to its seat (or under the felt), turned
//   over where it lies on the board, or where a face-down card lay (class motion-deal / motion-turn);
// * chips: a seat's bet pushed to the table (motion-bet), an amount won coming from the middle to
//   the seat (motion-win);
// * the pot (.pot[data-pot]) and each amount won (.won[data-won]) count from what they showed to
//   their new value in 400 ms (requestAnimationFrame).
//
// The table draws its whole page again on every event (table.js render), so each drawing is compared
// with the last one by keys (a card: its place, face and rank among equal faces; a bet or an amount
// won: its seat) and an animation still running goes on in the new element (a negative delay).
//
// The DOM always holds the exact amounts: a counted element keeps its text and data attributes, gets
// data-value (the final number) at once, and the count is drawn over its text (made transparent) by
// an aria-hidden child whose CSS ::after shows data-count; when the count ends the child goes.
//
// With prefers-reduced-motion: reduce nothing moves and nothing counts (style.css turns any
// animation off as well).

/** Milliseconds of each animation (style.css's keyframes last as long). */
const MS = { "motion-deal": 300, "motion-turn": 320, "motion-bet": 260, "motion-win": 350 };
/** Milliseconds between two cards dealt in one drawing, and the most cards staggered. */
const STAGGER_MS = 60;
const MAX_STAGGER = 4;
/** Milliseconds an amount takes to count to its new value. */
const COUNT_MS = 400;
/** Pixels a bet moves on its way from its seat to the table. */
const BET_PUSH = 22;

/** Does the person ask for reduced motion (the OS or browser setting)? */
export function reducedMotion() {
  return typeof matchMedia === "function" && matchMedia("(prefers-reduced-motion: reduce)").matches;
}

/** The motion of one table's drawings (one per Table, table.js). */
export class Motion {
  constructor() {
    this.cards = null; // key -> {at (ms, performance.now()), dx, dy, cls}; null: no drawing to compare with
    this.chips = new Map(); // "bet 3" / "won 3" -> {value, at, dx, dy}
    this.counts = new Map(); // "pot 0" / "won 3" -> {from, to, at, el, text}
    this.raf = 0;
    this.tick = () => this._tick();
  }

  /** Forget the last drawing: the next one shows the table as it is, without motion. */
  reset() {
    this.cards = null;
    this.chips.clear();
    this.counts.clear();
  }

  /**
   * After the table was drawn in `root`: set the motion of what changed since the last drawing.
   * `you`: this page's seat (null when watching). Returns {won}: true when an amount won appeared or
   * grew at `you`'s seat (for the win sound; also with reduced motion).
   */
  update(root, you) {
    const area = root.querySelector(".play-area");
    if (!area) {
      this.reset();
      return { won: false };
    }
    const first = this.cards === null;
    const calm = reducedMotion();
    const now = performance.now();
    const felt = area.querySelector(".felt");
    const centre = felt ? middleOf(felt.getBoundingClientRect()) : null;
    this._cards(area, first, calm, now, centre);
    const won = this._chips(area, first, calm, now, centre, you);
    this._counts(area, first, calm, now);
    return { won };
  }

  _cards(area, first, calm, now, centre) {
    const cards = new Map();
    const backsBefore = new Set();
    if (!first) for (const [k, v] of this.cards) if (v.back) backsBefore.add(k.split("|")[0]);
    let dealt = 0;
    for (const [k, place, el] of cardKeys(area)) {
      let seen = first ? null : this.cards.get(k);
      if (!seen) {
        const back = !el.dataset.card;
        seen = { at: -Infinity, back };
        if (!first && !calm) {
          const turned = place === "centre" || (!back && backsBefore.has(place));
          seen.cls = turned ? "motion-turn" : "motion-deal";
          seen.at = now + Math.min(dealt++, MAX_STAGGER) * STAGGER_MS;
          if (!turned && centre) Object.assign(seen, offset(centre, el, 1));
        }
      }
      cards.set(k, seen);
      if (!calm && seen.cls) animate(el, seen.cls, seen, now);
    }
    this.cards = cards;
  }

  _chips(area, first, calm, now, centre, you) {
    const chips = new Map();
    let won = false;
    for (const el of area.querySelectorAll(".felt [data-seat] .bet, .felt [data-seat] .won")) {
      const seat = el.closest("[data-seat]").dataset.seat;
      const bet = el.classList.contains("bet");
      const k = `${bet ? "bet" : "won"} ${seat}`;
      const value = bet ? el.dataset.bet : el.dataset.won;
      let seen = this.chips.get(k);
      if (!seen || seen.value !== value) {
        const grew = !seen || Number(value) > Number(seen.value);
        seen = { value, at: -Infinity };
        if (!first && !bet && grew && you != null && String(you) === seat) won = true;
        if (!first && !calm) {
          seen.at = now;
          seen.cls = bet ? "motion-bet" : "motion-win";
          // a bet comes from its seat (away from the middle), an amount won from the middle
          if (centre) Object.assign(seen, bet ? offset(centre, el, -BET_PUSH) : offset(centre, el, 1));
        }
      }
      chips.set(k, seen);
      if (!calm && seen.cls) animate(el, seen.cls, seen, now);
    }
    this.chips = chips;
    return won;
  }

  _counts(area, first, calm, now) {
    const counts = new Map();
    const pots = area.querySelectorAll(".felt .center .pot[data-pot]");
    const wins = area.querySelectorAll(".felt [data-seat] .won[data-won]");
    const found = [...[...pots].map((el, i) => [`pot ${i}`, el, el.dataset.pot]),
      ...[...wins].map((el) => [`won ${el.closest("[data-seat]").dataset.seat}`, el, el.dataset.won])];
    for (const [k, el, raw] of found) {
      const to = Number(raw);
      if (raw === "" || !Number.isFinite(to)) continue;
      el.dataset.value = String(to); // exact at once, whatever is drawn over the text
      let c = this.counts.get(k);
      if (!c || c.to !== to) {
        const from = first || calm ? to : c ? shownValue(c, now) : 0;
        c = { from, to, at: now };
      }
      c.el = el;
      c.text = countable(el.textContent, to);
      counts.set(k, c);
      if (!calm && counting(c, now)) showCount(el, c, now);
    }
    this.counts = counts;
    if (!calm && !this.raf && [...counts.values()].some((c) => counting(c, now))) this.raf = requestAnimationFrame(this.tick);
  }

  _tick() {
    this.raf = 0;
    const now = performance.now();
    let more = false;
    for (const c of this.counts.values()) {
      if (!c.el.isConnected) continue;
      if (counting(c, now)) {
        showCount(c.el, c, now);
        more = true;
      } else endCount(c.el);
    }
    if (more) this.raf = requestAnimationFrame(this.tick);
  }
}

/** [key, place, element] of each card drawn in the play area (not the action panel's, not an empty
 * place): place is "seat N", "centre" or "area"; the key adds the face ("back") and its rank among
 * equal faces of that place. */
function cardKeys(area) {
  const out = [];
  const seen = new Map();
  for (const el of area.querySelectorAll(".card:not(.slot)")) {
    if (el.closest(".action-panel")) continue;
    const seat = el.closest("[data-seat]");
    const place = seat ? `seat ${seat.dataset.seat}` : el.closest(".center") ? "centre" : "area";
    const face = `${place}|${el.dataset.card || "back"}`;
    const n = seen.get(face) || 0;
    seen.set(face, n + 1);
    out.push([`${face}|${n}`, place, el]);
  }
  return out;
}

function middleOf(rect) {
  return { x: rect.left + rect.width / 2, y: rect.top + rect.height / 2 };
}

/** {dx, dy}: pixels from `el`'s place to the felt's middle `centre` times `scale`; with a negative
 * `scale`, that many pixels straight away from the middle. */
function offset(centre, el, scale) {
  const at = middleOf(el.getBoundingClientRect());
  const dx = centre.x - at.x;
  const dy = centre.y - at.y;
  if (scale > 0) return { dx: dx * scale, dy: dy * scale };
  const length = Math.hypot(dx, dy) || 1;
  return { dx: (dx / length) * scale, dy: (dy / length) * scale };
}

/** Give `el` animation `cls`, begun at `seen.at` (ms): the delay is negative when it began before
 * this drawing, so a redrawn element goes on where the last one was; nothing once it is over. */
function animate(el, cls, seen, now) {
  if (now - seen.at >= MS[cls]) return;
  el.classList.add("motion", cls);
  el.style.animationDelay = `${Math.round(seen.at - now)}ms`;
  if (seen.dx !== undefined) {
    el.style.setProperty("--motion-dx", `${seen.dx.toFixed(1)}px`);
    el.style.setProperty("--motion-dy", `${seen.dy.toFixed(1)}px`);
  }
}

/** {before, after, format} of `text` around the number `to` (as fmt writes it, "1,234", or plainly),
 * or null when the text does not show it. */
function countable(text, to) {
  const plain = String(to);
  for (const [written, format] of [[to.toLocaleString("en-US"), (n) => n.toLocaleString("en-US")], [plain, String]]) {
    const at = findNumber(text, written);
    if (at >= 0) return { before: text.slice(0, at), after: text.slice(at + written.length), format };
  }
  return null;
}

/** Where `written` stands in `text` as a whole number (not inside a longer one), or -1. */
function findNumber(text, written) {
  let at = text.indexOf(written);
  while (at >= 0) {
    const before = text[at - 1];
    const after = text[at + written.length];
    if (!/[\d,.]/.test(before || "") && !/\d/.test(after || "")) return at;
    at = text.indexOf(written, at + 1);
  }
  return -1;
}

/** Is count `c` still running at `now` (ms)? Counts of less than 2, or of a text that does not show
 * the number, are not run. */
function counting(c, now) {
  return !!c.text && Math.abs(c.to - c.from) >= 2 && now - c.at < COUNT_MS;
}

/** The whole number count `c` shows at `now`: from `from` to `to`, fast then slow. */
function shownValue(c, now) {
  const t = Math.min(1, Math.max(0, (now - c.at) / COUNT_MS));
  return Math.round(c.from + (c.to - c.from) * (1 - (1 - t) ** 3));
}

/** Draw count `c` over `el`'s text: the text turns transparent (it stays in the DOM, exact) and an
 * aria-hidden face shows the number counted so far. */
function showCount(el, c, now) {
  let face = el.querySelector(":scope > .count-face");
  if (!face) {
    el.style.setProperty("--count-colour", getComputedStyle(el).color);
    face = document.createElement("span");
    face.className = "count-face";
    face.setAttribute("aria-hidden", "true");
    el.append(face);
    el.classList.add("counting");
  }
  face.dataset.count = c.text.before + c.text.format(shownValue(c, now)) + c.text.after;
}

function endCount(el) {
  const face = el.querySelector(":scope > .count-face");
  if (face) face.remove();
  el.classList.remove("counting");
}
