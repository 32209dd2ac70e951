// The hand histories of finished matches (GET /api/tables/{id}/hands, SPEC "HTTP") as replayable
// hands, each made by the game's renderer module (its `history` part, games/index.js): from PHH
// (.phhs text) for a game whose module says `phh`, else from the game's JSON records
// (server/hands.py, each engine's hand_record()); a game without one gets genericHand's steps.
// A hand is {label, steps: [{text, scene}]}; a scene is what the replayer draws after that step:
// {board: [cards] | null, pile: {label, cards} | null, note,
//  seats: [{seat, name, cards: [cards] | null, stack (text), bet (text), status, shows}]}.

import { gameInfo } from "./games/index.js";

/** The hands of a /hands body: `text` the body, `game` the table's game, `names` {seat: name}.
 * The game's module must be loaded (games/index.js loadGames). */
export function parseHands(text, game, names) {
  const n = (seat) => (names && names[seat]) || `seat ${seat}`;
  const history = gameInfo(game).module.history || null;
  const make = (history && history.hand) || genericHand;
  const label = (match, made, fallback) => `Match ${match ?? "?"} · ${made.label || fallback}`;
  if (history && history.phh) {
    return parsePHHS(text).map((hd, i) => {
      const out = make(hd, n);
      return { ...out, label: label(hd._cardhall_match, out, `hand ${hd._cardhall_hand ?? i + 1}`) };
    });
  }
  const body = JSON.parse(text);
  return (body.hands || []).map(({ match, hand }, i) => {
    const out = make(hand, n);
    return { ...out, label: label(match, out, hand.hand != null ? `hand ${hand.hand}` : `record ${i + 1}`) };
  });
}

// ---------------------------------------------------------------- PHH (.phhs, TOML as engine/phh.py writes it)
/** The hands of a .phhs text: [{...fields}] in order (tables [N]; [N.sub] as nested maps). */
export function parsePHHS(text) {
  const hands = [];
  const byName = new Map();
  let target = null;
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (!line || line.startsWith("#")) continue;
    const head = line.match(/^\[([^\]]+)\]$/);
    if (head) {
      const [top, sub] = head[1].split(".");
      if (!sub) { target = {}; hands.push(target); byName.set(top, target); } else if (byName.has(top)) { target = byName.get(top)[sub] = {}; }
      continue;
    }
    const kv = line.match(/^([A-Za-z_][\w-]*)\s*=\s*(.*)$/);
    if (!kv || !target) continue;
    let raw = kv[2];
    // a multi-line array: read on until its brackets balance (strings hold no brackets here)
    while ((raw.match(/\[/g) || []).length > (raw.match(/\]/g) || []).length && i + 1 < lines.length) raw += lines[++i].trim();
    target[kv[1]] = tomlValue(raw);
  }
  return hands;
}

function tomlValue(raw) {
  // TOML's strings, numbers, booleans and arrays as tomli_w writes them are JSON but for trailing commas
  try {
    return JSON.parse(raw.replace(/,\s*\]/g, "]"));
  } catch {
    return raw;
  }
}

/** A game whose module makes no hands: one step per entry of the record's `actions` or `moves`,
 * then the record's other fields. */
export function genericHand(r) {
  const list = Array.isArray(r.actions) ? r.actions : Array.isArray(r.moves) ? r.moves : [];
  const scene = (note) => ({ board: Array.isArray(r.board) ? r.board : null, note, pile: null, seats: [] });
  const steps = list.map((a) => ({ text: typeof a === "string" ? a : Object.entries(a).map(([k, v]) => `${k} ${Array.isArray(v) ? v.join(" ") : v}`).join(", "), scene: scene() }));
  steps.push({ text: "Record", scene: scene(JSON.stringify(r).slice(0, 600)) });
  return { steps };
}
