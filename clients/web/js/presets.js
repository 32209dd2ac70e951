// Bet-size presets for no-limit betting (no-limit Hold'em, Alamo): pure arithmetic, no DOM.
//
// The rule (NL-2, NL-3, AL-5; amounts are raise-to totals for the street, in chips or cards):
//   pot   = everything in the middle now, this street's bets included (the state's `pot`)
//   top   = the largest bet on this street (the state's `bets`), 0 when nobody bet
//   call  = what the player must add to call (the legal `call` entry's amount, 0 when checking)
//   a fraction f of the pot is the raise-to total  top + floor(f × (pot + call))
//   (a pot-sized raise: call, then raise by the pot as it is after the call; with nothing to call
//   it is a bet of f × pot), then clamped into [min, max] of the legal `bet`/`raise` entry.
// "Min" is that entry's `min`, "All-in" (or "Max" when the max is not the whole stack) its `max`.

/** The presets offered, in order: [name, label, fraction of the pot or null for min/max]. */
export const PRESETS = [["min", "Min", null], ["half", "½ pot", 0.5], ["three_quarters", "¾ pot", 0.75], ["pot", "Pot", 1], ["max", "All-in", null]];

/**
 * The presets for the legal bet or raise entry `entry` ({type, min, max}: raise-to totals):
 * `pot` all chips (cards) in the middle, `bets` {seat: this street's bet}, `call` the amount to call
 * (0 when none), `allIn` whether `entry.max` is the player's whole stack.
 * Returns [{name, label, amount}] with every amount a whole number in [entry.min, entry.max].
 */
export function betPresets(entry, { pot = 0, bets = {}, call = 0, allIn = true } = {}) {
  const top = Math.max(0, ...Object.values(bets || {}).map(Number).filter(Number.isFinite));
  const clamp = (v) => Math.max(entry.min, Math.min(entry.max, v));
  return PRESETS.map(([name, label, f]) => {
    let amount;
    if (name === "min") amount = entry.min;
    else if (name === "max") amount = entry.max;
    else amount = clamp(top + Math.floor(f * (Number(pot || 0) + call)));
    return { name, label: name === "max" && !allIn ? "Max" : label, amount };
  });
}
