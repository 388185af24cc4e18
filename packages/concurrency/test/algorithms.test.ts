import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { AimdLimit, FixedLimit, Gradient2Limit, VegasLimit, aimd, gradient2, vegas } from "@tideward/concurrency";
import { aimdModel, gradient2Model, vegasModel } from "./reference";
import type { Model, Sample } from "./reference";

describe("the presets are the source's constants", () => {
  it("AIMD: 20 from 20 to 200, times 0.9, a 5 s timeout", () => {
    expect(aimd).toEqual({ initial: 20, min: 20, max: 200, backoff: 0.9, timeout: 5_000 });
    expect(new AimdLimit().policy).toBe(aimd);
  });
  it("Vegas: 20 up to 1000 (down to 1), alpha 3, beta 6, threshold 1, no smoothing, probe 30", () => {
    expect(vegas).toEqual({
      initial: 20,
      min: 1,
      max: 1_000,
      smoothing: 1,
      alpha: 3,
      beta: 6,
      threshold: 1,
      probe: 30,
      seed: 0,
      drain: 0,
      grow: 0,
    });
  });
  it("Gradient2: 20 from 20 to 200, smoothing 0.2, queue 4, 600 samples long, tolerance 1.5", () => {
    expect(gradient2).toEqual({ initial: 20, min: 20, max: 200, smoothing: 0.2, queue: 4, long: 600, tolerance: 1.5 });
    expect([aimd, vegas, gradient2].every((p) => Object.isFrozen(p))).toBe(true);
  });
});

describe("AimdLimit", () => {
  it("grows by one for a call that found half the limit in flight, not for one that found less", () => {
    const l = new AimdLimit({ initial: 10, min: 1 });
    l.sample(5, 4, false); // 4 × 2 < 10: app-limited
    expect(l.limit).toBe(10);
    l.sample(5, 5, false);
    expect(l.limit).toBe(11);
  });

  it("multiplies by the backoff on a drop or a round trip over the timeout, rounding down", () => {
    const l = new AimdLimit({ initial: 100, min: 1, max: 100 });
    l.sample(Number.NaN, 0, true); // a drop with no round trip still counts
    expect(l.limit).toBe(90);
    l.sample(5_001, 1, false); // slower than 5 s: a drop
    expect(l.limit).toBe(81);
    l.sample(5_000, 81, false); // exactly the timeout is not over it
    expect(l.limit).toBe(82);
    l.sample(100, 82, false);
    l.sample(100, 82, false); // max 100 caps nothing yet
    expect(l.limit).toBe(84);
  });

  it("stays within [min, max]", () => {
    const l = new AimdLimit({ initial: 20, min: 18, max: 21, backoff: 0.5 });
    l.sample(1, 0, true);
    expect(l.limit).toBe(18);
    for (let i = 0; i < 10; i++) l.sample(1, 100, false);
    expect(l.limit).toBe(21);
  });

  it("makes no sample of a pass whose round trip is unknown", () => {
    const l = new AimdLimit({ initial: 10, min: 1 });
    for (const rtt of [Number.NaN, -1, "5" as unknown as number]) l.sample(rtt, 100, false);
    l.sample(5, "100" as unknown as number, false);
    expect(l.limit).toBe(10);
  });
});

