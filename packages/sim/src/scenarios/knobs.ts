// The knobs many scenarios share, each defined once: its name, label, unit and, where it is
// one, the guard option it sets. A scenario gives the range that suits it (and a sentence of its
// own where what the knob does differs there).
import type { NumberKnob } from "../scenario";

/** A knob's range and default, and optionally its own sentence. */
export interface Range {
  readonly default: number;
  readonly min: number;
  readonly max: number;
  readonly step: number;
  readonly doc?: string;
}

/** From seconds (a knob's) to milliseconds (the guard's). */
const SECONDS = 1_000;

function knob(
  kind: NumberKnob["kind"],
  name: string,
  label: string,
  doc: string,
  r: Range,
  more: Pick<NumberKnob, "unit" | "scale" | "option"> = {},
): NumberKnob {
  const out: NumberKnob = {
    kind,
    name,
    label,
    doc: r.doc ?? doc,
    default: r.default,
    min: r.min,
    max: r.max,
    step: r.step,
    ...more,
  };
  return out;
}

/** `rate`: the offered load, Poisson calls a second. */
export function rateKnob(r: Range): NumberKnob {
  return knob("number", "rate", "Offered load", "Calls a second, Poisson.", r, { unit: "calls/s", scale: "log" });
}

/** `duration`: how long the run offers calls, in seconds. */
export function durationKnob(r: Range): NumberKnob {
  return knob("number", "duration", "Run length", "How long calls are offered.", r, { unit: "s" });
}

/** `deadline`: the caller's deadline in seconds, the guard's `deadline` (ms). */
export function deadlineKnob(r: Range & { readonly doc: string }): NumberKnob {
  return knob("number", "deadline", "Caller deadline", r.doc, r, {
    unit: "s",
    option: { path: "deadline", scale: SECONDS },
  });
}

/** `timeout`: how long a caller waits for one attempt, in seconds, the guard's `timeout` (ms). */
export function timeoutKnob(r: Range & { readonly label: string; readonly doc: string }): NumberKnob {
  return knob("number", "timeout", r.label, r.doc, r, { unit: "s", option: { path: "timeout", scale: SECONDS } });
}

/** `workers`: calls the backend serves at once. */
export function workersKnob(r: Range & { readonly doc: string }): NumberKnob {
  return knob("integer", "workers", "Workers", r.doc, r);
}

/** `attempts`: the tries a call may make, the first included: the guard's `retry.attempts`. */
export function attemptsKnob(r: Range): NumberKnob {
  return knob("integer", "attempts", "Attempts", "Tries a call may make, the first included.", r, {
    option: { path: "retry.attempts" },
  });
}

/** `base`: the backoff's first wait, in milliseconds: the guard's `retry.base`. */
export function baseKnob(r: Range & { readonly doc: string; readonly scale?: "log" }): NumberKnob {
  return knob("number", "base", "Backoff base", r.doc, r, {
    unit: "ms",
    ...(r.scale === undefined ? {} : { scale: r.scale }),
    option: { path: "retry.base" },
  });
}

/** `cap`: the longest a backoff's wait may grow to, in milliseconds: the guard's `retry.cap`. */
export function capKnob(r: Range & { readonly scale?: "log" }): NumberKnob {
  return knob("number", "cap", "Backoff cap", "The longest a wait may grow to.", r, {
    unit: "ms",
    ...(r.scale === undefined ? {} : { scale: r.scale }),
    option: { path: "retry.cap" },
  });
}

/**
 * The cap the backoff scenarios run with: the `cap` knob, raised to the `base` knob where it is
 * below (a backoff, and the guard, refuse a cap under the base), in ms.
 */
export function capOf(p: { readonly cap: number; readonly base: number }): number {
  return Math.max(p.cap, p.base);
}

/** `ratio`: the retries a retry budget allows per first attempt: the guard's `budget.ratio`. */
export function ratioKnob(r: Range): NumberKnob {
  return knob("number", "ratio", "Budget ratio", "Retries the budget allows per first attempt.", r, {
    option: { path: "budget.ratio" },
  });
}
