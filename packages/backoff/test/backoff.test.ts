import { describe, expect, it } from "vitest";
import { Backoff, Jitter, backoff } from "@tideward/backoff";

describe("the preset", () => {
  it("is 3 attempts, 100 ms doubling to a 1 s cap, spread by a fifth", () => {
    expect(backoff.policy()).toEqual({
      base: 100,
      factor: 2,
      cap: 1_000,
      attempts: 3,
      jitter: { kind: "spread", fraction: 0.2 },
    });
    expect(new Backoff().policy()).toEqual(backoff.policy());
  });

  it("plans two waits: 80–120 ms, then 160–240 ms", () => {
    expect(backoff.schedule([0, 0])).toEqual([80, 160]);
    expect(backoff.schedule([0.5, 0.5])).toEqual([100, 200]);
    // The worked example: the second retry waited 168 ms, not 200.
    expect(backoff.schedule([0.1, 0.1])).toEqual([84, 168]);
    expect(backoff.schedule([0.999, 0.999])).toEqual([100 - 20 + 0.999 * 40, 200 - 40 + 0.999 * 80]);
    expect(backoff.schedule()).toEqual([80, 160]);
  });

  it("allows two retries: more(1) and more(2), not more(3)", () => {
    expect([0, 1, 2, 3, 4].map((n) => backoff.more(n))).toEqual([true, true, true, false, false]);
    expect(backoff.more(Number.NaN)).toBe(false);
  });

  it("is frozen, and spreads like a plain record into a new policy", () => {
    expect(Object.isFrozen(backoff)).toBe(true);
    const five = new Backoff({ ...backoff, attempts: 5 });
    expect(five.policy()).toEqual({ ...backoff.policy(), attempts: 5 });
    expect(backoff.with({ attempts: 5 }).policy()).toEqual(five.policy());
    expect(backoff.attempts).toBe(3);
  });
});

describe("ceiling", () => {
  it("is min(base × factor^(retry − 1), cap) at retry 1, 2, 5, 1 000 and 1e9", () => {
    expect([1, 2, 3, 4, 5, 1_000, 1e9].map((n) => backoff.ceiling(n))).toEqual([
      100, 200, 400, 800, 1_000, 1_000, 1_000,
    ]);
    const slow = new Backoff({ base: 10, factor: 3, cap: 1e6 });
    expect([1, 2, 5, 1_000, 1e9].map((n) => slow.ceiling(n))).toEqual([10, 30, 810, 1e6, 1e6]);
  });

  it("reads the same from its precomputed first 32 retries as from the formula past them", () => {
    const odd = new Backoff({ base: 7.3, factor: 1.37, cap: 1e9 });
    const formula = (n: number): number => Math.min(7.3 * 1.37 ** (n - 1), 1e9);
    const ns = [1, 2, 31, 32, 33, 34, 40, 60];
    expect(ns.map((n) => odd.ceiling(n))).toEqual(ns.map(formula));
    expect(backoff.ceiling(1.5)).toBe(100 * 2 ** 0.5); // a fractional retry is not meant, but is not refused
  });

  it("gives nothing for a retry below 1 or NaN", () => {
    expect([0, -1, 0.5, -Infinity, Number.NaN].map((n) => backoff.ceiling(n))).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    expect(backoff.delay(0, { random: 0.5 })).toBeUndefined();
  });

  it("saturates at the cap, never NaN or Infinity, even for a huge factor or retry", () => {
    const huge = new Backoff({ base: 1, factor: 1e300, cap: 5_000 });
    expect([1, 2, 3, 1_000, 1e9, Number.MAX_SAFE_INTEGER, Infinity].map((n) => huge.ceiling(n))).toEqual([
      1, 5_000, 5_000, 5_000, 5_000, 5_000, 5_000,
    ]);
    expect(huge.delay(1e9, { random: 0.999 })).toBeCloseTo(5_998, 9); // 4 000 + 0.999 × 2 000
  });

  it("stays at the base for factor 1 and at 0 for base 0, where 1^∞ and 0 × ∞ would be NaN", () => {
    const flat = new Backoff({ base: 250, factor: 1, cap: 1_000 });
    expect([1, 2, 1e9, Infinity].map((n) => flat.ceiling(n))).toEqual([250, 250, 250, 250]);
    const zero = new Backoff({ base: 0, factor: 10, cap: 1_000 });
    expect([1, 2, 400, 1e9, Infinity].map((n) => zero.ceiling(n))).toEqual([0, 0, 0, 0, 0]);
    const still = new Backoff({ base: 0, factor: 10, cap: 1_000, jitter: Jitter.decorrelated, attempts: 4 });
    expect(still.schedule([0.9, 0.9, 0.9])).toEqual([0, 0, 0]); // grows from 0 × 3: never
    expect(still.delay(1e9, { random: 0.9, previous: Infinity })).toBe(1_000);
  });
});

