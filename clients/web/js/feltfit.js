// The felt fitted to the screen: the table page's felt takes the height the viewport leaves above
// what follows it (your hand, the action bar: pinned to the bottom on a phone), its seats go round
// an ellipse at the felt's edge, and seats and centre shrink (CSS `zoom`: --felt-scale for the seats,
// --centre-scale for the centre, never above the seats') until no two seats, and no seat and the
// centre, overlap. Every size, every seat count: nothing of
// the game hides another part of it, and nothing needs scrolling to be seen.

/** The seats' scales tried, largest first (`fitFelt` keeps the pair of seat and centre scales whose
 * smaller is the largest with nothing overlapping). */
const SCALES = [1, 0.92, 0.85, 0.78, 0.72, 0.66, 0.6, 0.55, 0.5, 0.45];
/** The centre's scales tried once the seats fit, largest first (none above the seats'). */
const CENTRE_SCALES = [...SCALES, 0.4];
/** The centre's width, at most, as a share of the felt's. */
const CENTRE_WIDTH = 0.7;
/** Pixels kept free between two seats, and between a seat and the centre. */
const GAP = 4;
/** The felt's height as a share of its width, at most (a wide oval on a wide screen, never a band). */
const MAX_RATIO = 0.62;
/** The felt's height in pixels, at least (a short landscape phone still shows a table). */
const MIN_HEIGHT = 190;
/** Pixels between the felt and what follows it, and below the page's last line (style.css margins). */
const MARGIN = 18;
/** Where the phone's layout applies (the action bar pinned, side panels behind tabs): style.css. */
export const PHONE = "(max-width: 720px), (max-height: 540px)";

/** Is the phone layout on (the same media query as style.css's)? */
export function isPhone() {
  return matchMedia(PHONE).matches;
}

/**
 * Fit the felt of the table page `page` (a `.table-page` element in the document): its height, each
 * seat's place (`style.left`/`top` in px of the felt), the side a seat's bet goes (`data-side`:
 * towards the centre), the seats' scale (`--felt-scale`, 0.45 to 1) and the centre's (`--centre-scale`,
 * 0.4 to the seats', with its width at most `CENTRE_WIDTH` of the felt's). `hint`: the
 * scale of the last fit of the same table: the search starts one step above it, so a fit costs two
 * layouts of the seats, not one per scale, and the seats grow back a step a fit when room frees.
 * Returns the fit, for `reuseFit` (null without a felt).
 */
export function fitFelt(page, hint = null) {
  const felt = page && page.querySelector(".felt");
  if (!felt || !felt.isConnected) return null;
  const phone = isPhone();
  const own = felt.getBoundingClientRect();
  const top = own.top + scrollY;
  // what follows the felt in its column stays on screen too: your hand, and the action bar below
  // the felt or pinned over the bottom of the screen (a phone in portrait); beside it, it does not count
  let after = 0;
  let pinned = 0;
  for (let el = felt.nextElementSibling; el; el = el.nextElementSibling) {
    const r = el.getBoundingClientRect();
    if (!r.height || r.left >= own.right || r.right <= own.left) continue;
    if (getComputedStyle(el).position === "fixed") pinned += r.height;
    else after += r.height + MARGIN;
  }
  const bar = `${Math.ceil(pinned)}px`;
  page.style.setProperty("--bar-height", bar);
  const width = felt.clientWidth;
  const room = innerHeight - top - after - pinned - MARGIN;
  const height = Math.round(Math.max(MIN_HEIGHT, Math.min(room, width * (phone ? 1.6 : MAX_RATIO))));
  felt.style.height = `${height}px`;
  const seats = [...felt.querySelectorAll(":scope > .seat")];
  const center = felt.querySelector(":scope > .center");
  // the seats' scale s and the centre's c (at most s) that make the smaller of the two largest with
  // nothing overlapping (else the least bad): past a scale s no larger than the best clear fit's,
  // nothing better can come
  const from = Math.max(0, SCALES.indexOf(hint) - 1);
  let best = null;
  for (const s of SCALES.slice(from)) {
    if (best && best.clear && s <= Math.min(best.s, best.c)) break;
    felt.style.setProperty("--felt-scale", String(s));
    place(felt, seats, width, height, s);
    const boxes = seats.map(box);
    if (overlapping(boxes)) continue;
    const fits = CENTRE_SCALES.filter((x) => x <= s).find((x) => {
      zoomCentre(felt, x, width);
      const rect = center ? center.getBoundingClientRect() : null;
      return !rect || !boxes.some((b) => meet(b, rect));
    });
    const next = { s, c: fits ?? CENTRE_SCALES[CENTRE_SCALES.length - 1], clear: fits !== undefined };
    const better = !best || (next.clear && !best.clear)
      || (next.clear && best.clear && Math.min(s, next.c) > Math.min(best.s, best.c))
      || (!next.clear && !best.clear); // no clear fit yet: the smaller, the less overlap
    if (better) best = next;
  }
  best = best || { s: SCALES[SCALES.length - 1], c: CENTRE_SCALES[CENTRE_SCALES.length - 1] };
  if (felt.style.getPropertyValue("--felt-scale") !== String(best.s)) {
    felt.style.setProperty("--felt-scale", String(best.s));
    place(felt, seats, width, height, best.s);
  }
  zoomCentre(felt, best.c, width);
  return {
    scale: best.s, inner: best.c, bar, width, height: felt.style.height,
    rim: [felt.style.getPropertyValue("--rim-x"), felt.style.getPropertyValue("--rim-y")],
    seats: Object.fromEntries(seats.map((el) => [el.dataset.seat, [el.style.left, el.style.top, el.dataset.side]])),
  };
}

