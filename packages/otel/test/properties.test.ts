// Whatever a guarded function answers, attempt after attempt, the metrics say what the callers
// and the guard's own events say: the same counts by outcome, and the same durations, at a clock
// near 0 and at one near Date.now() (fractional), for a guard of one attempt (counted from its
// events) and one that retries (its calls watched).
import fc from "fast-check";
import { Refusal } from "@tideward/guard";
import type { OutcomeEvent, Timers } from "@tideward/guard";
import { ManualClock } from "@tideward/time";
import { describe, expect, it } from "vitest";
import { instrumentGuard } from "../src/index";
import { metricsSdk } from "./support/sdk";

/** What one attempt does: how long it takes (ms) and how it answers. */
interface Step {
  readonly ms: number;
  readonly answer: "ok" | "bad" | "throw" | "refuse";
}

const step: fc.Arbitrary<Step> = fc.record({
  ms: fc.double({ min: 0, max: 5_000, noNaN: true }),
  answer: fc.constantFrom("ok", "bad", "throw", "refuse"),
});

// Sleeps between retries end at once: the clock moves only where an attempt moves it.
const instant: Timers = {
  set: (fn) => {
    queueMicrotask(fn);
    return 0;
  },
  clear: () => undefined,
};

function tally<K>(keys: readonly K[]): Map<K, number> {
  const m = new Map<K, number>();
  for (const k of keys) m.set(k, (m.get(k) ?? 0) + 1);
  return m;
}

describe.each([
  ["near 0", 0],
  ["near Date.now()", 1_700_000_000_000.37],
])("the counts match the events at a clock %s", (_, origin) => {
  it.each([1, 3])("for a guard of %i attempt(s) a call", async (attempts) => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(step, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 12 }),
        async (calls) => {
          const sdk = metricsSdk();
          const clock = new ManualClock(origin);
          const events: OutcomeEvent[] = [];
          let retries = 0;
          const callers: string[] = [];
          const callTimes: number[] = [];
          const call = instrumentGuard(
            ({ attempt }, script: readonly Step[]) => {
              const s = script[Math.min(attempt, script.length) - 1];
              clock.advance(s.ms);
              if (s.answer === "throw") throw new Error("down");
              if (s.answer === "refuse") throw new Refusal("rate", 10);
              return s.answer;
            },
            {
              retry: { attempts, base: 1, cap: 1 },
              budget: false,
              clock: clock.now,
              timers: instant,
              isFailure: (error, result) => error !== undefined || result === "bad",
              onOutcome: (e) => void events.push(e),
              onRetry: () => void retries++,
            },
            { meter: sdk.meter, name: "property" },
          );
          for (const script of calls) {
            const start = clock.now();
            const seen = await call(script).then(
              (v) => (v === "bad" ? "failure" : "success"),
              (e: unknown) => (e instanceof Refusal ? "refused" : "failure"),
            );
            callers.push(seen);
            callTimes.push(clock.now() - start);
          }
          const m = await sdk.collect();
          // Calls, as the callers saw them.
          for (const [outcome, n] of tally(callers))
            expect(m.sum("tideward.guard.calls", { "tideward.outcome": outcome })).toBe(n);
          expect(m.sum("tideward.guard.calls")).toBe(calls.length);
          // Attempts, as the guard's own events reported them.
          for (const [key, n] of tally(events.map((e) => `${e.outcome} ${e.attempt === 1 ? "first" : "retry"}`))) {
            const [outcome, kind] = key.split(" ");
            expect(
              m.sum("tideward.guard.attempts", { "tideward.outcome": outcome, "tideward.attempt.kind": kind }),
            ).toBe(n);
          }
          expect(m.sum("tideward.guard.retries")).toBe(retries);
          // Durations in seconds: the attempts' as the events measured them, the calls' as the callers did.
          const attempt = m.histogram("tideward.guard.attempt.duration");
          expect(attempt.count).toBe(events.length);
          expect(attempt.sum).toBeCloseTo(events.reduce((s, e) => s + e.duration, 0) / 1000, 6);
          const whole = m.histogram("tideward.guard.call.duration");
          expect(whole.count).toBe(calls.length);
          expect(whole.sum).toBeCloseTo(callTimes.reduce((s, t) => s + t, 0) / 1000, 6);
          await sdk.shutdown();
        },
      ),
      { numRuns: 25 },
    );
  });
});
