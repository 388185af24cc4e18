// The client preset: what it is, and the three outage targets it was chosen to meet, on a small
// outage driver (100 calls a second, 20 ms, every call failing from 40 s) over seeds and over
// outage ends from 80 to 84 s, next to a classic breaker on the same calls.
import { describe, expect, it } from "vitest";
import { Breaker, client, sre } from "@tideward/breaker";
import { adaptive, classic, outage } from "./outage";
import type { Figures } from "./outage";

const SEEDS = [1, 2, 3, 4];
const ENDS = [80_000, 81_000, 82_000, 83_000, 84_000];
const EPOCH = 1_700_000_000_000.375;

describe("the client preset", () => {
  it("is a frozen, valid policy that can be half-open, and leaves the sre preset as it was", () => {
    expect(Object.isFrozen(client)).toBe(true);
    expect(new Breaker(client).policy).toEqual(client);
    expect(client.halfOpen).toBe(true);
    expect(sre.halfOpen).toBe(false);
    expect(new Breaker().policy).toEqual(sre);
  });

  describe.each([
    ["near 0", 0],
    ["near Date.now()", EPOCH],
  ])("on an outage, on a clock %s", (_, origin) => {
    // Each policy's runs, by end time then seed, made once on first use.
    const cache = new Map<string, Figures[][]>();
    const runs = (name: string, make: Parameters<typeof outage>[0]): Figures[][] => {
      let got = cache.get(name);
      if (got === undefined) {
        got = ENDS.map((to) => SEEDS.map((seed) => outage(make, seed, to, origin)));
        cache.set(name, got);
      }
      return got;
    };
    const classicRuns = (): Figures[][] => runs("classic", () => classic());
    const clientRuns = (): Figures[][] => runs("client", (at, roll) => adaptive(client, at, roll));
    // The refusal target: twice the classic breaker's mean at the same end time.
    const limit = (): number[] =>
      classicRuns().map((rows) => (2 * rows.reduce((s, r) => s + r.refusedUp, 0)) / rows.length);

    it("the classic breaker's refusals hinge on where the outage ends", () => {
      // Ending on one of its 5 s open periods (80 s) its probe finds the backend up at once; a
      // second later it waits out nearly a whole open period.
      expect(limit()[1]).toBeGreaterThan(4 * limit()[0]);
      expect(
        classicRuns()
          .flat()
          .every((r) => r.reached < 0.01),
      ).toBe(true);
    });

    it("lets at most 5 % of outage calls through, is back within 2 s and refuses under twice the classic's", () => {
      const missed = clientRuns().flatMap((rows, e) =>
        rows
          .map((r, s) => ({ end: ENDS[e], seed: SEEDS[s], ...r }))
          .filter((r) => !(r.reached <= 0.05 && r.recovery <= 2 && r.refusedUp <= limit()[e])),
      );
      expect(missed).toEqual([]);
    });

    it("where the sre preset misses every target on every run", () => {
      const rows = runs("sre", (at, roll) => adaptive(sre, at, roll)).flat();
      expect(rows.filter((r) => r.reached <= 0.05 || r.recovery <= 2)).toEqual([]);
      expect(Math.min(...rows.map((r) => r.refusedUp))).toBeGreaterThan(limit()[0]);
    });

    it("and the same numbers never half-open trickle more than 5 % of the outage's calls into it", () => {
      const plain = runs("plain", (at, roll) => adaptive({ ...client, halfOpen: false }, at, roll)).flat();
      const mean = (rows: Figures[], f: (r: Figures) => number): number =>
        rows.reduce((s, r) => s + f(r), 0) / rows.length;
      const half = clientRuns().flat();
      // Protection 5 in a window of 75 calls: (5 + 1) / 76 of them at random, besides the probes.
      expect(plain.filter((r) => r.reached <= 0.05)).toEqual([]);
      expect(mean(plain, (r) => r.reached)).toBeGreaterThan(1.5 * mean(half, (r) => r.reached));
      expect(mean(plain, (r) => r.refusedUp)).toBeGreaterThan(mean(half, (r) => r.refusedUp));
    });
  });
});
