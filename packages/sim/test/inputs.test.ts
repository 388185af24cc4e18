// Bad input is refused where it is given, naming the path the user typed and the value: never a
// raw TypeError from deep inside, a stack overflow, or a figure that cannot be (a negative time).
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { QuotaKey, perSecond } from "@tideward/quota-engine";
import {
  breakerBrownout,
  breakerOutage,
  FailureSchedule,
  Simulator,
  backends,
  catalogue,
  defineScenario,
  failures,
  herdRecovery,
  keys,
  knobArbitrary,
  latency,
  policy,
  quotaBursts,
  retryAmplification,
  simulate,
  sweep,
  traffic,
} from "@tideward/sim";
import type { Knob, PolicySpec, QuotaDimension } from "@tideward/sim";
import { STARTS } from "./helpers";

const one: QuotaDimension[] = [{ limit: perSecond("api", 50), key: () => new QuotaKey("t", "*", "api") }];

describe("store faults skew", () => {
  it("200 000 instances are refused by count, where spreading them overflowed the stack", () => {
    expect(() => policy.quota({ dimensions: one, faults: { skew: new Array(200_000).fill(0) } })).toThrow(
      /^policy\.quota faults skew lists 200 000 instances; a store is called from at most 1 024$/,
    );
  });

  it("a skew that is not an array is refused naming it", () => {
    expect(() => policy.quota({ dimensions: one, faults: { skew: 5 as never } })).toThrow(
      /^policy\.quota faults skew must be an array of clock offsets \(ms\), one per instance, got 5$/,
    );
  });

  it("1 024 instances are taken, and their clocks' spread bounds what the envelope allows", () => {
    const skew = Array.from({ length: 1_024 }, (_, i) => i % 3);
    const r = simulate({
      duration: 5_000,
      traffic: traffic.poisson({ rate: 40 }),
      invariants: true,
      policies: [policy.quota({ dimensions: one, faults: { skew } })],
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

describe("defineScenario and knobArbitrary refuse what they cannot use, naming it", () => {
  const outcome = { runs: [], figures: {}, report: "" };
  // A run of two buckets, as far as an outcome's check looks, and a plot over it.
  const probed = { ...outcome, runs: [{ label: "a", duration: 2, summary: {}, series: { t: [0, 1] } }] };
  const plot = { id: "tokens", title: "Tokens", unit: "tokens/s", runs: [[1, null]] };
  const rate: Knob = { kind: "number", name: "rate", label: "Rate", doc: "", default: 1, min: 0, max: 2, step: 0.1 };
  const define = (over: Record<string, unknown>) =>
    defineScenario({ name: "probe", title: "", summary: "", knobs: [rate], run: () => outcome, ...over });

  it.each<[string, () => unknown, RegExp]>([
    [
      "null",
      () => defineScenario(null as never),
      /^defineScenario definition must be an object with name, title, summary, knobs and run, got null$/,
    ],
    ["no name", () => define({ name: undefined }), /^defineScenario name must be non-empty text, got undefined$/],
    ["a title that is not text", () => define({ title: 5 }), /^scenario probe title must be text, got 5$/],
    ["no run", () => define({ run: undefined }), /^scenario probe run must be a function, got undefined$/],
    [
      "knobs not an array",
      () => define({ knobs: {} }),
      /^scenario probe knobs must be an array of knobs, got \[object Object\]$/,
    ],
    ["a null knob", () => define({ knobs: [rate, null] }), /^scenario probe knobs\[1\] must be a knob .+, got null$/],
    [
      "a hole for a knob",
      () => define({ knobs: Object.assign(new Array<Knob>(3), { 0: rate, 2: rate }) }),
      /^scenario probe knobs\[1\] must be a knob .+, got undefined$/,
    ],
    [
      "an unknown kind",
      () => define({ knobs: [{ ...rate, kind: "slider" }] }),
      /^scenario probe knobs\[0\] kind must be "number", "integer", "select" or "boolean", got "slider"$/,
    ],
    [
      "a knob without a name",
      () => define({ knobs: [{ ...rate, name: 7 }] }),
      /^scenario probe knobs\[0\] name must be non-empty text, got 7$/,
    ],
    ["two knobs of one name", () => define({ knobs: [rate, rate] }), /^scenario probe has two knobs named "rate"$/],
    [
      "a step of 0",
      () => define({ knobs: [{ ...rate, step: 0 }] }),
      /^scenario probe knob rate step must be above 0, got 0$/,
    ],
    [
      "a NaN bound",
      () => define({ knobs: [{ ...rate, max: NaN }] }),
      /^scenario probe knob rate max must be a finite number, got NaN$/,
    ],
    [
      "an integer knob's fraction",
      () => define({ knobs: [{ ...rate, kind: "integer", default: 1.5 }] }),
      /^scenario probe knob rate default must be a whole number, got 1\.5$/,
    ],
    [
      "select options null",
      () => define({ knobs: [{ kind: "select", name: "mode", label: "", doc: "", default: "a", options: null }] }),
      /^scenario probe knob mode options must be a non-empty array of \{ value, label \}, got null$/,
    ],
    [
      "a select of 100 000 options",
      () =>
        define({
          knobs: [
            {
              kind: "select",
              name: "mode",
              label: "",
              doc: "",
              default: "0",
              options: Array.from({ length: 100_000 }, (_, i) => ({ value: String(i), label: String(i) })),
            },
          ],
        }),
      /^scenario probe knob mode options must be at most 1024 \(a list to pick from\), got 100000$/,
    ],
    [
      "a select option not text",
      () =>
        define({
          knobs: [
            { kind: "select", name: "mode", label: "", doc: "", default: "a", options: [{ value: 1, label: "one" }] },
          ],
        }),
      /^scenario probe knob mode options\[0\] must be \{ value, label \}, both text, got \[object Object\]$/,
    ],
    [
      "a boolean knob's default",
      () => define({ knobs: [{ kind: "boolean", name: "on", label: "", doc: "", default: "yes" }] }),
      /^scenario probe knob on default must be true or false, got "yes"$/,
    ],
    [
      "a run that returns nothing",
      () => define({ run: () => undefined }).run(),
      /^scenario probe run must return an outcome \(\{ runs, figures, report \}\), got undefined$/,
    ],
    [
      "a run whose runs are not an array",
      () => define({ run: () => ({ ...outcome, runs: null }) }).run(),
      /^scenario probe run outcome runs must be an array of runs, got null$/,
    ],
    [
      "a run without a report",
      () => define({ run: () => ({ ...outcome, report: undefined }) }).run(),
      /^scenario probe run outcome report must be text, got undefined$/,
    ],
    [
      "plots that are not an array",
      () => define({ run: () => ({ ...outcome, plots: {} }) }).run(),
      /^scenario probe run outcome plots must be an array of plots, got \[object Object\]$/,
    ],
    [
      "a plot without a unit",
      () => define({ run: () => ({ ...probed, plots: [{ ...plot, unit: undefined }] }) }).run(),
      /^scenario probe run outcome plots\[0\] unit must be text, got undefined$/,
    ],
    [
      "a plot with a line for a run that is not there",
      () =>
        define({
          run: () => ({
            ...probed,
            plots: [
              {
                ...plot,
                runs: [
                  [1, 2],
                  [3, 4],
                ],
              },
            ],
          }),
        }).run(),
      /^scenario probe run outcome plots\[0\] runs must be an array of 1 lines, one a run, got \[object Array\]$/,
    ],
    [
      "a plot line shorter than its run's series",
      () => define({ run: () => ({ ...probed, plots: [{ ...plot, runs: [[1]] }] }) }).run(),
      /^scenario probe run outcome plots\[0\] runs\[0\] must be an array of 2 values, one a bucket of the run, got \[object Array\]$/,
    ],
    [
      "a plot value that is not a number",
      () => define({ run: () => ({ ...probed, plots: [{ ...plot, runs: [[1, Number.NaN]] }] }) }).run(),
      /^scenario probe run outcome plots\[0\] runs\[0\]\[1\] must be a finite number or null, got NaN$/,
    ],
    [
      "a plot's mark without a value",
      () => define({ run: () => ({ ...probed, plots: [{ ...plot, marks: [{ label: "cap" }] }] }) }).run(),
      /^scenario probe run outcome plots\[0\] marks\[0\] value must be a finite number, got undefined$/,
    ],
    [
      "two plots of one name",
      () => define({ run: () => ({ ...probed, plots: [plot, plot] }) }).run(),
      /^scenario probe run outcome has two plots named "tokens"$/,
    ],
    [
      "knobArbitrary without fast-check",
      () => knobArbitrary(null as never, [rate]),
      /^knobArbitrary fc must be fast-check itself \(its default export\), got null$/,
    ],
    [
      "knobArbitrary with half of fast-check",
      () => knobArbitrary({ integer: () => 0 } as never, [rate]),
      /^knobArbitrary fc must be fast-check itself \(its default export\): its double is undefined$/,
    ],
    [
      "knobArbitrary without knobs",
      () => knobArbitrary(fc, undefined as never),
      /^knobArbitrary knobs must be an array of knobs, got undefined$/,
    ],
    [
      "knobArbitrary with a null knob",
      () => knobArbitrary(fc, [null as never]),
      /^knobArbitrary knobs\[0\] must be a knob .+, got null$/,
    ],
    [
      "a knob whose min is above its max",
      () => define({ knobs: [{ ...rate, min: 3, max: 1 }] }),
      /^scenario probe knob rate min \(3\) must be at most its max \(1\)$/,
    ],
    [
      "knobArbitrary with a knob whose min is above its max",
      () => knobArbitrary(fc, [{ ...rate, kind: "integer", min: 3, max: 1 }]),
      /^knobArbitrary knob rate min \(3\) must be at most its max \(1\)$/,
    ],
  ])("%s", (_, act, message) => {
    expect(act).toThrow(message);
  });

  it.each(catalogue.map((s) => [s.name, s] as const))(
    "%s: its knobs cannot be changed, so its checks hold (a max raised to 9 000 let 9 000 attempts through)",
    (_, s) => {
      for (const k of s.knobs) {
        expect(Object.isFrozen(k)).toBe(true);
        if (k.kind === "select") {
          expect(Object.isFrozen(k.options)).toBe(true);
          for (const o of k.options) expect(Object.isFrozen(o)).toBe(true);
        }
        if (k.kind !== "number" && k.kind !== "integer") continue;
        if (k.option !== undefined) expect(Object.isFrozen(k.option)).toBe(true);
        expect(() => ((k as { max: number }).max = k.max + 9_000)).toThrow(TypeError);
        expect(() => ((k as { kind: string }).kind = "number")).toThrow(TypeError);
        expect(() => s.resolve({ [k.name]: k.max + k.step })).toThrow(RangeError);
        if (k.kind === "integer") expect(() => s.resolve({ [k.name]: k.min + 0.5 })).toThrow(/must be a whole number/);
      }
    },
  );

  it("a result carries the plots its run gave, and has no plots field when it gave none", () => {
    expect(define({ run: () => ({ ...probed, plots: [plot] }) }).run().plots).toEqual([plot]);
    expect(Object.keys(define({ run: () => probed }).run())).not.toContain("plots");
  });

  it("a knob changed in its definition after defineScenario changes nothing", () => {
    const attempts = {
      kind: "integer" as string,
      name: "attempts",
      label: "",
      doc: "",
      default: 2,
      min: 1,
      max: 3,
      step: 1,
      option: { path: "retry.attempts" },
    };
    const s = define({ knobs: [attempts] });
    attempts.max = 9_000;
    attempts.kind = "number";
    attempts.option.path = "timeout";
    expect(() => s.resolve({ attempts: 9_000 })).toThrow(/attempts must be between 1 and 3, got 9000/);
    expect(() => s.resolve({ attempts: 500_000_000.5 })).toThrow(/attempts must be a whole number, got 500000000\.5/);
    expect(s.knobs[0]).toMatchObject({ kind: "integer", max: 3, option: { path: "retry.attempts" } });
  });

  it("a well-formed definition runs, its body called on the definition, its knobs drawn by knobArbitrary", () => {
    const definition = {
      name: "probe",
      title: "Probe",
      summary: "",
      knobs: [rate],
      tag: "mine",
      run(this: { tag: string }, p: { rate: number }) {
        return { ...outcome, figures: { rate: p.rate }, report: this.tag };
      },
    };
    const r = defineScenario(definition as never).run({ rate: 1.5 });
    expect([r.figures.rate, r.report]).toEqual([1.5, "mine"]);
    for (const p of fc.sample(knobArbitrary(fc, [rate]), 3)) expect(Object.keys(p as object)).toEqual(["rate"]);
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
      () => policy.quota({ dimensions: one, name: 1 as never }),
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
      () => policy.quota({ dimensions: holed(0, ...one) }),
      /^policy\.quota dimensions\[0\] must be a dimension \(\{ limit, key \}\), got undefined$/,
    ],
    [
      "policy.quota faults skew",
      () => policy.quota({ dimensions: one, faults: { skew: holed(1, 0) } }),
      /^policy\.quota faults skew\[1\] \(ms\) must be a number, got undefined undefined$/,
    ],
    [
      "policy.quota faults down",
      () => policy.quota({ dimensions: one, faults: { down: holed(0, { from: 0, to: 10 }) } }),
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

describe("an option given as null is refused by name, not taken for its default", () => {
  const tr = traffic.constant({ rate: 10 });
  it.each<[string, () => unknown, string, string]>([
    [
      "shaped label",
      () => traffic.shaped({ rate: () => 1, peak: 1, label: null as never }),
      "TypeError",
      "traffic.shaped label must be text, got null",
    ],
    [
      "daily amplitude",
      () => traffic.daily({ mean: 1, amplitude: null as never }),
      "TypeError",
      "traffic.daily amplitude must be a number, got object null",
    ],
    [
      "constant keys",
      () => traffic.constant({ rate: 1, keys: null as never }),
      "TypeError",
      "traffic.constant keys must be a key model (keys.single, keys.uniform, keys.zipf), got null",
    ],
    [
      "constant at",
      () => traffic.constant({ rate: 1, at: null as never }),
      "TypeError",
      "traffic.constant at (ms) must be a number, got object null",
    ],
    [
      "gate side",
      () => policy.gate(1, { side: null as never }),
      "TypeError",
      'policy.gate side must be "client" or "server", got null',
    ],
    [
      "classic threshold",
      () => policy.classicBreaker({ threshold: null as never }),
      "TypeError",
      "classicBreaker threshold must be a number, got object null",
    ],
    [
      "sampling minimumRps",
      () => policy.samplingBreaker({ minimumRps: null as never }),
      "TypeError",
      "samplingBreaker minimumRps must be a number, got object null",
    ],
    [
      "quota kind",
      () => policy.quota({ dimensions: [{ ...one[0], kind: null as never }] }),
      "TypeError",
      'policy.quota dimensions[0] kind must be "bucket", "window" or "gcra", got null',
    ],
    [
      "quota units",
      () => policy.quota({ dimensions: [{ ...one[0], units: null as never }] }),
      "TypeError",
      'policy.quota dimensions[0] units must be "calls" or "cost", got null',
    ],
    [
      "quota label",
      () => policy.quota({ dimensions: [{ ...one[0], label: null as never }] }),
      "TypeError",
      "policy.quota dimensions[0] label must be text, got null",
    ],
    [
      "quota label 5",
      () => policy.quota({ dimensions: [{ ...one[0], label: 5 as never }] }),
      "TypeError",
      "policy.quota dimensions[0] label must be text, got 5",
    ],
    [
      "quota mode",
      () => policy.quota({ dimensions: one, mode: null as never }),
      "TypeError",
      'policy.quota mode must be "atomic" or "sequential", got null',
    ],
    [
      "quota onError",
      () => policy.quota({ dimensions: one, onError: null as never }),
      "TypeError",
      'policy.quota onError must be "open", "closed" or "local", got null',
    ],
    [
      "quota store",
      () => policy.quota({ dimensions: one, store: null as never }),
      "TypeError",
      "policy.quota store must be a function making a fresh store, got null",
    ],
    [
      "quota faults timeout",
      () => policy.quota({ dimensions: one, faults: { timeout: null as never } }),
      "TypeError",
      "policy.quota faults timeout (ms) must be a number, got object null",
    ],
    [
      "quota faults skew",
      () => policy.quota({ dimensions: one, faults: { skew: null as never } }),
      "TypeError",
      "policy.quota faults skew must be an array of clock offsets (ms), one per instance, got null",
    ],
    [
      "opossum resetTimeout",
      () => policy.opossumBreaker({ resetTimeout: null as never }),
      "TypeError",
      "opossumBreaker resetTimeout (ms) must be a number, got object null",
    ],
    [
      "simulate seed",
      () => simulate({ duration: 10, traffic: tr, seed: null as never }),
      "TypeError",
      "simulate seed must be a number, got object null",
    ],
    [
      "simulate start",
      () => simulate({ duration: 10, traffic: tr, start: null as never }),
      "TypeError",
      "simulate start (ms) must be a number, got object null",
    ],
    [
      "simulate policies",
      () => simulate({ duration: 10, traffic: tr, policies: null as never }),
      "TypeError",
      "simulate policies must be an array of policies, got null",
    ],
    [
      "simulate hedge max",
      () => simulate({ duration: 10, traffic: tr, client: { hedge: { after: 1, max: null as never } } }),
      "TypeError",
      "simulate client hedge max must be a number, got object null",
    ],
    [
      "simulate retry backoff",
      () => simulate({ duration: 10, traffic: tr, client: { retry: { backoff: null as never } } }),
      "TypeError",
      "simulate client retry backoff must be a Backoff or its fields, got null",
    ],
    [
      "metastable capacity",
      () => backends.metastable({ capacity: null as never }),
      "TypeError",
      "backends.metastable capacity (calls per second) must be a number, got object null",
    ],
    [
      "metastable trigger",
      () => backends.metastable({ trigger: null as never }),
      "TypeError",
      "backends.metastable trigger must be a dip such as { from: 20000, to: 30000, latency: 2 }, got null",
    ],
    [
      "metastable abandoned",
      () => backends.metastable({ abandoned: null as never }),
      "TypeError",
      'backends.metastable abandoned must be "serve" or "drop", got null',
    ],
    [
      "outage rate",
      () => failures.outage({ from: 0, to: 1, rate: null as never }),
      "TypeError",
      "failures.outage rate must be a number, got object null",
    ],
    [
      "outage base",
      () => failures.outage({ from: 0, to: 1, base: null as never }),
      "TypeError",
      "failures.outage base must be a number, got object null",
    ],
    [
      "logNormal sigma",
      () => latency.logNormal({ median: 1, sigma: null as never }),
      "TypeError",
      "logNormal sigma must be a number, got object null",
    ],
    [
      "bimodal share",
      () => latency.bimodal({ fast: latency.fixed(1), slow: latency.fixed(2), share: null as never }),
      "TypeError",
      "bimodal share must be a number, got object null",
    ],
    [
      "zipf exponent",
      () => keys.zipf({ count: 2, exponent: null as never }),
      "TypeError",
      "keys.zipf exponent must be a number, got object null",
    ],
    [
      "replay at",
      () => traffic.replay([], { at: null as never }),
      "TypeError",
      "traffic.replay at (ms) must be a number, got object null",
    ],
    [
      "backend failures",
      () => simulate({ duration: 10, traffic: tr, backend: { failures: null as never } }),
      "TypeError",
      "backend failures must be a share in [0, 1] or a failure schedule, got null",
    ],
    [
      "backend abandoned",
      () => simulate({ duration: 10, traffic: tr, backend: { abandoned: null as never } }),
      "TypeError",
      'backend abandoned must be "serve" or "drop", got null',
    ],
    [
      "backend latency",
      () => simulate({ duration: 10, traffic: tr, backend: { latency: null as never } }),
      "TypeError",
      "backend latency (ms) must be a number or a distribution (fixed, uniform, exponential, logNormal, normal, bimodal), got null",
    ],
    [
      "backend cpuSmoothing",
      () => simulate({ duration: 10, traffic: tr, backend: { cpuSmoothing: null as never } }),
      "TypeError",
      "backend cpuSmoothing (ms) must be a number, got object null",
    ],
    [
      "backend overload slowdown",
      () => simulate({ duration: 10, traffic: tr, backend: { workers: 1, overload: { slowdown: null as never } } }),
      "TypeError",
      "backend overload slowdown must be a number, got object null",
    ],
    [
      "backend dips latency",
      () =>
        simulate({
          duration: 10,
          traffic: tr,
          backend: { workers: 1, dips: [{ from: 0, to: 1, latency: null as never }] },
        }),
      "TypeError",
      "backend dips[0] latency (a factor) must be a number, got object null",
    ],
    [
      "scenario start",
      () => quotaBursts.run({}, { start: null as never }),
      "TypeError",
      "scenario quota-bursts start (ms) must be a number, got object null",
    ],
    [
      "sweep steps",
      () => sweep(quotaBursts, "bursts", { steps: null as never }),
      "TypeError",
      "sweep steps must be a number, got object null",
    ],
    [
      "Simulator seed",
      () => new Simulator({ seed: null as never }),
      "TypeError",
      "Simulator seed must be a number, got object null",
    ],
    [
      "herd spread",
      () => traffic.herd({ clients: 1, spread: null as never }),
      "TypeError",
      "traffic.herd spread (ms) must be a number, got object null",
    ],
  ])("%s", (_, act, type, message) => {
    let thrown: unknown;
    try {
      act();
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(type === "TypeError" ? TypeError : RangeError);
    expect((thrown as Error).message).toBe(message);
  });

  it("left out, each takes its default as before", () => {
    const r = simulate({ duration: 1_000, traffic: traffic.constant({ rate: 10 }), backend: backends.metastable({}) });
    expect(r.summary.calls).toBe(10);
    expect(policy.quota({ dimensions: one }).name).toBe("quota");
    expect(failures.outage({ from: 0, to: 1 }).windows[0].rate).toBe(1);
  });
});