describe("delay with each jitter, given draws", () => {
  const draws = [0.1, 0.3, 0.5, 0.7, 0.9];
  const make = (jitter: Jitter): Backoff => new Backoff({ jitter, attempts: 6 });

  it("Rigid is the ceiling whatever the draw", () => {
    expect(make(Jitter.rigid).schedule(draws)).toEqual([100, 200, 400, 800, 1_000]);
    expect(make(Jitter.rigid).delay(3, { random: 0.999 })).toBe(400);
  });

  it("Full is the draw times the ceiling", () => {
    expect(make(Jitter.full).schedule(draws)).toEqual([10, 60, 200, 560, 900]);
  });

  it("Equal is half the ceiling plus the draw times the other half", () => {
    expect(make(Jitter.equal).schedule(draws)).toEqual([55, 130, 300, 680, 950]);
  });

  it("Spread(0.2) is uniform over [0.8, 1.2] of the ceiling, passing the cap by up to a fifth", () => {
    expect(make(Jitter.spread(0.2)).schedule(draws)).toEqual([84, 184, 400, 864, 1_160]);
  });

  it("Spread(0) is Rigid, Spread(1) is uniform over [0, 2 × ceiling]", () => {
    expect(make(Jitter.spread(0)).schedule(draws)).toEqual(make(Jitter.rigid).schedule(draws));
    expect(make(Jitter.spread(1)).schedule(draws)).toEqual([20, 120, 400, 1_120, 1_800]);
  });

  it("Decorrelated is uniform over [base, previous × 3], capped, each wait growing from the last", () => {
    const d = new Backoff({ jitter: Jitter.decorrelated, attempts: 7 });
    // 100 + .5(300 − 100) = 200; 100 + .5(600 − 100) = 350; 575; 912.5; then the 1 000 cap.
    expect(d.schedule([0.5, 0.5, 0.5, 0.5, 0.5, 0.5])).toEqual([200, 350, 575, 912.5, 1_000, 1_000]);
    expect(d.schedule([])).toEqual([100, 100, 100, 100, 100, 100]);
    // It reads the previous wait, not the retry number.
    expect(d.delay(1, { random: 0.5, previous: 400 })).toBe(650);
    expect(d.delay(6, { random: 0.5, previous: 400 })).toBe(650);
    expect(d.delay(3, { random: 0.5 })).toBe(200); // no previous: starts from the base
    // A previous that makes no sense starts over at the base rather than going NaN.
    expect([Number.NaN, -5, 0, 10].map((previous) => d.delay(2, { random: 0.5, previous }))).toEqual([
      100, 100, 100, 100,
    ]);
    expect(d.delay(2, { random: 0.5, previous: Infinity })).toBe(1_000);
    expect(d.delay(2, { random: 0, previous: Infinity })).toBe(100);
  });

  it("gives the same delay for the same draw", () => {
    for (const jitter of [Jitter.rigid, Jitter.full, Jitter.equal, Jitter.decorrelated, Jitter.spread(0.3)]) {
      const b = make(jitter);
      const first = [1, 2, 3, 4].map((n) => b.delay(n, { random: 0.123456789, previous: 321 }));
      const again = [1, 2, 3, 4].map((n) => make(jitter).delay(n, { random: 0.123456789, previous: 321 }));
      expect(again).toEqual(first);
    }
  });

  it("uses the low end when no draw is given, and holds a draw outside [0, 1] to the nearest end", () => {
    const full = make(Jitter.full);
    expect(full.delay(3)).toBe(0);
    expect([Number.NaN, -3, 1, 7].map((random) => full.delay(3, { random }))).toEqual([0, 0, 400, 400]);
    expect(backoff.delay(2)).toBe(160);
  });

  it("counts missing draws in a schedule as zero", () => {
    expect(make(Jitter.full).schedule([0.5, 0.5])).toEqual([50, 100, 0, 0, 0]);
    expect(make(Jitter.equal).schedule([0.5])).toEqual([75, 100, 200, 400, 500]);
  });

  it("plans no waits for a single attempt", () => {
    expect(new Backoff({ attempts: 1 }).schedule([0.5])).toEqual([]);
    expect(new Backoff({ attempts: 1 }).more(1)).toBe(false);
  });
});
