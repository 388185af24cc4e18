// Bad input is refused where it is given, naming the path the user typed and the value: never a
// raw TypeError from deep inside, a stack overflow, or a figure that cannot be (a negative time).
// A scenario's definition and knobs are refused in define-scenario.test.ts, an option given as
// null in null-options.test.ts.
import { describe, expect, it } from "vitest";
import {
  breakerBrownout,
  breakerOutage,
  FailureSchedule,
  catalogue,
  failures,
  herdRecovery,
  policy,
  quotaBursts,
  retryAmplification,
  simulate,
  sweep,
  traffic,
} from "@tideward/sim";
import type { PolicySpec } from "@tideward/sim";
import { STARTS, apiLimit } from "./helpers";

describe("store faults skew", () => {
  it("200 000 instances are refused by count, where spreading them overflowed the stack", () => {
    expect(() => policy.quota({ dimensions: apiLimit, faults: { skew: new Array(200_000).fill(0) } })).toThrow(
      /^policy\.quota faults skew lists 200 000 instances; a store is called from at most 1 024$/,
    );
  });

  it("a skew that is not an array is refused naming it", () => {
    expect(() => policy.quota({ dimensions: apiLimit, faults: { skew: 5 as never } })).toThrow(
      /^policy\.quota faults skew must be an array of clock offsets \(ms\), one per instance, got 5$/,
    );
  });

  it("1 024 instances are taken, and their clocks' spread bounds what the envelope allows", () => {
    const skew = Array.from({ length: 1_024 }, (_, i) => i % 3);
    const r = simulate({
      duration: 5_000,
      traffic: traffic.poisson({ rate: 40 }),
      invariants: true,
      policies: [policy.quota({ dimensions: apiLimit, faults: { skew } })],
    });
    expect(r.summary.calls).toBeGreaterThan(100);
  });
});

