// The server's game catalogue (GET /api/games, protocol/SPEC.md "HTTP"): which games it runs, their
// titles, seat ranges, options (type, default, range or values, meaning, RULES tag) and bot
// strategies. The lobby builds its form from it; the page knows only how to draw each game
// (games/index.js).

let catalogue = null;
let loading = null;

/** Fetch the catalogue once (retried on the next call after a failure); resolves to it. */
export function loadCatalogue() {
  if (catalogue) return Promise.resolve(catalogue);
  if (!loading) {
    loading = fetch("/api/games", { cache: "no-store" })
      .then((r) => { if (!r.ok) throw new Error(`GET /api/games: HTTP ${r.status}`); return r.json(); })
      .then((body) => { catalogue = body; return body; })
      .finally(() => { loading = null; });
  }
  return loading;
}

/** The catalogue once loaded, else null. */
export function loadedCatalogue() {
  return catalogue;
}

/** The catalogue's entry for `game`, or null (not loaded yet, or a game this server does not run). */
export function gameEntry(game) {
  return catalogue ? catalogue.games.find((g) => g.name === game) || null : null;
}
