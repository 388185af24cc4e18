// The promises of the time core at the magnitudes clocks really read: near 0 (a simulation),
// near performance.now() (10^3–10^7 ms, fractional) and near Date.now() (10^12–10^13 ms, where
// one float step is 2^-12 ms or more).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Deadline, ManualClock, formatSpan, parseSpan } from "@tideward/time";

// Well under a second each on an idle machine; the margin is for a loaded one.
const SLOW = 20_000;

const scales = [
  ["near 0", fc.double({ min: -1_000, max: 1_000, noNaN: true })],
  ["near performance.now()", fc.double({ min: 1e3, max: 1e7, noNaN: true })],
  ["near Date.now()", fc.double({ min: 1e12, max: 1e13, noNaN: true })],
] as const;

// Budgets from under one float step of an epoch reading to hours, fractions included.
const budget = fc.oneof(
  fc.double({ min: 1e-6, max: 1, noNaN: true }),
  fc.double({ min: 1, max: 1e7, noNaN: true }),
  fc.integer({ min: 1, max: 3_600_000 }),
);
const later = fc.oneof(fc.double({ min: 0, max: 1e7, noNaN: true }), fc.constantFrom(0, 2 ** -12, 2 ** -10));

describe.each(scales)("at clocks %s", (_, start) => {
  it(
    "a deadline is expired exactly when nothing remains, and waiting what remains expires it",
    () => {
      fc.assert(
        fc.property(start, budget, later, (t0, b, dt) => {
          const d = Deadline.start(b, t0);
          const now = t0 + dt;
          const left = d.remaining(now) as number;
          expect(left).toBeGreaterThanOrEqual(0);
          expect(left).toBeLessThanOrEqual(b);
          expect(d.expired(now)).toBe(left === 0);
          // As a caller computes it, in floating point: after the wait the deadline has passed.
          expect(d.expired(now + left)).toBe(true);
          expect(d.remaining(now + left)).toBe(0);
          // And not a float step before its end, unless that is before it started.
          expect(d.expired(d.end - Math.max(Math.abs(d.end) * 2 ** -52, 5e-324) * 2)).toBe(false);
        }),
      );
    },
    SLOW,
  );

  it(
    "a manual clock advanced by what remains reaches the deadline in one step, however small the rest",
    () => {
      fc.assert(
        fc.property(start, budget, later, (t0, b, dt) => {
          const clock = new ManualClock(t0);
          const d = Deadline.start(b, clock.now());
          clock.advance(Math.min(dt, b / 2));
          let steps = 0;
          while (!d.expired(clock.now()) && steps < 3) {
            clock.advance(d.remaining(clock.now()) as number);
            steps++;
          }
          expect(steps).toBeLessThanOrEqual(1);
          expect(d.expired(clock.now())).toBe(true);
        }),
      );
    },
    SLOW,
  );

  it(
    "a manual clock moves to exactly the sum a caller computes",
    () => {
      fc.assert(
        fc.property(start, fc.double({ min: 0, max: 1e7, noNaN: true }), (t0, span) => {
          const clock = new ManualClock(t0);
          expect(clock.advance(span)).toBe(t0 + span);
          expect(clock.now()).toBe(t0 + span);
        }),
      );
    },
    SLOW,
  );

  it(
    "formatSpan writes a reading on this clock so that parseSpan reads it back exactly",
    () => {
      fc.assert(
        fc.property(start, (t) => {
          const n = Math.abs(t);
          expect(parseSpan(formatSpan(n))).toBe(n);
        }),
      );
    },
    SLOW,
  );
});