/** The centre (board, pot, results) at scale `c`, no wider than most of the felt's width `width`
 * (its lines wrap rather than run under the side seats). */
function zoomCentre(felt, c, width) {
  felt.style.setProperty("--centre-scale", String(c));
  felt.style.setProperty("--centre-max", `${Math.round((width * CENTRE_WIDTH) / c)}px`);
}

/** Draw the fit `fit` (from `fitFelt`) again on a new drawing of the same table, reading no layout:
 * a drawing at every event costs no layout of its own, and the exact fit follows once a frame. */
export function reuseFit(page, fit) {
  const felt = page && fit ? page.querySelector(".felt") : null;
  if (!felt) return;
  page.style.setProperty("--bar-height", fit.bar);
  felt.style.height = fit.height;
  felt.style.setProperty("--felt-scale", String(fit.scale));
  zoomCentre(felt, fit.inner, parseFloat(fit.width));
  felt.style.setProperty("--rim-x", fit.rim[0]);
  felt.style.setProperty("--rim-y", fit.rim[1]);
  for (const seat of felt.querySelectorAll(":scope > .seat")) {
    const spot = fit.seats[seat.dataset.seat];
    if (!spot) continue;
    [seat.style.left, seat.style.top] = spot;
    if (spot[2]) seat.dataset.side = spot[2];
  }
}

/** Seat `seats[i]` at the i-th of n points spread evenly round the ellipse inside the felt, starting
 * at the bottom and going clockwise on screen (left, top, right): the point's distance counted in
 * seat sizes, so a tall felt puts more seats on its sides and a wide one on its top and bottom. */
function place(felt, seats, width, height, scale) {
  if (!seats.length) return;
  const sizes = seats.map((s) => s.getBoundingClientRect());
  const sw = Math.max(...sizes.map((r) => r.width));
  const sh = Math.max(...sizes.map((r) => r.height));
  const rx = Math.max(0, width / 2 - sw / 2);
  const ry = Math.max(0, height / 2 - sh / 2);
  felt.style.setProperty("--rim-x", `${Math.round(sw / 2)}px`);
  felt.style.setProperty("--rim-y", `${Math.round(sh / 2)}px`);
  const samples = 360;
  const at = (k) => {
    const t = Math.PI / 2 + (2 * Math.PI * k) / samples;
    return [width / 2 + rx * Math.cos(t), height / 2 + ry * Math.sin(t)];
  };
  const lengths = [0];
  for (let k = 1; k <= samples; k++) {
    const [x0, y0] = at(k - 1);
    const [x1, y1] = at(k);
    lengths.push(lengths[k - 1] + Math.hypot((x1 - x0) / (sw || 1), (y1 - y0) / (sh || 1)));
  }
  const total = lengths[samples];
  let k = 0;
  seats.forEach((seat, i) => {
    const want = (total * i) / seats.length;
    while (k < samples && lengths[k + 1] <= want) k++;
    const [px, py] = at(k);
    const dx = (px - width / 2) / (rx || 1);
    const dy = (py - height / 2) / (ry || 1);
    // a seat smaller than the largest moves out by the difference, towards the felt's edge: the
    // centre keeps the room (still inside the felt: its half size plus the way out is the largest's)
    const x = px + ((sw - sizes[i].width) / 2) * dx;
    const y = py + ((sh - sizes[i].height) / 2) * dy;
    // `zoom` scales the seat's own left/top too: divided, so its centre lands on the point
    seat.style.left = `${(x / scale).toFixed(1)}px`;
    seat.style.top = `${(y / scale).toFixed(1)}px`;
    seat.dataset.side = Math.abs(dy) >= Math.abs(dx) * 0.8 ? (dy > 0 ? "bottom" : "top") : dx < 0 ? "left" : "right";
  });
}

/** Do two of the seats' boxes `boxes` overlap? */
function overlapping(boxes) {
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length; j++) if (meet(boxes[i], boxes[j])) return true;
  }
  return false;
}

/** A seat's box with its bet's. */
function box(seat) {
  const r = seat.getBoundingClientRect();
  const out = { left: r.left, top: r.top, right: r.right, bottom: r.bottom };
  const bet = seat.querySelector(":scope > .bet");
  if (bet) {
    const b = bet.getBoundingClientRect();
    out.left = Math.min(out.left, b.left);
    out.top = Math.min(out.top, b.top);
    out.right = Math.max(out.right, b.right);
    out.bottom = Math.max(out.bottom, b.bottom);
  }
  return out;
}

function meet(a, b) {
  return a.left < b.right + GAP && b.left < a.right + GAP && a.top < b.bottom + GAP && b.top < a.bottom + GAP;
}
