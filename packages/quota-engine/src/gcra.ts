// GCRA (the generic cell rate algorithm, virtual scheduling form) on flat state: how far the flow
// ran ahead of schedule at its latest admission, and that admission's instant (its theoretical
// arrival time, TAT, is their sum). Each unit is due `T = window / refill` ms after the last; a
// charge of `cost` at `t` passes when `max(TAT, t) + cost·T − t ≤ burst·T`, forgiving the rule's
// slack. The formulas are @tideward/limiters' own (the Gcra of rate `refill · 1000 / window` a
// second and the same burst).
import { gcraFits, gcraLead, gcraReady, gcraRest, gcraWhole } from "@tideward/limiters/math";
import { EXHAUSTED, OK, TOO_LARGE, step, take } from "./outcome";
import type { Code } from "./outcome";
import type { Rule } from "./rule";

/** Schedules `cost` units at `t` if they fit; the new state is how far ahead the flow is and the instant of this admission. */
export function gcraDecide(rule: Rule, ahead: number, at: number, t: number, cost: number): Code {
  const { interval, burst, gcraSlack } = rule;
  const lead = gcraLead(at, ahead, t);
  if (cost <= burst && gcraFits(lead, cost, interval, rule.reach)) {
    const next = lead + cost * interval;
    step.amount = next;
    step.instant = t;
    step.remaining = gcraWhole(next, interval, burst, gcraSlack);
    step.passAt = t;
    step.resetAt = gcraRest(t, next, t);
    return OK;
  }
  step.remaining = gcraWhole(lead, interval, burst, gcraSlack);
  step.resetAt = gcraRest(at, ahead, t);
  if (cost > burst) {
    step.passAt = Infinity;
    return TOO_LARGE;
  }
  step.passAt = gcraReady(at, ahead, t, cost, interval, rule.tau, rule.reach);
  return EXHAUSTED;
}

/** Whether the key is at rest at `t` (fully caught up), so that dropping it equals keeping it. */
export function gcraIdle(ahead: number, at: number, t: number): boolean {
  return gcraLead(at, ahead, t) === 0;
}

/**
 * Settles a flow for `delta` units more (a top-up) or fewer (a refund, below 0) than were charged,
 * at `t`: a refund moves the theoretical arrival time back by the refunded units' interval, never
 * before `t`; a top-up moves it on by whole units, never refused, up to a burst beyond the
 * tolerance with `debt` (later charges wait until the flow is back within it) or up to the
 * tolerance without. The new state lands in `step`; returns the units of a top-up not taken.
 */
export function gcraAdjust(rule: Rule, ahead: number, at: number, t: number, delta: number, debt: boolean): number {
  const { interval, burst, gcraSlack } = rule;
  const lead = gcraLead(at, ahead, t);
  step.amount = ahead;
  step.instant = at;
  if (delta <= 0) {
    if (lead === 0) return 0; // at rest: nothing to move back
    const back = lead + delta * interval;
    step.amount = back > 0 ? back : 0;
    step.instant = t;
    return 0;
  }
  const taken = take(delta, Math.floor(burst - (lead - gcraSlack) / interval) + (debt ? burst : 0));
  if (taken > 0) {
    step.amount = lead + taken * interval;
    step.instant = t;
  }
  return delta - taken;
}

/**
 * A flow's state under `next` in place of `rule`, at `t`: it keeps its theoretical arrival time,
 * re-based onto `t` (how far ahead of `t` it is), at most `next`'s reach with a burst owed. Into `step`.
 */
export function gcraRebase(rule: Rule, next: Rule, ahead: number, at: number, t: number): void {
  step.amount = ahead;
  step.instant = at;
  if (rule.interval === next.interval && rule.burst === next.burst) return;
  const lead = gcraLead(at, ahead, t);
  // At rest under any rule: how far ahead it once was is past, and may be past what `next` allows.
  if (lead === 0) step.amount = 0;
  else {
    step.amount = lead < next.gcraMost ? lead : 2 * next.tau;
    step.instant = t;
  }
}
