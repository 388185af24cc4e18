// Whole runs of simulated traffic: a healthy backend, a dead one, one that recovers. Time is a
// loop variable and rolls come from a seeded source, so every count below is exact and repeatable.
import { describe, expect, it } from "vitest";
import { Breaker } from "@tideward/breaker";
import { seededRandom } from "@tideward/time";
import type { Random } from "@tideward/time";

interface Run {
  /** When each call was let through (ms). */
  passed: number[];
  /** When each call was refused (ms). */
  refused: number[];
}

/**
 * Offers `rate` calls a second from `from` to `to` (ms); `ok(t, i)` says whether the backend
 * serves the i-th call let through at t. Each call settles at the instant it was let through.
 */
function drive(
  b: Breaker,
  roll: Random,
  rate: number,
  from: number,
  to: number,
  ok: (t: number, i: number) => boolean,
  run: Run = { passed: [], refused: [] },
): Run {
  const step = 1_000 / rate;
  for (let n = 0; from + n * step < to; n++) {
    const t = from + n * step;
    const permit = b.allow(t, roll());
    if (permit === undefined) {
      run.refused.push(t);
      continue;
    }
    if (ok(t, run.passed.length)) permit.pass(t);
    else permit.fail(t);
    run.passed.push(t);
  }
  return run;
}

const inRange = (ts: number[], from: number, to: number): number => ts.filter((t) => t >= from && t < to).length;

describe("a healthy backend", () => {
  it("is never refused", () => {
    const run = drive(new Breaker(), seededRandom(1), 100, 0, 60_000, () => true);
    expect(run.refused.length).toBe(0);
    expect(run.passed.length).toBe(6_000);
  });

  it("is never refused while under a third of its calls fail (k = 1.5)", () => {
    // Three calls in ten fail, spread evenly, at three traffic levels.
    for (const rate of [5, 100, 1_000]) {
      const run = drive(new Breaker(), seededRandom(rate), rate, 0, 30_000, (_, i) => i % 10 >= 3);
      expect(run.refused.length).toBe(0);
    }
  });

  it("is one no longer with half its calls failing: that is throttled", () => {
    // Over a third failing is more than k = 1.5 excuses: the throttle starts within seconds.
    const run = drive(new Breaker(), seededRandom(3), 100, 0, 30_000, (_, i) => i % 2 === 0);
    expect(inRange(run.refused, 10_000, 30_000)).toBeGreaterThan(1_000);
  });
});

describe("a dead backend", () => {
  it("with every roll at 0, gets its first calls under protection and then exactly one probe per second", () => {
    const b = new Breaker();
    const run = drive(
      b,
      () => 0,
      100,
      0,
      30_000,
      () => false,
    );
    // Calls at 0–50 ms pass (the drop is at or under 0 until six calls are in the window); from
    // then on every roll falls under the drop, and only the probe gets through, 1 000 ms after
    // the last call that did.
    const probes = Array.from({ length: 29 }, (_, i) => 1_050 + i * 1_000);
    expect(run.passed).toEqual([0, 10, 20, 30, 40, 50, ...probes]);
  });

  it("is refused more and more as failures fill the window", () => {
    const b = new Breaker();
    const roll = seededRandom(11);
    const ratios: number[] = [];
    const run: Run = { passed: [], refused: [] };
    for (let s = 0; s < 12; s++) {
      drive(b, roll, 10, s * 1_000, (s + 1) * 1_000, () => false, run);
      ratios.push(b.ratio((s + 1) * 1_000 - 1));
    }
    // The standing throttle only grows while the window fills (10 s), then holds.
    for (let i = 1; i < ratios.length; i++) expect(ratios[i]).toBeGreaterThanOrEqual(ratios[i - 1] ?? 0);
    expect(ratios[0]).toBeGreaterThan(0.3);
    expect(ratios[9]).toBeGreaterThan(0.9);
    expect(ratios[9]).toBeLessThan(1);
    // And so do the refusals: more in the second half of the first ten seconds than the first.
    expect(inRange(run.refused, 5_000, 10_000)).toBeGreaterThan(inRange(run.refused, 0, 5_000));
  });

  it("still receives a call about once per probe, never waiting longer than the probe", () => {
    const b = new Breaker();
    const run = drive(b, seededRandom(5), 100, 0, 60_000, () => false);
    const steady = run.passed.filter((t) => t >= 10_000);
    // A call at least every second (the probe), and not many more: most of the traffic is refused.
    let longest = 0;
    for (let i = 1; i < steady.length; i++) longest = Math.max(longest, (steady[i] ?? 0) - (steady[i - 1] ?? 0));
    expect(longest).toBeLessThanOrEqual(1_000);
    expect(steady.length).toBeGreaterThanOrEqual(50);
    expect(steady.length).toBeLessThan(150); // of 5 000 calls offered
  });

  it("gets no probe with probe: Infinity", () => {
    const run = drive(
      new Breaker({ probe: Infinity }),
      () => 0,
      100,
      0,
      30_000,
      () => false,
    );
    expect(run.passed).toEqual([0, 10, 20, 30, 40, 50]);
  });

  it.each([0, 1_700_000_000_000.375])(
    "with probe: Infinity and halfOpen off (the one breaker with no probe) still recovers, at a clock of %d",
    (t0) => {
      // A 5 s outage, then healthy traffic: the formula lets (protection + 1) / (total + 1) of
      // the calls through at random, and the first successes lift the throttle (halfOpen on with
      // no probe is refused at construction: it would refuse every call of the 55 s after).
      const run = drive(
        new Breaker({ probe: Infinity }, t0),
        seededRandom(3),
        100,
        t0,
        t0 + 60_000,
        (t) => t >= t0 + 5_000,
      );
      const after = run.passed.filter((t) => t >= t0 + 5_000);
      expect(after.length).toBeGreaterThan(0);
      // Within a window (10 s) of the outage's end, nothing is refused any more.
      expect(run.refused.filter((t) => t >= t0 + 15_000)).toEqual([]);
    },
  );

  it("with a shorter probe is probed more often", () => {
    const run = drive(
      new Breaker({ probe: 250 }),
      () => 0,
      100,
      0,
      10_000,
      () => false,
    );
    expect(inRange(run.passed, 1_000, 10_000)).toBe(36);
  });
});

