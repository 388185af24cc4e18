// What the retry tests share: options on a manual clock, a call that fails a number of times, and
// the error a promise rejects with.
import type { RetryEvent, RetryOptions } from "@tideward/backoff";
import { ManualClock } from "@tideward/time";

/** Options that run on a manual clock: sleeping moves the clock, nothing waits for real. */
export function simulated(extra: RetryOptions = {}): {
  clock: ManualClock;
  slept: number[];
  events: RetryEvent[];
  options: RetryOptions;
} {
  const clock = new ManualClock(0);
  const slept: number[] = [];
  const events: RetryEvent[] = [];
  const options: RetryOptions = {
    clock: clock.now,
    sleep: (span, signal) => {
      slept.push(span);
      return clock.sleep(span, signal);
    },
    random: () => 0.5,
    onRetry: (e) => void events.push(e),
    ...extra,
  };
  return { clock, slept, events, options };
}

/** A call that fails `failures` times, then returns "ok"; it records when each attempt was made. */
export function flaky(
  clock: ManualClock,
  failures: number,
  error: (n: number) => Error = (n) => new Error(`boom ${n}`),
) {
  const at: number[] = [];
  const fn = ({ attempt }: { attempt: number }): Promise<string> => {
    at.push(clock.now());
    return attempt <= failures ? Promise.reject(error(attempt)) : Promise.resolve("ok");
  };
  return { fn, at };
}

/** What `p` rejects with; fails when it resolves. */
export async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error("expected a rejection");
}
