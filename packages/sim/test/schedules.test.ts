// Failure and dip schedules are built by one sweep and read by halving; these compare them with
// the plain definitions (every window checked at every breakpoint) on random windows.
import { describe, expect, it } from "vitest";
import { FailureSchedule, failures } from "@tideward/sim";
import { DipSchedule } from "../src/dips";

/** A small seeded generator, so that a failing case can be run again. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/** Offsets on a coarse grid, so that windows share edges and nest often. */
const offset = (r: () => number): number => Math.floor(r() * 40) * 2.5;

/** Where the rate or the dip could change, and between and past those. */
function probes(edges: readonly number[]): number[] {
  return [-1, ...edges.flatMap((e) => [e - 1e-9, e, e + 1.25]), 1e9, NaN];
}

/**
 * The breakpoint in force at `at` as the replaced code found it, scanning back from the last:
 * the first (0) before every edge, the last for NaN.
 */
function breakpoint(edges: readonly number[], at: number): number {
  const cuts = [...new Set([0, ...edges])].sort((a, b) => a - b);
  let i = cuts.length - 1;
  while (i > 0 && cuts[i] > at) i--;
  return cuts[i];
}

describe("schedules agree with their definitions", () => {
  it("a failure schedule's rate is the last window covering the offset, or the base", () => {
    for (let seed = 1; seed <= 200; seed++) {
      const r = rng(seed);
      const base = Math.round(r() * 10) / 10;
      const windows = Array.from({ length: Math.floor(r() * 12) }, () => {
        const from = offset(r);
        return { from, to: from + offset(r) * (r() < 0.2 ? 0 : 1), rate: Math.round(r() * 100) / 100 };
      });
      const s = new FailureSchedule(base, windows);
      const edges = windows.flatMap((w) => [w.from, w.to]);
      for (const at of probes(edges)) {
        const cut = breakpoint(edges, at);
        let want = base;
        for (const w of windows) if (cut >= w.from && cut < w.to) want = w.rate;
        expect([seed, at, s.rate(at)]).toEqual([seed, at, want]);
      }
    }
  });

  it("a dip schedule multiplies the factors in force in the order given and takes the fewest workers", () => {
    for (let seed = 1; seed <= 200; seed++) {
      const r = rng(seed);
      const workers = 1 + Math.floor(r() * 8);
      const dips = Array.from({ length: Math.floor(r() * 12) }, () => {
        const from = offset(r);
        // Factors that round differently in another order: the product must match the plain one.
        return { from, to: from + offset(r), latency: 1 + r() * 3, workers: Math.floor(r() * (workers + 1)) };
      });
      const s = new DipSchedule(dips, workers, "dips");
      const edges = dips.flatMap((d) => [d.from, d.to]);
      for (const at of probes(edges)) {
        const cut = breakpoint(edges, at);
        const on = dips.filter((d) => cut >= d.from && cut < d.to);
        const factor = on.reduce((f, d) => f * d.latency, 1);
        const fewest = on.reduce((w, d) => Math.min(w, d.workers), workers);
        expect([seed, at, s.factor(at), s.workers(at)]).toEqual([seed, at, factor, fewest]);
      }
    }
  });

  it("twenty thousand windows build and read in one sweep", () => {
    const windows = Array.from({ length: 20_000 }, (_, i) => ({ from: i * 10, to: i * 10 + 5, rate: 0.5 }));
    const s = failures.schedule(windows);
    expect([s.rate(0), s.rate(5), s.rate(199_990), s.rate(199_995)]).toEqual([0.5, 0, 0.5, 0]);
    const nested = Array.from({ length: 20_000 }, (_, i) => ({ from: i, to: 40_000 - i, latency: 1, workers: i % 7 }));
    const d = new DipSchedule(nested, 8, "dips");
    expect([d.workers(0), d.workers(7), d.workers(30_000), d.workers(40_000)]).toEqual([0, 0, 0, 8]);
  });
});

describe("failure schedules refuse bad input naming what the user called", () => {
  it.each([
    [
      "failures.schedule(null)",
      () => failures.schedule(null as never),
      /^failures\.schedule windows must be an array of windows such as .+, got null$/,
    ],
    ["failures.schedule({})", () => failures.schedule({} as never), /^failures\.schedule windows must be an array/],
    [
      "a window without to",
      () => failures.schedule([{ from: 5, rate: 1 } as never]),
      /^failures\.schedule windows\[0\] to \(ms\) is missing$/,
    ],
    [
      "a window without a rate",
      () => failures.schedule([{ from: 5, to: 6 } as never]),
      /^failures\.schedule windows\[0\] rate is missing$/,
    ],
    ["an outage without to", () => failures.outage({ from: 5 } as never), /^failures\.outage to \(ms\) is missing$/],
    [
      "a brown-out ending before it begins",
      () => failures.brownout({ from: 6, to: 5 }),
      /^failures\.brownout to \(ms\) must be at least from \(6\), got 5$/,
    ],
    [
      "an outage's base past 1",
      () => failures.outage({ from: 0, to: 1, base: 2 }),
      /^failures\.outage base must be between 0 and 1, got 2$/,
    ],
    [
      "new FailureSchedule(0, null)",
      () => new FailureSchedule(0, null as never),
      /^FailureSchedule windows must be an array/,
    ],
  ])("%s", (_, act, message) => {
    expect(act).toThrow(message);
  });
});
