"use strict";
/**
 * The one action policy of the load, for both servers: given the legal actions of the seat to act
 * (cardhall's form: [{type, min?, max?}]) and a source of uniform numbers in [0, 1), the action sent.
 *
 * all-in 2 % of decisions, fold 8 % when facing a bet, a bet or raise of the minimum 15 % (and the
 * 8 % of fold when checking is free), else check, else call.
 */
function decide(legal, random) {
  const by = {};
  for (const a of legal) by[a.type] = a;
  const r = random();
  if (by.all_in && r < 0.02) return { type: "all_in" };
  if (by.fold && r < 0.10) return { type: "fold" };
  const raise = by.bet || by.raise;
  if (raise && r < 0.25) return { type: raise.type, amount: raise.min };
  if (by.check) return { type: "check" };
  if (by.call) return { type: "call" };
  return { type: legal[0].type };
}

/** Seconds to think before an action: uniform in 0.5x..1.5x of `think` (0: none), as cardhall's bots. */
function thinkTime(think, random) {
  return think > 0 ? think * (0.5 + random()) : 0;
}

module.exports = { decide, thinkTime };
