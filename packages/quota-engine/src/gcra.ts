// GCRA (the generic cell rate algorithm, virtual scheduling form) on flat state: two numbers per
// key, how far the flow ran ahead of schedule at its latest admission and that admission's instant
// (its theoretical arrival time, TAT, is their sum). Each unit is due `T = window / refill` ms
// after the last; a charge of `cost` at `t` passes when `max(TAT, t) + cost·T − t ≤ burst·T`,
// forgiving the rule's slack. The formulas are @tideward/limiters' own (the Gcra of rate
// `refill · 1000 / window` a second and the same burst).
//
// TAT is not kept as one absolute instant: near Date.now() such an instant rounds to 2^-12 ms,
// which drops or adds a unit of a burst; a span kept apart from the instant it counts from does not.
import { gcraFits, gcraLead, gcraReady, gcraRest, gcraWhole } from "@tideward/limiters/math";
import { EXHAUSTED, OK, OUT, TOO_LARGE } from "./outcome";
import type { Code } from "./outcome";
import type { Rule } from "./rule";

/** Schedules `cost` units at `t` if they fit; the new state lands in OUT[0] (ahead) and OUT[1] (at). */
export function gcraDecide(rule: Rule, ahead: number, at: number, t: number, cost: number): Code {
  const { interval, burst, gcraSlack } = rule;
  const lead = gcraLead(at, ahead, t);
  if (cost <= burst && gcraFits(lead, cost, interval, rule.reach)) {
    const next = lead + cost * interval;
    OUT[0] = next;
    OUT[1] = t;
    OUT[2] = gcraWhole(next, interval, burst, gcraSlack);
    OUT[3] = t;
    OUT[4] = gcraRest(t, next, t);
    return OK;
  }
  OUT[2] = gcraWhole(lead, interval, burst, gcraSlack);
  OUT[4] = gcraRest(at, ahead, t);
  if (cost > burst) {
    OUT[3] = Infinity;
    return TOO_LARGE;
  }
  OUT[3] = gcraReady(at, ahead, t, cost, interval, rule.tau, rule.reach);
  return EXHAUSTED;
}

/** Whether the key is at rest at `t` (fully caught up), so that dropping it equals keeping it. */
export function gcraIdle(ahead: number, at: number, t: number): boolean {
  return gcraLead(at, ahead, t) === 0;
}
