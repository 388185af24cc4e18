// A limiter with a sample window hands its algorithm one sample a window: the mean round trip,
// the most in flight and any drop of the calls that finished in it, and nothing for a window
// too small to count.
import { describe, expect, it } from "vitest";
import { AimdLimit, Limiter, VegasLimit, sampleWindow } from "@tideward/concurrency";
import type { Token } from "@tideward/concurrency";

const STARTS = [0, 1_700_000_000_000.375] as const;

function take(limiter: Limiter, n: number, now: number): Token[] {
  const out: Token[] = [];
  for (let i = 0; i < n; i++) {
    const t = limiter.acquire(now);
    if (t.ok) out.push(t);
  }
  return out;
}

describe.each(STARTS)("Limiter with a sample window, from %d ms", (t0) => {
  it("folds a window of drops into one decrease, where a sample a call decreases for each", () => {
    const windowed = new Limiter(new AimdLimit({ initial: 100, min: 1 }), { window: {}, now: t0 });
    const each = new Limiter(new AimdLimit({ initial: 100, min: 1 }), { now: t0 });
    for (const limiter of [windowed, each]) {
      const held = take(limiter, 30, t0);
      held[0].drop(t0 + 10); // opens the first window, to t0 + 1010: one call, too few to count
      for (let i = 1; i < 21; i++) held[i].drop(t0 + 20 + i);
      held[21].drop(t0 + 1_020); // closes the window of 21 calls
    }
    expect(windowed.limit).toBe(90);
    expect(each.limit).toBeLessThan(20);
  });

  it("hands the window's mean round trip, not each call's", () => {
    const limiter = new Limiter(new VegasLimit({ initial: 10 }), { window: { size: 2 }, now: t0 });
    const held = take(limiter, 4, t0);
    held[0].pass(t0 + 10); // opens the window
    held[1].pass(t0 + 10);
    held[2].pass(t0 + 30);
    expect(Number.isFinite((limiter.algorithm as VegasLimit).noLoad)).toBe(false); // no sample yet
    held[3].pass(t0 + 1_020); // closes it: mean of 10, 30 and 1020 ms
    expect((limiter.algorithm as VegasLimit).noLoad).toBeCloseTo((10 + 30 + 1_020) / 3, 9);
  });

  it("throws a window with fewer calls than its size away", () => {
    const limiter = new Limiter(new AimdLimit({ initial: 50, min: 1 }), { window: { size: 5 }, now: t0 });
    const held = take(limiter, 10, t0);
    held[0].drop(t0 + 1);
    held[1].drop(t0 + 2);
    held[2].drop(t0 + 2_000); // closes a window of 2 calls: thrown away
    expect(limiter.limit).toBe(50);
    for (let i = 3; i < 7; i++) held[i].drop(t0 + 2_001 + i);
    held[7].drop(t0 + 4_000); // closes a window of 5
    expect(limiter.limit).toBe(45);
  });

  it("keeps windows between min and max, twice the least round trip between", () => {
    const limiter = new Limiter(new AimdLimit({ initial: 50, min: 1 }), {
      window: { min: 100, max: 400, size: 1 },
      now: t0,
    });
    const held = take(limiter, 10, t0);
    // The first call closes the opening window, which holds only itself (size 1: it counts); the
    // next lasts twice its 150 ms: to t0 + 450.
    held[0].drop(t0 + 150);
    expect(limiter.limit).toBe(45);
    held[1].drop(t0 + 449);
    expect(limiter.limit).toBe(45);
    held[2].drop(t0 + 451); // closes it (least 449 ms): the next lasts 400 ms (max, not 898), to t0 + 851
    expect(limiter.limit).toBe(40);
    held[3].drop(t0 + 850);
    expect(limiter.limit).toBe(40);
    held[4].drop(t0 + 852); // closes it (least 850 ms): the next lasts 400 ms
    expect(limiter.limit).toBe(36);
    held[5].drop(t0 + 1_252);
    held[6].drop(t0 + 1_253);
    expect(limiter.limit).toBe(32);
    expect(limiter.window).toEqual({ min: 100, max: 400, size: 1 });
  });
});

describe("Limiter window options", () => {
  it("lays fields over the preset", () => {
    expect(new Limiter(new AimdLimit(), { window: {} }).window).toEqual(sampleWindow);
    expect(new Limiter(new AimdLimit()).window).toBe(undefined);
  });

  it.each([
    [{ min: 0 }, RangeError, /SampleWindow min \(ms\)/],
    [{ min: 500, max: 100 }, RangeError, /SampleWindow max \(ms\) must be at least min \(500\), got 100/],
    [{ size: 0 }, RangeError, /SampleWindow size/],
    [{ size: 2 ** 24 + 1 }, RangeError, /at most 16777216/],
    [{ mn: 1 }, TypeError, /did you mean "min"/],
    ["x", TypeError, /Limiter window/],
  ] as const)("refuses %j", (window, type, message) => {
    expect(() => new Limiter(new AimdLimit(), { window: window as never })).toThrow(type);
    expect(() => new Limiter(new AimdLimit(), { window: window as never })).toThrow(message);
  });
});