describe("VegasLimit", () => {
  it("takes the first round trip, and any lower one, as the no-load baseline without moving", () => {
    const l = new VegasLimit({ initial: 10 });
    l.sample(20, 10, false);
    expect([l.noLoad, l.limit]).toEqual([20, 10]);
    l.sample(8, 10, false);
    expect([l.noLoad, l.limit]).toEqual([8, 10]);
  });

  it("reads queue = ceil(estimate × (1 − noLoad / rtt)) against threshold, alpha and beta (times the log10 step)", () => {
    const at = (rtt: number): number => {
      const l = new VegasLimit({ initial: 50, smoothing: 1 });
      l.sample(10, 50, false); // baseline 10 ms
      l.sample(rtt, 50, false);
      return l.estimate;
    };
    // step log10(50) → 1: queue ≤ 1 grows by beta = 6; < 3 by 1; > 6 shrinks by 1; else holds.
    expect(at(10)).toBe(56); // queue 0
    expect(at(10.2)).toBe(56); // ceil(50 × 0.0196) = 1
    expect(at(10.3)).toBe(51); // ceil(1.46) = 2 < 3
    expect(at(10.5)).toBe(50); // ceil(2.38) = 3: between alpha and beta
    expect(at(11)).toBe(50); // ceil(4.55) = 5: between alpha and beta
    expect(at(12)).toBe(49); // ceil(8.33) = 9 > 6
  });

  it("grows and shrinks by the log10 step of the limit, and by beta steps when nothing queues", () => {
    const l = new VegasLimit({ initial: 200 });
    l.sample(10, 200, false);
    l.sample(10, 200, false); // step 2 (log10 200): beta × 2 = 12
    expect(l.limit).toBe(212);
    l.sample(Number.NaN, 0, true); // a drop with no round trip: − step
    expect(l.limit).toBe(210);
  });

  it("holds when the calls in flight are under half the estimate, unless a drop", () => {
    const l = new VegasLimit({ initial: 50 });
    l.sample(10, 50, false);
    l.sample(10, 24, false);
    expect(l.limit).toBe(50);
    l.sample(10, 24, true);
    expect(l.limit).toBe(49);
  });

  it("probes after probe × estimate × jitter samples: the next round trip becomes the baseline", () => {
    // seed 0: the first jitter is 0.5, so with an estimate held at 10 the probe is the 150th sample.
    const l = new VegasLimit({ initial: 10, max: 10, probe: 30 });
    l.sample(10, 1, false);
    for (let i = 2; i < 150; i++) l.sample(50, 1, false); // app-limited: the estimate stays 10
    expect(l.noLoad).toBe(10);
    l.sample(50, 1, false); // sample 150: the probe
    expect(l.noLoad).toBe(50);
  });

  it("is probing from a probe until a lower round trip replaces the probe's baseline", () => {
    const l = new VegasLimit({ initial: 10, max: 10, probe: 30 });
    l.sample(10, 1, false); // the first round trip: a baseline, not a probe
    expect(l.probing).toBe(false);
    for (let i = 2; i < 150; i++) l.sample(50, 1, false);
    expect(l.probing).toBe(false);
    l.sample(50, 1, false); // sample 150: the probe
    expect(l.probing).toBe(true);
    l.sample(60, 1, false); // higher: the probe's baseline stays
    l.sample(50, 1, false); // equal: still the probe's
    expect(l.probing).toBe(true);
    expect(l.noLoad).toBe(50);
    l.sample(49, 1, false); // lower: a measured baseline again
    expect(l.probing).toBe(false);
    expect(l.noLoad).toBe(49);
  });

  it("never probes with AIMD, Gradient2 or a fixed limit", () => {
    const limits = [new AimdLimit({ min: 1 }), new Gradient2Limit({ min: 1 }), new FixedLimit(5)];
    for (const l of limits) {
      for (let i = 0; i < 5_000; i++) l.sample(10 + (i % 7) * 20, 50, i % 97 === 0);
      expect(l.probing).toBe(false);
    }
  });

  it("spreads the probes of instances with different seeds", () => {
    const firstProbe = (seed: number): number => {
      const l = new VegasLimit({ initial: 10, max: 10, seed });
      l.sample(10, 1, false);
      for (let n = 2; n < 1_000; n++) {
        l.sample(50, 1, false);
        if (l.noLoad === 50) return n;
      }
      return -1;
    };
    const at = [0, 0.25, 0.5, 0.75].map(firstProbe);
    expect(at).toEqual([150, 188, 225, 263]);
  });

  it("makes no sample of a round trip of 0 ms", () => {
    const l = new VegasLimit({ initial: 10 });
    l.sample(0, 10, false);
    expect(l.noLoad).toBeNaN();
    expect(l.limit).toBe(10);
  });
});

