// Telemetry never changes what a call answers: what a meter, a tracer, a span or a clock throws
// while reporting is dropped here, and the event it was reporting goes uncounted.

/** Calls `f(...args)`, dropping what it throws. */
export function quietly<A extends unknown[]>(f: (...args: A) => void, ...args: A): void {
  try {
    f(...args);
  } catch {
    // Swallowed: see above.
  }
}

/** The clock's reading, or NaN when it throws (a duration from it is then not known). */
export function now(clock: () => number): number {
  try {
    return clock();
  } catch {
    return Number.NaN;
  }
}