describe("a backend that recovers", () => {
  // Healthy for 10 s, down for 20 s, healthy again from 30 s.
  const up = (t: number): boolean => t < 10_000 || t >= 30_000;

  it("is refused less and less, and the failures stop counting within one window", () => {
    for (const rate of [20, 100]) {
      for (let seed = 1; seed <= 4; seed++) {
        const b = new Breaker();
        const run = drive(b, seededRandom(seed), rate, 0, 60_000, (t) => up(t));
        expect(inRange(run.refused, 20_000, 30_000)).toBeGreaterThan(rate * 10 * 0.8); // well refused while down
        // One window after recovery every failure has left: what is left of the throttle is the
        // refusals recorded while recovering (a refusal counts as traffic), and the run of
        // all-success buckets scales that down to a few percent.
        expect(b.ratio(40_000)).toBeLessThan(0.15);
        const firstAfter = inRange(run.refused, 30_000, 35_000);
        const secondAfter = inRange(run.refused, 35_000, 40_000);
        expect(secondAfter).toBeLessThan(firstAfter);
        expect(inRange(run.refused, 40_000, 60_000)).toBeLessThan(rate * 0.5); // a handful, in the next second or two
        expect(inRange(run.refused, 43_000, 60_000)).toBe(0);
        expect(b.ratio(60_000)).toBe(0);
      }
    }
  });
});

describe("how soon refusals stop after a recovery", () => {
  // Healthy for 10 s, down for 20 s, healthy again from 30 s; 40 buckets of 250 ms.
  const up = (t: number): boolean => t < 10_000 || t >= 30_000;
  const width = 250;

  it("refuses only while its window holds a bucket in which a call failed or none succeeded", () => {
    // With every bucket of the window holding successes and no failure, the working run spans
    // the window and scales the drop to zero. So each refusal after the recovery must find, among
    // the buckets before its own, one that failed or had no success, or its own bucket must not
    // have seen a success yet. Hence refusals stop about one window after the last such bucket.
    for (const probe of [1_000, 250]) {
      for (const rate of [5, 20, 100, 1_000]) {
        for (let seed = 1; seed <= 5; seed++) {
          const run = drive(new Breaker({ probe }), seededRandom(seed), rate, 0, 60_000, (t) => up(t));
          const success = new Set<number>();
          const failure = new Set<number>();
          for (const t of run.passed) (up(t) ? success : failure).add(Math.floor(t / width));
          const late = run.refused.filter((t) => t >= 30_000);
          expect(late.length).toBeGreaterThan(0); // the recovery was throttled at first
          const unexplained = late.filter((t) => {
            const head = Math.floor(t / width);
            for (let i = head - 39; i < head; i++) if (failure.has(i) || !success.has(i)) return false;
            return run.passed.some((p) => p >= head * width && p < t && up(p));
          });
          expect(unexplained).toEqual([]);
        }
      }
    }
  });

  it("with the preset, a refused-only bucket early in the recovery can stretch that past one window", () => {
    // The probe passes one call a second, and early on nearly every other call is refused, so
    // some buckets of the first seconds hold only refusals; each keeps the throttle alive until
    // it ages out, a window later. This is the exact formula's behaviour (go-zero's too).
    let longest = 0;
    for (const rate of [20, 100]) {
      for (let seed = 1; seed <= 5; seed++) {
        const run = drive(new Breaker(), seededRandom(seed), rate, 0, 60_000, (t) => up(t));
        longest = Math.max(longest, ...run.refused.filter((t) => t >= 30_000).map((t) => t - 30_000));
      }
    }
    expect(longest).toBeGreaterThan(10_000);
    expect(longest).toBeLessThan(13_000);
  });

  it("with a probe no longer than a bucket, refusals end within one window of recovery", () => {
    // A call let through every bucket leaves no refused-only bucket behind, so the working run
    // grows one bucket at a time from the recovery and spans the window a window later.
    for (const rate of [5, 20, 100, 1_000]) {
      for (let seed = 1; seed <= 10; seed++) {
        const run = drive(new Breaker({ probe: width }), seededRandom(seed), rate, 0, 60_000, (t) => up(t));
        const late = run.refused.filter((t) => t >= 30_000);
        expect(run.refused.filter((t) => t >= 20_000 && t < 30_000).length).toBeGreaterThan(rate * 10 * 0.3); // throttled while down
        if (late.length > 0) expect(Math.max(...late)).toBeLessThan(40_000);
      }
    }
  });
});