describe("VegasLimit's opt-in drain and grow", () => {
  // One sample at a time against a 10 ms baseline, the limit's step s = 1 (under 100 places).
  const after = (policy: Partial<typeof vegas>, rtts: readonly number[], inflight = 1_000): number[] => {
    const l = new VegasLimit({ initial: 50, ...policy });
    l.sample(10, inflight, false);
    return rtts.map((rtt) => {
      l.sample(rtt, inflight, false);
      return l.estimate;
    });
  };

  it("drains the excess queue over alpha in proportion: estimate − max(s, drain × (queue − alpha × s))", () => {
    // rtt 20: queue = ceil(50 × (1 − 10/20)) = 25 > beta 6; the excess over alpha 3 is 22.
    expect(after({}, [20])).toEqual([49]); // the preset: one step
    expect(after({ drain: 1 }, [20])).toEqual([28]); // 25 in service + alpha 3
    expect(after({ drain: 0.5 }, [20])).toEqual([39]); // 50 − 11
    expect(after({ drain: 0.01 }, [20])).toEqual([49]); // 0.22 under the step: the step
    // A queue within [alpha, beta] holds, drain or not: ceil(50 × (1 − 10/11)) = 5.
    expect(after({ drain: 1 }, [11])).toEqual([50]);
  });

  it("grows by grow × estimate × room² from the third sample in a row under alpha", () => {
    // Nothing queues (room 1): the preset grows by beta 6 each time; grow 0.5 leaps from the third.
    expect(after({}, [10, 10, 10, 10])).toEqual([56, 62, 68, 74]);
    expect(after({ grow: 0.5 }, [10, 10, 10, 10])).toEqual([56, 62, 93, 139.5]);
    // A queue of 1 (≤ threshold, room 2/3): the third leaps by 0.5 × 62 × 4/9 = 13.78 (over 6).
    const [, , third] = after({ grow: 0.5 }, [10.1, 10.1, 10.1]);
    expect(third).toBeCloseTo(62 + (0.5 * 62 * 4) / 9, 10);
    // A queue of 2 (room 1/3) grows by the step of 1; a queue of 3 (within [alpha, beta]) holds
    // and breaks the streak; the third after it leaps by 0.5 × 54 × 1/9 = 3.
    const near = after({ grow: 0.5 }, [10.3, 10.3, 10.5, 10.3, 10.3, 10.3]);
    expect(near.slice(0, 5)).toEqual([51, 52, 52, 53, 54]);
    expect(near[5]).toBeCloseTo(57, 10);
  });

  it("starts the streak again after a drop, a sample that found under half in flight, or a probe's baseline", () => {
    const l = new VegasLimit({ initial: 50, max: 1_000, grow: 1 });
    l.sample(10, 100, false);
    l.sample(10, 100, false); // 56: first under alpha
    l.sample(10, 100, true); // a drop: 55, the streak gone
    l.sample(10, 100, false); // 61
    l.sample(10, 10, false); // under half in flight: holds, the streak gone
    l.sample(10, 100, false); // 67
    l.sample(10, 100, false); // 73: second in a row
    expect(l.estimate).toBe(73);
    l.sample(10, 100, false); // third in a row: 73 + 1 × 73 × 1
    expect(l.estimate).toBe(146);
  });

  it("leaps only on a sample that found the limit full: one that does not bind grows by the preset's step", () => {
    // Three samples in a row with nothing queued; the third found 55 of 62 places in flight.
    const l = new VegasLimit({ initial: 50, grow: 1 });
    l.sample(10, 50, false);
    l.sample(10, 50, false); // 56
    l.sample(10, 56, false); // 62
    l.sample(10, 55, false); // under the limit of 62, at least half: + beta 6
    expect(l.estimate).toBe(68);
    l.sample(10, 68, false); // full: 68 + 1 × 68 × 1
    expect(l.estimate).toBe(136);
  });

  it("makes no leap on a probe's own baseline", () => {
    // seed 0, estimate held at 10: the probe is the 150th sample.
    const seen: number[] = [];
    const probed = new VegasLimit({ initial: 10, max: 100, probe: 30, grow: 1 });
    probed.sample(10, 10, false);
    for (let i = 2; i < 150; i++) probed.sample(50, 1, false);
    probed.sample(50, 1, false); // the probe: baseline 50
    expect([probed.probing, probed.noLoad]).toEqual([true, 50]);
    for (let i = 0; i < 4; i++) {
      probed.sample(50, 100, false); // no queue against the probe's baseline
      seen.push(probed.estimate);
    }
    expect(probed.probing).toBe(true);
    expect(seen).toEqual([16, 22, 28, 34]); // beta × s each, never a leap
  });

  it("leaves the preset's trace unchanged at drain 0 and grow 0", () => {
    const rtts = [10, 12, 20, 10, 10, 10, 10, 11, 30, 10.2];
    expect(after({ drain: 0, grow: 0 }, rtts)).toEqual(after({}, rtts));
  });
});

