// The layout matrix's checks of the table page as drawn now (harness.py evaluates this function in
// the page; test_layout_matrix.py reports what it finds). Argument: {moment: "turn" | "showdown" |
// "waiting" | "ended"}. Returns {problems: [text], clocks: clock texts checked, badges: badges checked}.
//
// * Overlap (bounding boxes, more than TOLERANCE px both ways) between the things of different
//   owners: each seat (its box, cards, badges, bet, lines), the centre's content (board cards, pot,
//   texts), the action panel (its box, and each button, input, select, checkbox label on its own),
//   the own hand under the felt (Avalanche), and the result banner (only against the action panel
//   and the own hand: over the felt it is drawn on purpose, with a close button).
// * The viewport, with the page scrolled to the top: no sideways scroll
//   (document.scrollingElement.scrollWidth <= innerWidth); every seat (and what it draws, its bet
//   and lines included) and the centre's content inside it, and at a "turn" every control of the
//   action panel and the own hand too.
// * Tap targets, at widths up to TAP_WIDTH px: every control of the action panel at least TAP_MIN px
//   both ways (a checkbox or radio by its label's box).
// * Contrast (WCAG 2.x, at least MIN_CONTRAST): each seat clock's text, as it runs and in the time
//   bank, against its bar where the text crosses the band the bar runs in (the bar shrinks to
//   nothing) and against the track the bar leaves behind (the clock's background, or its ::before
//   drawn under the text); each badge's text against its background. Colours from getComputedStyle,
//   translucent layers composited over what is behind them (a gradient: each of its colours).
(opts) => {
  const TOLERANCE = 1;
  const TAP_WIDTH = 412;
  const TAP_MIN = 44;
  const MIN_CONTRAST = 4.5;
  const problems = [];
  const moment = opts.moment;
  scrollTo(0, 0);

  // ---------------------------------------------------------------- elements
  const shown = (el) => {
    const r = el.getBoundingClientRect();
    if (r.width < 0.5 || r.height < 0.5) return null;
    const cs = getComputedStyle(el);
    return cs.visibility === "hidden" || cs.display === "none" ? null : r;
  };
  const desc = (el) => {
    const classes = [...el.classList].filter((c) => !c.startsWith("motion")).slice(0, 2);
    const data = ["action", "preset", "control", "rank", "card"].filter((k) => el.dataset[k] != null).map((k) => `[data-${k}=${el.dataset[k]}]`).join("");
    const type = el.tagName === "INPUT" ? `[type=${el.type}]` : "";
    const text = (el.tagName === "INPUT" ? el.value : el.innerText || el.getAttribute("aria-label") || "").trim().replace(/\s+/g, " ");
    return `${el.tagName.toLowerCase()}${classes.map((c) => `.${c}`).join("")}${type}${data}${text ? ` "${text.length > 28 ? `${text.slice(0, 27)}…` : text}"` : ""}`;
  };
  const hasText = (el) => [...el.childNodes].some((n) => n.nodeType === Node.TEXT_NODE && n.textContent.trim());
  const painted = (el) => {
    const cs = getComputedStyle(el);
    return cs.backgroundImage !== "none" || !/rgba\(.*,\s*0\)$|transparent/.test(cs.backgroundColor);
  };
  /** The controls of `root`: buttons, inputs, selects; a checkbox or radio by its label. */
  const controls = (root) => {
    if (!root) return [];
    const out = [];
    for (const el of root.querySelectorAll("button, input, select, textarea")) {
      if (el.type === "hidden") continue;
      const label = (el.type === "checkbox" || el.type === "radio") ? (el.closest("label") || (el.id && document.querySelector(`label[for="${el.id}"]`))) : null;
      const target = label || el;
      if (!out.includes(target)) out.push(target);
    }
    return out;
  };

  // ---------------------------------------------------------------- what is drawn, by owner
  const items = []; // {owner, kind, el, r}
  const add = (owner, kind, el) => {
    const r = shown(el);
    if (r) items.push({ owner, kind, el, r });
  };
  for (const seat of document.querySelectorAll(".felt > .seat")) {
    const owner = `seat ${seat.dataset.seat}`;
    add(owner, "seat", seat);
    for (const el of seat.querySelectorAll(".card")) add(owner, "card", el);
    for (const el of seat.querySelectorAll(".badge")) add(owner, "badge", el);
    for (const el of seat.querySelectorAll(".bet")) add(owner, "bet", el);
    for (const el of seat.querySelectorAll(".seat-lines > *, .seat-status")) add(owner, "line", el); // may run out of the box
  }
  const center = document.querySelector(".felt .center");
  if (center) {
    for (const el of center.querySelectorAll("*")) {
      if (el.closest(".card") && !el.classList.contains("card")) continue;
      if (el.classList.contains("card") || hasText(el) || painted(el)) add("centre", desc(el), el);
    }
  }
  const panel = document.querySelector(".action-panel");
  if (panel) add("action panel", "panel", panel);
  const panelControls = controls(panel);
  panelControls.forEach((el) => add(`panel ${desc(el)}`, "control", el));
  const myHand = document.querySelector(".my-hand");
  if (myHand) add("my hand", "my hand", myHand);
  const banner = document.querySelector(".result-banner");
  if (banner) add("result banner", "banner", banner);

  // ---------------------------------------------------------------- overlaps
  const isPanel = (o) => o === "action panel" || o.startsWith("panel ");
  const allowed = (a, b) => {
    // the banner is drawn over the felt on purpose; it must not cover the panel or the own hand
    if (a.owner === "result banner" || b.owner === "result banner") {
      const other = a.owner === "result banner" ? b : a;
      return !(isPanel(other.owner) || other.owner === "my hand");
    }
    return false;
  };
  const overlaps = (a, b) => a.left < b.right - TOLERANCE && b.left < a.right - TOLERANCE
    && a.top < b.bottom - TOLERANCE && b.top < a.bottom - TOLERANCE;
  const pairs = new Map();
  for (let i = 0; i < items.length; i++) {
    for (let j = i + 1; j < items.length; j++) {
      const [a, b] = [items[i], items[j]];
      if (a.owner === b.owner || a.el.contains(b.el) || b.el.contains(a.el) || allowed(a, b)) continue;
      if (!overlaps(a.r, b.r)) continue;
      const [x, y] = a.owner < b.owner ? [a, b] : [b, a];
      const k = `${x.owner} / ${y.owner}`;
      if (!pairs.has(k)) pairs.set(k, new Set());
      pairs.get(k).add(`${x.kind}×${y.kind}`);
    }
  }
  for (const [k, kinds] of pairs) problems.push(`overlap: ${k} (${[...kinds].slice(0, 4).join(", ")}${kinds.size > 4 ? ", …" : ""})`);

  // ---------------------------------------------------------------- the viewport
  const width = innerWidth;
  const height = innerHeight;
  const scrollWidth = document.scrollingElement.scrollWidth;
  if (scrollWidth > width) problems.push(`sideways scroll: scrollWidth ${scrollWidth} > innerWidth ${width}`);
  const must = items.filter((it) => it.owner.startsWith("seat ") || it.owner === "centre"
    || (moment === "turn" && (it.kind === "control" || it.owner === "my hand")));
  const outside = new Map();
  for (const it of must) {
    const r = it.r;
    const off = [r.left < -TOLERANCE ? "left" : "", r.right > width + TOLERANCE ? "right" : "",
      r.top < -TOLERANCE ? "top" : "", r.bottom > height + TOLERANCE ? "bottom" : ""].filter(Boolean);
    if (!off.length) continue;
    const what = it.owner.startsWith("seat ") ? `${it.owner}${it.kind === "seat" ? "" : ` ${it.kind}`}` : it.owner === "centre" ? `centre ${it.kind}` : it.owner;
    const k = `${what} (${off.join("/")})`;
    outside.set(k, Math.max(outside.get(k) || 0, Math.round(off.includes("bottom") ? r.bottom - height : off.includes("right") ? r.right - width : 0)));
  }
  for (const [k, by] of outside) problems.push(`outside the viewport: ${k}${by ? ` by ${by}px` : ""}`);

  // ---------------------------------------------------------------- tap targets
  if (width <= TAP_WIDTH) {
    for (const el of panelControls) {
      const r = shown(el);
      if (r && (r.width < TAP_MIN - 0.5 || r.height < TAP_MIN - 0.5)) {
        problems.push(`tap target under ${TAP_MIN}px: ${desc(el)} ${Math.round(r.width)}×${Math.round(r.height)}`);
      }
    }
  }

  // ---------------------------------------------------------------- contrast
  const parse = (text) => {
    const m = /rgba?\(([^)]+)\)/.exec(text);
    if (!m) return null;
    const p = m[1].split(/[\s,/]+/).filter(Boolean).map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const over = (top, under) => [0, 1, 2].map((i) => top[3] * top[i] + (1 - top[3]) * under[i]).concat([1]);
  /** The opaque colours behind `el`'s text: its background over its ancestors' (each colour of a gradient). */
  const backgrounds = (el) => {
    const layers = [];
    for (let node = el; node && node.nodeType === Node.ELEMENT_NODE; node = node.parentElement) {
      const cs = getComputedStyle(node);
      if (cs.backgroundImage !== "none") {
        const stops = (cs.backgroundImage.match(/rgba?\([^)]+\)/g) || []).map(parse);
        if (stops.length) return stops.map((s) => layers.reduceRight((acc, l) => over(l, acc), over(s, [0, 0, 0, 1])));
      }
      const bg = parse(cs.backgroundColor);
      if (bg && bg[3] > 0) {
        layers.push(bg);
        if (bg[3] >= 1) break;
      }
    }
    const base = layers.length && layers[layers.length - 1][3] >= 1 ? layers.pop() : [255, 255, 255, 1];
    return [layers.reduceRight((acc, l) => over(l, acc), base)];
  };
  const lum = (c) => {
    const [r, g, b] = c.slice(0, 3).map((v) => {
      const s = v / 255;
      return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const ratio = (fg, bg) => {
    const f = lum(over(fg, bg));
    const b = lum(bg);
    return (Math.max(f, b) + 0.05) / (Math.min(f, b) + 0.05);
  };
  const hex = (c) => `#${c.slice(0, 3).map((v) => Math.round(v).toString(16).padStart(2, "0")).join("")}`;
  const contrast = (what, fgText, bgs) => {
    const fg = parse(fgText);
    if (!fg) { problems.push(`contrast: ${what}: colour ${fgText} not understood`); return; }
    for (const bg of bgs) {
      const r = ratio(fg, bg);
      if (r < MIN_CONTRAST) problems.push(`contrast ${r.toFixed(2)}:1 < ${MIN_CONTRAST}: ${what} (${hex(fg)} on ${hex(bg)})`);
    }
  };
  let clocks = 0;
  for (const text of document.querySelectorAll(".seat .clock-text")) {
    const clock = text.closest(".clock");
    const bar = clock && clock.querySelector(".clock-bar");
    const box = clock && shown(clock);
    const at = shown(text);
    if (!bar || !box || !at) continue;
    clocks += 1;
    const seat = text.closest(".seat").dataset.seat;
    const look = (state) => {
      const colour = getComputedStyle(text).color;
      // the bar runs the clock's width down to nothing: whatever part of that band the text crosses
      const band = bar.getBoundingClientRect();
      if (overlaps(at, { left: box.left, right: box.right, top: band.top, bottom: band.bottom })) {
        contrast(`seat ${seat} clock text${state} on its bar`, colour, backgrounds(bar));
      }
      // the track the bar leaves: the clock's background, or a pseudo-element drawn under the bar
      let track = backgrounds(clock);
      const pseudo = getComputedStyle(clock, "::before");
      const fill = parse(pseudo.backgroundColor);
      if (pseudo.content !== "none" && fill && fill[3] > 0) {
        const top = box.top + (parseFloat(pseudo.top) || 0);
        const rim = { left: box.left, right: box.right, top, bottom: top + (parseFloat(pseudo.height) || box.height) };
        if (overlaps(at, rim)) track = track.map((bg) => over(fill, bg));
      }
      contrast(`seat ${seat} clock text${state} on its track`, colour, track);
    };
    const bank = clock.classList.contains("bank");
    clock.classList.remove("bank");
    look("");
    clock.classList.add("bank"); // the colours while the time bank runs
    look(" (time bank)");
    clock.classList.toggle("bank", bank);
  }
  const badgeSeen = new Set();
  let badges = 0;
  for (const badge of document.querySelectorAll(".badge")) {
    if (!shown(badge)) continue;
    badges += 1;
    const what = `badge ${desc(badge)}`;
    const before = problems.length;
    contrast(what, getComputedStyle(badge).color, backgrounds(badge));
    // one line per kind of badge (the same style on every seat)
    const kind = `${badge.className}|${badge.textContent}`;
    if (problems.length > before && badgeSeen.has(kind)) problems.splice(before);
    badgeSeen.add(kind);
  }
  return { problems, clocks, badges };
}