describe("sweep", () => {
  it("refuses what is not a scenario, or a knob that is not a name", () => {
    expect(() => sweep(null as never, "rate")).toThrow(
      /^sweep scenario must be a scenario \(from the catalogue, or defineScenario\), got null$/,
    );
    expect(() => sweep(breakerOutage, 5 as never)).toThrow(/^sweep knob must be a knob's name, got 5$/);
  });
});

describe("latency quantiles past 2^30 ms", () => {
  it.each([1e9, 1e10, 1e11, 2 ** 43])("every latency %d ms reads within 1.6 % at p50, p95 and p99", (l) => {
    const r = simulate({
      duration: 1_000,
      step: 1_000,
      traffic: traffic.constant({ rate: 10 }),
      backend: { latency: l },
    });
    const { p50, p95, p99, max } = r.summary.latency;
    expect(max).toBe(l);
    for (const q of [p50, p95, p99]) expect(Math.abs((q as number) - l) / l).toBeLessThan(0.016);
  });
});

describe("scenarios with trouble outside their run", () => {
  it.each<[string, () => { figures: Record<string, number> }]>([
    [
      "breaker-outage past its duration",
      () => breakerOutage.run({ outageFrom: 3_000, outageTo: 3_600, duration: 30, spreadSeeds: 0 }),
    ],
    ["herd-recovery ending as the run does", () => herdRecovery.run({ outageFrom: 5, outageTo: 10, duration: 10 })],
    ["breaker-brownout past its duration", () => breakerBrownout.run({ from: 5, to: 20, duration: 10 })],
  ])("%s: runs, with every figure finite and no recovery to measure read as 0 seconds, never negative", (_, act) => {
    const f = act().figures;
    expect(Object.values(f).every((v) => Number.isFinite(v))).toBe(true);
    expect(f["tideward.recoverySeconds"] ?? 0).toBe(0);
  });

  it("a start past the clock's range names the scenario's start, not simulate's", () => {
    expect(() => quotaBursts.run({}, { start: 2 ** 50 })).toThrow(
      /^scenario quota-bursts start \(ms\) must be within ±8796093022208 .+, got 1125899906842624$/,
    );
  });

  const LIMIT = 2 ** 43;
  const PAST =
    /must end the run within 8796093022208 ms of the epoch \(2\^43, where the clock still resolves a microsecond\): start .+ is past it$/;

  it.each(catalogue.map((s) => [s.name, s] as const))(
    "%s: a valid start whose run would end past 2^43 ms names the scenario's start, not simulate's duration",
    (name, s) => {
      let e: unknown;
      try {
        s.run({}, { start: LIMIT - 0.5 });
      } catch (thrown) {
        e = thrown;
      }
      if (!(e instanceof RangeError)) throw new Error(`expected a RangeError, got ${String(e)}`);
      expect(e.message).toMatch(new RegExp(`^scenario ${name} start \\(ms\\)`));
      expect(e.message).toMatch(PAST);
      expect(e.message).not.toMatch(/simulate/);
      const duration = s.defaults.duration;
      if (duration !== undefined)
        expect(e.message).toContain(
          ` and duration (s) must end the run within 8796093022208 ms of the epoch (2^43, where the clock still resolves a microsecond): start ${LIMIT - 0.5} + duration ${duration} s is past it`,
        );
    },
  );

  it("a duration knob: up to the bound a run is a run, a millisecond past it is refused naming start and duration", () => {
    const params = { duration: 5, rate: 20 };
    expect(retryAmplification.run(params, { start: LIMIT - 5_000 }).runs[0].summary.calls).toBeGreaterThan(0);
    expect(() => retryAmplification.run(params, { start: LIMIT - 4_999 })).toThrow(
      new RangeError(
        "scenario retry-amplification start (ms) and duration (s) must end the run within 8796093022208 ms of the epoch (2^43, where the clock still resolves a microsecond): start 8796093017209 + duration 5 s is past it",
      ),
    );
  });

  it("quota-bursts names its bursts and every, breaker-outage its spread past outageTo", () => {
    const bursts = { bursts: 10, every: 1_000, at: 0 };
    expect(quotaBursts.run(bursts, { start: LIMIT - 10_000 }).runs[0].summary.calls).toBe(400);
    expect(() => quotaBursts.run(bursts, { start: LIMIT - 9_999 })).toThrow(
      /^scenario quota-bursts start \(ms\) and bursts × every \(ms\) must end the run .+: start 8796093012209 \+ bursts 10 × every 1000 ms is past it$/,
    );
    // Its main runs fit; the spread's, 34 s past outageTo, do not.
    const outage = { duration: 30, outageFrom: 0, outageTo: 60, spreadSeeds: 1 };
    expect(() => breakerOutage.run(outage, { start: LIMIT - 90_000 })).toThrow(
      /^scenario breaker-outage start \(ms\) and outageTo \(s\) with spreadSeeds above 0 must end the run .+: start 8796092932208 \+ outageTo 60 s \+ 34 s of the spread's runs is past it$/,
    );
    expect(breakerOutage.run({ ...outage, spreadSeeds: 0 }, { start: LIMIT - 90_000 }).runs.length).toBeGreaterThan(1);
  });

  it.each(STARTS)("at a start of %s the longest runs the knobs allow are runs", (start) => {
    const longest = quotaBursts.run({ bursts: 1_000, every: 60_000, size: 1 }, { start });
    expect(longest.runs.map((r) => r.summary.calls)).toEqual([1_000, 1_000, 1_000]);
    expect(() => retryAmplification.run({ duration: 3_600, rate: 1 }, { start })).not.toThrow();
  });

  it("an outage inside the run still measures a recovery of 0 or more", () => {
    const f = breakerOutage.run({ outageFrom: 10, outageTo: 20, duration: 30, spreadSeeds: 0 }).figures;
    expect(f["tideward.recoverySeconds"]).toBeGreaterThanOrEqual(0);
    expect(f["tideward.recoverySeconds"]).toBeLessThanOrEqual(10);
  });
});

describe("a policy's options and name", () => {
  it.each<[string, () => unknown, RegExp]>([
    [
      "policy.breaker options null",
      () => policy.breaker({}, null as never),
      /^policy\.breaker options must be an object, got null$/,
    ],
    [
      "policy.shedder options null",
      () => policy.shedder({}, null as never),
      /^policy\.shedder options must be an object, got null$/,
    ],
    [
      "policy.breaker a misspelt name",
      () => policy.breaker({}, { nmae: "b" } as never),
      /^policy\.breaker has no option "nmae"; did you mean "name"\?$/,
    ],
    [
      "policy.breaker name 5",
      () => policy.breaker({}, { name: 5 as never }),
      /^policy\.breaker name must be text, got 5$/,
    ],
    [
      "policy.bucket name null",
      () => policy.bucket(5, { name: null as never }),
      /^policy\.bucket name must be text, got null$/,
    ],
    [
      "policy.gate name",
      () => policy.gate(5, { name: {} as never }),
      /^policy\.gate name must be text, got \[object Object\]$/,
    ],
    [
      "classicBreaker name",
      () => policy.classicBreaker({ name: 1 as never }),
      /^classicBreaker name must be text, got 1$/,
    ],
    [
      "samplingBreaker name",
      () => policy.samplingBreaker({ name: 1 as never }),
      /^samplingBreaker name must be text, got 1$/,
    ],
    [
      "opossumBreaker name",
      () => policy.opossumBreaker({ name: 1 as never }),
      /^opossumBreaker name must be text, got 1$/,
    ],
    [
      "policy.quota name",
      () => policy.quota({ dimensions: apiLimit, name: 1 as never }),
      /^policy\.quota name must be text, got 1$/,
    ],
    [
      "policy.admission name",
      () => policy.admission({ name: 1 as never }),
      /^policy\.admission name must be text, got 1$/,
    ],
  ])("%s is refused where it is given, naming it", (_, act, message) => {
    expect(act).toThrow(message);
  });

  it("a name given is the run's name for the policy and its refusals; left out, the policy's own", () => {
    const r = simulate({
      duration: 2_000,
      traffic: traffic.constant({ rate: 20 }),
      policies: [policy.breaker({}, { name: "b" }), policy.bucket(5), policy.shedder({}, {})],
    });
    expect(r.policies.map((p) => p.name)).toEqual(["b", "bucket", "shedder"]);
    expect(Object.keys(r.summary.refusedBy)).toEqual(["bucket"]);
  });
});

describe("an array with a hole is refused at the hole, as the entry it is not", () => {
  /** `[...items]` with a hole at `at`. */
  const holed = <T>(at: number, ...items: T[]): T[] => {
    const a = new Array<T>(items.length + 1);
    items.forEach((x, i) => (a[i < at ? i : i + 1] = x));
    return a;
  };
  const window = { from: 0, to: 1_000, rate: 1 };
  const t = traffic.constant({ rate: 10 });
  const withEnvelopes = (envelopes: unknown[]): PolicySpec => ({
    name: "holey",
    create: () => ({
      name: "holey",
      side: "client",
      reason: "holey",
      envelopes: envelopes as never,
      admit: () => true,
      settle: () => {},
    }),
  });

  it.each<[string, () => unknown, RegExp]>([
    [
      "failures.schedule windows",
      () => failures.schedule(holed(1, window, window)),
      /^failures\.schedule windows\[1\] must be a window such as \{ from: 0, to: 1000, rate: 1 \}, got undefined$/,
    ],
    [
      "a FailureSchedule's windows",
      () => new FailureSchedule(0, holed(0, window)),
      /^FailureSchedule window 0 must be a window .+, got undefined$/,
    ],
    [
      "backend dips",
      () =>
        simulate({
          duration: 1_000,
          traffic: t,
          backend: { workers: 2, dips: holed(0, { from: 0, to: 10, latency: 2 }) },
        }),
      /^backend dips\[0\] must be a dip such as \{ from: 0, to: 1000, latency: 2 \}, got undefined$/,
    ],
    [
      "traffic.replay records",
      () => traffic.replay(holed(1, { t: 0 }, { t: 5 })),
      /^traffic\.replay record 1 must be a record such as \{"t": 0, "key": "a"\}, got undefined$/,
    ],
    [
      "policy.quota dimensions",
      () => policy.quota({ dimensions: holed(0, ...apiLimit) }),
      /^policy\.quota dimensions\[0\] must be a dimension \(\{ limit, key \}\), got undefined$/,
    ],
    [
      "policy.quota faults skew",
      () => policy.quota({ dimensions: apiLimit, faults: { skew: holed(1, 0) } }),
      /^policy\.quota faults skew\[1\] \(ms\) must be a number, got undefined undefined$/,
    ],
    [
      "policy.quota faults down",
      () => policy.quota({ dimensions: apiLimit, faults: { down: holed(0, { from: 0, to: 10 }) } }),
      /^policy\.quota faults down\[0\] must be a stretch such as \{ from: 0, to: 1000 \}, got undefined$/,
    ],
    [
      "a policy's envelopes",
      () =>
        simulate({
          duration: 1_000,
          traffic: t,
          invariants: true,
          policies: [withEnvelopes(holed(0, { kind: "concurrency", label: "c", limit: 5 }))],
        }),
      /policy holey envelopes\[0\] must be an object, got undefined$/,
    ],
  ])("%s", (_, act, message) => {
    expect(act).toThrow(message);
  });

  it("the same arrays without the hole are taken", () => {
    expect(failures.schedule([window, window]).windows).toHaveLength(2);
    expect(traffic.replay([{ t: 0 }, { t: 5 }]).label).toBe("replay(2 calls, 1 keys)");
    const r = simulate({
      duration: 1_000,
      traffic: t,
      invariants: true,
      policies: [withEnvelopes([{ kind: "concurrency", label: "c", limit: 5 }])],
    });
    expect(r.summary.calls).toBe(10);
  });
});
