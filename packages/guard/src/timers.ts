/**
 * How the guard schedules what must happen later (a timeout, a hedge, the end of a wait), so a
 * test can hand it a simulated scheduler. A guard keeps a timer only while a call that needs one
 * is in progress: idle, it has none.
 */
export interface Timers {
  /** Calls `fn` once, `ms` milliseconds from now; returns a handle for {@link Timers.clear}. */
  set(fn: () => void, ms: number): unknown;
  /** Cancels a timer set by {@link Timers.set} that has not fired; a fired one is ignored. */
  clear(handle: unknown): void;
  /**
   * Lets a timer stop holding the process open (Node's `timeout.unref()`), for a timer the guard
   * keeps armed while no call needs it. Optional: where there is no such notion, leave it out.
   */
  unref?(handle: unknown): void;
  /** Makes a timer hold the process open again (Node's `timeout.ref()`). Optional, with `unref`. */
  ref?(handle: unknown): void;
}

// setTimeout holds its delay in 32 bits: a longer one fires at once (with a warning). The guard
// never waits that long (waits are bounded by maxWait, maxRetryAfter and the deadline), but a
// deadline of a month is legal, and must not time out at once.
const LONGEST = 2_147_483_647;

/** The platform's `setTimeout` / `clearTimeout`, which every runtime the guard serves has. */
export const realTimers: Timers = {
  set: (fn, ms) => setTimeout(fn, ms > LONGEST ? LONGEST : ms),
  clear: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
  // Browsers and workers hand out numbers, which have neither.
  unref: (handle) => (handle as { unref?: () => void }).unref?.(),
  ref: (handle) => (handle as { ref?: () => void }).ref?.(),
};
