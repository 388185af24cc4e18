import { own } from "./memory";

// How far a run's clock may go. A double resolves about 2 µs at 2^43 ms and 4 µs at 2^44: a run
// starts and ends within the first, and what it waits for after an instant (an answer, a timer,
// a retry, a dip's edge) lands within the second, so a latency as long as the whole range still
// fits after a run at its edge. Past it, times would round to whole milliseconds and beyond.

/** Instants a run may start and end at, ms either side of 0 (about 278 years of the epoch). */
export const CLOCK_LIMIT = 2 ** 43;

/** Instants a run's events may reach, ms either side of 0: at most one more range past its end. */
export const EVENT_LIMIT = 2 ** 44;

/**
 * The error for an event `what` would schedule at `time` (ms on the run's clock, `start` its
 * start), past {@link EVENT_LIMIT}, after a `kind` of `ms` (`"wait"`, 1e300). One of the
 * simulator's own, so a run passes it on as it is, not as a callback's failure. The message is
 * made here, not where the check is: the hot paths keep to a comparison and a call.
 */
export function pastClock(what: string, kind: string, ms: number, time: number, start: number): RangeError {
  return beyond(what, `a ${kind} of ${ms} ms`, time, start);
}

/** {@link pastClock} for a service of `ms` the overload and the dips stretched by `stretch`. */
export function pastStretch(ms: number, stretch: number, time: number, start: number): RangeError {
  const detail = `a service of ${ms} ms stretched by ${stretch} to ${ms * stretch} ms`;
  return beyond("backend overload slowdown or dips latency", detail, time, start);
}

function beyond(what: string, detail: string, time: number, start: number): RangeError {
  return own(
    new RangeError(
      `simulate ${what}: ${detail} would put an event at ${time - start} ms after the start (${time} on the clock), past ±${EVENT_LIMIT} ms (2^44) of the epoch, as far as a run's events may reach`,
    ),
  );
}

/** {@link pastClock} for an attempt on its way to the server: its policies' `delay` and its request `leg`, ms. */
export function pastRequest(delay: number, leg: number, time: number, start: number): RangeError {
  if (delay === 0) return pastClock("network request", "leg", leg, time, start);
  if (leg === 0) return pastClock("policies delay", "delay", delay, time, start);
  return beyond("policies delay and network request", `a delay of ${delay} ms and a leg of ${leg} ms`, time, start);
}