describe("Gradient2Limit", () => {
  it("averages the first ten round trips, then weighs each new one 2 / (long + 1)", () => {
    const l = new Gradient2Limit({ long: 9, min: 1, initial: 1 });
    for (const rtt of [10, 20, 30, 40, 50, 60, 70, 80, 90, 100]) l.sample(rtt, 0, false);
    expect(l.long).toBeCloseTo(55, 12);
    l.sample(155, 0, false); // weight 2 / 10
    expect(l.long).toBeCloseTo(55 * 0.8 + 155 * 0.2, 12);
  });

  it("holds while the round trip stays within the tolerance, growing by smoothing × queue", () => {
    const l = new Gradient2Limit({ initial: 50, min: 1 });
    l.sample(10, 50, false);
    expect(l.estimate).toBeCloseTo(50 + 0.2 * 4, 12);
    l.sample(15, 51, false); // long 12.5; 1.5 × 12.5 / 15 > 1: gradient 1
    expect(l.estimate).toBeCloseTo(50.8 + 0.8, 12);
  });

  it("shrinks by at most half a step as round trips grow past the tolerance", () => {
    const l = new Gradient2Limit({ initial: 100, min: 1, max: 200 });
    for (let i = 0; i < 10; i++) l.sample(10, 100, false);
    const before = l.estimate;
    l.sample(1_000, 100, false); // gradient floors at 0.5
    expect(l.estimate).toBeCloseTo(before * 0.8 + (before * 0.5 + 4) * 0.2, 9);
  });

  it("cuts the long-term round trip by 5 % while it is over twice the latest", () => {
    const l = new Gradient2Limit({ initial: 20, long: 600 });
    for (let i = 0; i < 10; i++) l.sample(100, 0, false);
    l.sample(10, 0, false);
    const w = 2 / 601;
    expect(l.long).toBeCloseTo((100 * (1 - w) + 10 * w) * 0.95, 9);
  });

  it("reads no drop flag, and makes no sample without a round trip above 0", () => {
    const l = new Gradient2Limit({ initial: 50, min: 1 });
    l.sample(Number.NaN, 50, true);
    l.sample(0, 50, true);
    expect([l.estimate, l.long]).toEqual([50, Number.NaN]);
    l.sample(10, 50, true); // a drop with a round trip is a sample like any other
    expect(l.estimate).toBeCloseTo(50.8, 12);
  });
});

describe("FixedLimit", () => {
  it("never moves", () => {
    const l = new FixedLimit(3);
    l.sample(1, 3, false);
    l.sample(1e9, 3, true);
    expect([l.limit, l.estimate, l.kind]).toEqual([3, 3, "fixed"]);
  });
});

// Samples as a limiter makes them: a round trip (sometimes unknown or 0), what was in flight, a drop.
const samples = fc.array(
  fc.record({
    rtt: fc.oneof(
      { weight: 8, arbitrary: fc.double({ min: 0.001, max: 10_000, noNaN: true }) },
      { weight: 1, arbitrary: fc.constantFrom(0, Number.NaN) },
    ),
    inflight: fc.integer({ min: 0, max: 1_200 }),
    dropped: fc.boolean(),
  }),
  { maxLength: 400 },
);

function agrees(make: () => { limit: number; sample(r: number, i: number, d: boolean): void }, model: () => Model) {
  fc.assert(
    fc.property(samples, (run: Sample[]) => {
      const l = make();
      const m = model();
      for (const s of run) {
        l.sample(s.rtt, s.inflight, s.dropped);
        m.sample(s);
        expect(l.limit).toBe(m.limit);
      }
    }),
    { numRuns: 200 },
  );
}

describe("each algorithm follows its formulas sample by sample (a plain model of the source)", () => {
  it("AIMD", () =>
    agrees(
      () => new AimdLimit({ min: 1 }),
      () => aimdModel({ ...aimd, min: 1 }),
    ));
  it("Vegas", () => {
    for (const seed of [0, 0.3]) {
      const p = { ...vegas, seed, probe: 3, smoothing: 0.7 };
      agrees(
        () => new VegasLimit(p),
        () => vegasModel(p),
      );
    }
  });
  it("Gradient2", () =>
    agrees(
      () => new Gradient2Limit({ min: 1, long: 20 }),
      () => gradient2Model({ ...gradient2, min: 1, long: 20 }),
    ));
});

describe("the limit stays within [min, max], whatever the samples", () => {
  it("for every algorithm and bounds", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 300 }),
        fc.integer({ min: 0, max: 300 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        samples,
        (min, span, at, run) => {
          const max = min + span;
          const initial = min + Math.floor(at * span);
          const limits = [
            new AimdLimit({ min, max, initial }),
            new VegasLimit({ min, max, initial }),
            new Gradient2Limit({ min, max, initial }),
          ];
          for (const s of run)
            for (const l of limits) {
              l.sample(s.rtt, s.inflight, s.dropped);
              expect(l.limit).toBeGreaterThanOrEqual(min);
              expect(l.limit).toBeLessThanOrEqual(max);
              expect(Number.isInteger(l.limit)).toBe(true);
            }
        },
      ),
      { numRuns: 150 },
    );
  });
});
