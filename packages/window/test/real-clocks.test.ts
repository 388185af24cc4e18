// The window at the magnitudes clocks really read: near 0, near performance.now() (10^3–10^7 ms)
// and near Date.now() (10^12–10^13 ms, where one float step is 2^-12 ms or more), with
// fractional origins, widths and readings.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Window } from "@tideward/window";

class Counter {
  n = 0;
  reset(): void {
    this.n = 0;
  }
}

// Well under a second each on an idle machine; the margin is for a loaded one.
const SLOW = 20_000;

const scales = [
  ["near 0", fc.double({ min: -1_000, max: 1_000, noNaN: true })],
  ["near performance.now()", fc.double({ min: 1e3, max: 1e7, noNaN: true })],
  ["near Date.now()", fc.double({ min: 1e12, max: 1e13, noNaN: true })],
] as const;

const bits = new Float64Array(1);
const word = new BigInt64Array(bits.buffer);
/** `x` moved by `n` doubles (towards +Infinity for n > 0); x finite and nonzero. */
function ulps(x: number, n: number): number {
  bits[0] = x;
  word[0] += BigInt(x > 0 ? n : -n);
  return bits[0];
}

/** Where bucket i opens, by the window's definition: origin + i·width as the doubles compute it. */
const start = (w: Window<Counter>, i: number): number => w.origin + i * w.width;

/** The bucket a reading falls in, found by walking the boundaries rather than dividing. */
function bucketOf(w: Window<Counter>, t: number): number {
  let i = Math.max(0, Math.floor((t - w.origin) / w.width) - 3);
  while (i > 0 && start(w, i) > t) i--;
  while (start(w, i + 1) <= t) i++;
  return i;
}

const shape = fc.record({
  size: fc.integer({ min: 1, max: 12 }),
  // Fractional widths from 0.01 ms (the narrowest) to seconds.
  perBucket: fc.oneof(
    fc.double({ min: 0.01, max: 10, noNaN: true }),
    fc.double({ min: 10, max: 5_000, noNaN: true }),
    fc.constantFrom(1_000 / 3, 0.3, 250),
  ),
});

describe.each(scales)("Window at clocks %s", (_, origin) => {
  it(
    "sums exactly what a naive list of events in the live buckets sums, with fractional steps",
    () => {
      const step = fc.oneof(
        fc.double({ min: 0, max: 3, noNaN: true }),
        fc.double({ min: -2, max: 200, noNaN: true }),
        fc.integer({ min: 0, max: 400 }),
      );
      fc.assert(
        fc.property(
          origin,
          shape,
          fc.array(fc.tuple(step, fc.integer({ min: 1, max: 9 }), fc.boolean()), { maxLength: 80 }),
          (t0, { size, perBucket }, steps) => {
            const win = new Window(() => new Counter(), { size, window: perBucket * size, now: t0 });
            const events: { bucket: number; n: number }[] = [];
            let t = t0;
            let head = 0;
            for (const [dt, n, read] of steps) {
              t = Math.max(t0, t + dt * win.width);
              const bucket = Math.max(bucketOf(win, t), head);
              if (read) {
                let got = 0;
                win.each(t, (b) => (got += b.n));
                const want = events
                  .filter((e) => e.bucket > bucket - size && e.bucket <= bucket)
                  .reduce((a, e) => a + e.n, 0);
                expect(got).toBe(want);
              } else {
                head = bucket;
                win.slot(t).n += n;
                events.push({ bucket, n });
              }
            }
          },
        ),
      );
    },
    SLOW,
  );

  it(
    "puts a reading at a bucket's start in that bucket and one a float step before it in the last",
    () => {
      fc.assert(
        fc.property(
          origin,
          shape,
          fc.array(fc.tuple(fc.integer({ min: 1, max: 5 }), fc.integer({ min: -2, max: 2 })), { maxLength: 40 }),
          (t0, { size, perBucket }, jumps) => {
            const win = new Window(() => new Counter(), { size, window: perBucket * size, now: t0 });
            let k = 0;
            for (const [jump, by] of jumps) {
              k += jump;
              const edge = start(win, k);
              const ulp = edge === 0 ? 0 : by;
              const t = ulp === 0 ? edge : ulps(edge, ulp);
              // A reading at or after the boundary opens bucket k; one before it stays in k − 1.
              const want = ulp >= 0 ? k : k - 1;
              win.slot(t).n++;
              const starts: number[] = [];
              win.each(t, (_b, s) => starts.push(s));
              expect(starts[starts.length - 1]).toBe(start(win, want));
              expect(starts[starts.length - 1]).toBeLessThanOrEqual(t);
              expect(win.headEnd).toBe(start(win, want + 1));
              expect(t).toBeLessThan(win.headEnd);
              k = want;
            }
          },
        ),
      );
    },
    SLOW,
  );

  it(
    "reports bucket starts that each fall in their own bucket",
    () => {
      fc.assert(
        fc.property(origin, shape, fc.integer({ min: 0, max: 1e6 }), (t0, { size, perBucket }, k) => {
          const win = new Window(() => new Counter(), { size, window: perBucket * size, now: t0 });
          const s = start(win, k);
          win.slot(s).n = 7;
          let seen: [number, number] | undefined;
          win.each(s, (b, at) => (seen = [b.n, at]));
          expect(seen).toEqual([7, s]);
        }),
      );
    },
    SLOW,
  );
});
