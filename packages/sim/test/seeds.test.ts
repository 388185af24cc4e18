// A seed is one of 2^32 whole numbers, each its own run: anything else is refused rather than
// folded onto one of them. A start the clock cannot resolve is refused rather than swallowing
// the run.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { Simulator, simulate, stream, traffic } from "@tideward/sim";
import { STARTS } from "./helpers";

const t = traffic.poisson({ rate: 50 });

function message(act: () => unknown): string {
  try {
    act();
  } catch (e) {
    return `${(e as Error).constructor.name}: ${(e as Error).message}`;
  }
  return "accepted";
}

describe.each(STARTS)("seeds and starts (start %s)", (start) => {
  const run = (seed: number) => simulate({ start, seed, duration: 5_000, traffic: t }).summary.hash;

  it("refuses a seed that is not a whole number from 0 to 2^32 − 1, naming it", () => {
    for (const [seed, shown] of [
      [1.5, "1.5"],
      [-1, "-1"],
      [2 ** 32, "4294967296"],
      [1e300, "1e+300"],
    ] as const) {
      expect(message(() => run(seed))).toBe(
        `RangeError: simulate seed must be a whole number from 0 to 4294967295, got ${shown}`,
      );
      expect(message(() => new Simulator({ seed, start }))).toBe(
        `RangeError: Simulator seed must be a whole number from 0 to 4294967295, got ${shown}`,
      );
      expect(message(() => stream(seed, "traffic"))).toBe(
        `RangeError: stream seed must be a whole number from 0 to 4294967295, got ${shown}`,
      );
    }
    expect(message(() => run(NaN))).toBe("RangeError: simulate seed must be a finite number, got NaN");
  });

  it("gives random seeds that used to fold together runs of their own", () => {
    // 1.5 was 1, −1 was 2^32 − 1, and 2^32 and 10^300 were 0.
    const hashes = [0, 1, 2, 2 ** 32 - 1].map(run);
    expect(new Set(hashes).size).toBe(4);
    expect(run(0)).toBe(run(0));
  });

  it("distinct seeds draw distinct streams", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 32 - 1 }), fc.integer({ min: 0, max: 2 ** 32 - 1 }), (a, b) => {
        fc.pre(a !== b);
        const x = stream(a, "traffic");
        const y = stream(b, "traffic");
        const draws = (r: () => number) => [r(), r(), r(), r()];
        expect(draws(x)).not.toEqual(draws(y));
      }),
      { numRuns: 200 },
    );
  });

  it("refuses a start or an end the clock cannot resolve, rather than a run of no calls", () => {
    expect(message(() => simulate({ start: 1e300, duration: 60_000, traffic: t }))).toBe(
      "RangeError: simulate start (ms) must be within ±8796093022208 (2^43 ms, about 278 years either side of the epoch, where the clock still resolves a microsecond), got 1e+300",
    );
    expect(message(() => simulate({ start, duration: 1e13, step: 1e11, traffic: t }))).toBe(
      `RangeError: simulate duration (ms) must end the run within 8796093022208 ms of the epoch (2^43, where the clock still resolves a microsecond): start ${start} + duration 10000000000000 is past it`,
    );
    // Up to the bound, a run is a run.
    const near = simulate({ start: 2 ** 43 - 10_000, duration: 10_000, traffic: t });
    expect(near.summary.calls).toBeGreaterThan(400);
  });
});

describe("the README on start", () => {
  it("states the bound on a run's start that simulate enforces, everywhere it speaks of one", () => {
    const readme = readFileSync(join(import.meta.dirname, "..", "README.md"), "utf8").replace(/\s+/g, " ");
    // Every sentence about a run's `start` gives the bound, and none calls any finite start good.
    const sentences = readme.split(/(?<=\.) /).filter((s) => /run's `start`/.test(s));
    expect(sentences.length).toBeGreaterThanOrEqual(2);
    for (const s of sentences) {
      expect(s).not.toMatch(/anything finite/);
      expect(s).toMatch(/±2\^43 ms/);
    }
    expect(message(() => simulate({ start: 2 ** 43 + 1, duration: 1_000, traffic: t }))).toMatch(/±8796093022208/);
    expect(message(() => simulate({ start: -(2 ** 43), duration: 1_000, traffic: t }))).toBe("accepted");
  });
});
