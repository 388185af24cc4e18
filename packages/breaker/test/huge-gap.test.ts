// A gap of any finite length clears the window, the gaps past 2^53 buckets (some 1e19 ms at the
// preset's 250 ms) included, where the window cannot count buckets from its origin any more: the
// breaker opens a window afresh there, so one stray reading never wedges it.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Breaker } from "@tideward/breaker";
import { PASS, feed } from "./helpers";
import { scales } from "./ops";

/** A gap from well inside what the window counts to the largest double. */
const gap = fc.oneof(
  fc.double({ min: 1e12, max: 1e18, noNaN: true }),
  fc.double({ min: 1e18, max: 1e22, noNaN: true }),
  fc.double({ min: 1e22, max: Number.MAX_VALUE, noNaN: true }),
  fc.constantFrom(1e19, 2 ** 53 * 250, Number.MAX_VALUE),
);

describe.each(scales)("a huge gap on a clock %s", (_, start) => {
  it("clears the window: nothing is refused after it, and the window moves on from there", () => {
    fc.assert(
      fc.property(start, gap, (origin, g) => {
        const b = new Breaker({}, origin);
        feed(b, origin, 0, 20);
        expect(b.ratio(origin)).toBeGreaterThan(0.5);
        const later = origin + g;
        expect(b.ratio(later)).toBe(0);
        for (let i = 0; i < 100; i++) expect(b.allow(later, 0)).toBeDefined();
        // Failures after the gap throttle again, and a later reading still ages them out.
        const after = new Breaker({}, origin);
        feed(after, origin, 0, 20);
        after.allow(origin, PASS)?.pass(later);
        feed(after, later, 0, 20);
        expect(after.ratio(later)).toBeGreaterThan(0.5);
        const next = later * 2 < Infinity ? later * 2 : later;
        if (next > later) expect(after.ratio(next)).toBe(0);
      }),
    );
  });

  it("after one stray reading, a healthy backend is refused nothing", () => {
    fc.assert(
      fc.property(start, fc.constantFrom(1e19, 1e21, 1e300), (origin, stray) => {
        const b = new Breaker({}, origin);
        feed(b, origin, 0, 20);
        b.allow(origin, PASS)?.pass(origin + stray);
        let refused = 0;
        for (let i = 0; i < 1_000; i++) {
          const t = origin + 60_000 + i * 10;
          const p = b.allow(t, 0.5);
          if (p === undefined) refused++;
          else p.pass(t + 1);
        }
        expect(refused).toBe(0);
      }),
    );
  });
});