describe("Permit", () => {
  it("settles once: later settles are ignored", () => {
    const b = new Breaker();
    const permits = Array.from({ length: 10 }, () => b.allow(0, 0.5));
    for (const p of permits) p?.fail(0);
    const after = b.ratio(0); // 10 failures: 5/11
    expect(after).toBeCloseTo(5 / 11, 12);
    for (const p of permits) {
      p?.fail(0);
      p?.pass(0);
    }
    expect(b.ratio(0)).toBe(after);
    expect(permits.every((p) => p?.settled === true)).toBe(true);
  });

  it("leaves no record until settled, and pass and fail count as themselves", () => {
    const b = new Breaker();
    const held = Array.from({ length: 20 }, () => b.allow(0, 0.5));
    expect(held.every((p) => p !== undefined && !p.settled)).toBe(true);
    expect(b.ratio(0)).toBe(0);
    for (const p of held.slice(0, 6)) p?.fail(0);
    expect(b.ratio(0)).toBeCloseTo(1 / 7, 12);
    held[6]?.pass(0); // total 7, accepts 1: (7 − 5 − 1.5)/8, mixed bucket so no scaling
    expect(b.ratio(0)).toBeCloseTo(0.5 / 8, 12);
  });

  it("records a settle at a later now in the bucket it finished in", () => {
    const b = new Breaker();
    const early = Array.from({ length: 10 }, () => b.allow(0, 0.5));
    for (const p of early) p?.fail(9_000); // finished 9 s later: still in the window at 18 s
    expect(b.ratio(18_000)).toBeCloseTo(5 / 11, 12);
    expect(b.ratio(19_250)).toBe(0); // and gone a window after they finished
  });
});

describe("the same traffic on a real clock", () => {
  // performance.now() and Date.now() magnitudes, fractional; a whole run shifted there, with the
  // same rolls, must make the same decisions at the same offsets. The origins are such that
  // origin + 10·n is exact, so the shifted run is the same traffic (at Date.now() magnitudes
  // every double is on a grid of 2^-12 ms or coarser, so any origin there is); from an origin
  // like 1234.567, `origin + 10·n` rounds, and "1000 ms since the last call let through" is
  // decided on the readings as they are.
  const origins = [1_234.5625, 987_654.3125, 1_700_000_000_000.1, 9_999_999_999_999.3];

  it.each(origins)("makes the decisions it makes from 0 when started at %d", (origin) => {
    const offsets = (run: Run, from: number): [number[], number[]] => [
      run.passed.map((t) => t - from),
      run.refused.map((t) => t - from),
    ];
    const failingHalf = (_: number, i: number): boolean => i % 2 === 0;
    const at0 = drive(new Breaker({}, 0), seededRandom(3), 100, 0, 30_000, failingHalf);
    const there = drive(new Breaker({}, origin), seededRandom(3), 100, origin, origin + 30_000, failingHalf);
    expect(offsets(there, origin)).toEqual(offsets(at0, 0));
    // Dead, with every roll at 0: the same probes, one a second.
    const dead0 = drive(
      new Breaker({}, 0),
      () => 0,
      100,
      0,
      10_000,
      () => false,
    );
    const dead = drive(
      new Breaker({}, origin),
      () => 0,
      100,
      origin,
      origin + 10_000,
      () => false,
    );
    expect(offsets(dead, origin)).toEqual(offsets(dead0, 0));
  });

  it("makes them on a clock that was never told where it started", () => {
    // new Breaker() opens its window at 0; the first call comes at Date.now() scale.
    const origin = 1_700_000_000_000.1;
    const at0 = drive(new Breaker({}, 0), seededRandom(7), 100, 0, 30_000, (_, i) => i % 3 === 0);
    const late = drive(new Breaker(), seededRandom(7), 100, origin, origin + 30_000, (_, i) => i % 3 === 0);
    expect(late.refused.length).toBe(at0.refused.length);
    expect(late.passed.length).toBe(at0.passed.length);
  });
});
