// Setting up: bad options answered with exact errors, names that add up or stay apart, values
// that stay bounded, callbacks that throw, and close().
import { metrics } from "@opentelemetry/api";
import { Breaker } from "@tideward/breaker";
import { admit, guard } from "@tideward/guard";
import { Shedder } from "@tideward/shedder";
import type { QuotaStore } from "@tideward/quota-engine";
import { ManualClock } from "@tideward/time";
import { describe, expect, it } from "vitest";
import { eachRefusal } from "../../../scripts/test-support/bad-input.ts";
import type { Refusal } from "../../../scripts/test-support/bad-input.ts";
import { instrumentAdmit, instrumentBreaker, instrumentGuard, instrumentQuota, instrumentShedder } from "../src/index";
import { metricsSdk } from "./support/sdk";

const meter = metrics.getMeter("no-sdk"); // the API's own: a no-op until an SDK is registered
const not = <T>(x: unknown): T => x as T;
const fn = () => Promise.resolve("ok");
const given = Object.freeze({ meter, name: "api" });

const bad: Refusal[] = [
  [
    "no telemetry",
    () => instrumentGuard(fn, {}, not(undefined)),
    TypeError,
    "instrumentGuard needs telemetry options: { meter, name }",
  ],
  [
    "a misspelt option",
    () => instrumentGuard(fn, {}, not({ ...given, nmae: "x" })),
    TypeError,
    'instrumentGuard has no option "nmae"; did you mean "name"?',
  ],
  [
    "no name",
    () => instrumentGuard(fn, {}, not({ meter })),
    TypeError,
    "instrumentGuard telemetry name must be a string of 1 to 256 characters, got undefined",
  ],
  [
    "an empty name",
    () => instrumentGuard(fn, {}, { meter, name: "" }),
    TypeError,
    'instrumentGuard telemetry name must be a string of 1 to 256 characters, got ""',
  ],
  [
    "a name too long",
    () => instrumentAdmit({}, { meter, name: "x".repeat(257) }),
    TypeError,
    `instrumentAdmit telemetry name must be a string of 1 to 256 characters, got "${"x".repeat(257)}"`,
  ],
  [
    "a number for a name",
    () => instrumentQuota(not<QuotaStore>({ checkAtomic: () => 0 }), not({ meter, name: 7 })),
    TypeError,
    "instrumentQuota telemetry name must be a string of 1 to 256 characters, got 7",
  ],
  [
    "a meter that is not one",
    () => instrumentGuard(fn, {}, not({ meter: {}, name: "a" })),
    TypeError,
    "instrumentGuard telemetry meter must be an OpenTelemetry Meter, got [object Object]",
  ],
  [
    "a tracer that is not one",
    () => instrumentGuard(fn, {}, not({ tracer: 1, name: "a" })),
    TypeError,
    "instrumentGuard telemetry tracer must be an OpenTelemetry Tracer, got 1",
  ],
  [
    "neither a meter nor a tracer",
    () => instrumentGuard(fn, {}, { name: "a" }),
    TypeError,
    "instrumentGuard telemetry needs a meter or a tracer",
  ],
  [
    "no meter where only metrics are made",
    () => instrumentBreaker(new Breaker(), { name: "a" }),
    TypeError,
    "instrumentBreaker telemetry needs a meter",
  ],
  [
    "a tracer where no span is made",
    () => instrumentShedder(new Shedder(), not({ meter, name: "a", tracer: { startSpan: () => 0 } })),
    TypeError,
    "instrumentShedder makes no spans: give it a meter, not a tracer",
  ],
  [
    "durations that are not a boolean",
    () => instrumentGuard(fn, {}, not({ ...given, durations: "no" })),
    TypeError,
    'instrumentGuard telemetry durations must be true or false, got "no"',
  ],
  [
    "a clock that is not a function",
    () => instrumentBreaker(new Breaker(), not({ ...given, clock: 5 })),
    TypeError,
    "instrumentBreaker telemetry clock must be a function, got number 5",
  ],
  [
    "a breaker that is not one",
    () => instrumentBreaker(not({}), given),
    TypeError,
    "instrumentBreaker expects a Breaker, got [object Object]",
  ],
  [
    "a shedder that is not one",
    () => instrumentShedder(not(null), given),
    TypeError,
    "instrumentShedder expects a Shedder, got null",
  ],
];

describe("bad telemetry options", () => {
  eachRefusal(bad, given);
});

describe("bad guard and admission options", () => {
  // The guard's and the admission's own messages, word for word.
  const same: [string, () => unknown, () => unknown][] = [
    [
      "a misspelt guard option",
      () => guard(fn, not({ brekaer: {} })),
      () => instrumentGuard(fn, not({ brekaer: {} }), given),
    ],
    [
      "breaker fields out of range",
      () => guard(fn, { breaker: { k: 0 } }),
      () => instrumentGuard(fn, { breaker: { k: 0 } }, given),
    ],
    ["a shedder without a load", () => guard(fn, { shedder: {} }), () => instrumentGuard(fn, { shedder: {} }, given)],
    [
      "a listener that is not a function",
      () => guard(fn, not({ onOutcome: 1 })),
      () => instrumentGuard(fn, not({ onOutcome: 1 }), given),
    ],
    ["options that are not an object", () => guard(fn, not(7)), () => instrumentGuard(fn, not(7), given)],
    [
      "a function that is not one",
      () => guard(not<typeof fn>(null)),
      () => instrumentGuard(not<typeof fn>(null), {}, given),
    ],
    [
      "shedder fields out of range, to admit",
      () => admit({ shedder: { cpu: 2_000 }, load: () => 0 }),
      () => instrumentAdmit({ shedder: { cpu: 2_000 }, load: () => 0 }, given),
    ],
    ["a misspelt admit option", () => admit(not({ gates: 2 })), () => instrumentAdmit(not({ gates: 2 }), given)],
  ];
  it.each(same)("%s", (_, plain, instrumented) => {
    const thrown = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return [(e as Error).constructor, (e as Error).message];
      }
      return undefined;
    };
    const want = thrown(plain);
    expect(want).toBeDefined();
    expect(thrown(instrumented)).toEqual(want);
  });
});

describe("series", () => {
  it("add up under one name, and stay apart under two", async () => {
    const sdk = metricsSdk();
    const a = instrumentGuard(fn, {}, { meter: sdk.meter, name: "shared" });
    const b = instrumentGuard(fn, {}, { meter: sdk.meter, name: "shared" });
    const c = instrumentGuard(fn, {}, { meter: sdk.meter, name: "apart" });
    await Promise.all([a(), a(), b(), c()]);
    const m = await sdk.collect();
    expect(m.sum("tideward.guard.calls", { "tideward.name": "shared" })).toBe(3);
    expect(m.sum("tideward.guard.calls", { "tideward.name": "apart" })).toBe(1);
    expect(m.histogram("tideward.guard.call.duration", { "tideward.name": "shared" }).count).toBe(3);
    await sdk.shutdown();
  });

  it("keep error.type to 64 values: a type met after those reads _OTHER", async () => {
    const sdk = metricsSdk();
    let n = 0;
    const call = instrumentGuard(
      () => {
        const e = new Error("made at run time");
        e.name = `Error${n++}`;
        throw e;
      },
      {},
      { meter: sdk.meter, name: "types" },
    );
    for (let i = 0; i < 100; i++) await call().catch(() => undefined);
    const m = await sdk.collect();
    const types = m.values("tideward.guard.calls", "error.type");
    expect(types).toHaveLength(65);
    expect(m.sum("tideward.guard.calls", { "error.type": "_OTHER" })).toBe(36);
    expect(m.sum("tideward.guard.calls")).toBe(100);
    await sdk.shutdown();
  });

  it("read a returned failure's status, and anything that is no type name as _OTHER", async () => {
    const sdk = metricsSdk();
    const answers: unknown[] = [
      { status: 503 },
      { status: 700 },
      "text",
      Object.assign(new Error("x"), { name: "not a type name" }),
      new (class HttpError extends Error {})("x"),
    ];
    let i = 0;
    const call = instrumentGuard(
      () => {
        const a = answers[i++];
        if (i <= 3) return a;
        throw a;
      },
      { isFailure: (error, result) => error !== undefined || typeof result !== "object" || result !== null },
      { meter: sdk.meter, name: "odd" },
    );
    for (let k = 0; k < answers.length; k++) await call().catch(() => undefined);
    const m = await sdk.collect();
    expect(m.sum("tideward.guard.calls", { "error.type": "503" })).toBe(1);
    expect(m.sum("tideward.guard.calls", { "error.type": "HttpError" })).toBe(1);
    // A name that is no type name gives way to the constructor's.
    expect(m.sum("tideward.guard.calls", { "error.type": "Error" })).toBe(1);
    expect(m.sum("tideward.guard.calls", { "error.type": "_OTHER" })).toBe(2);
    expect(m.sum("tideward.guard.calls", { "tideward.outcome": "failure" })).toBe(5);
    await sdk.shutdown();
  });
});

describe("callbacks that throw", () => {
  it("end the call as the guard says, counted as a failure, and leave the telemetry working", async () => {
    const sdk = metricsSdk();
    const judging = instrumentGuard(
      fn,
      {
        retry: { attempts: 2, base: 1 },
        isFailure: () => {
          throw new RangeError("judge");
        },
      },
      { meter: sdk.meter, name: "judge" },
    );
    await expect(judging()).rejects.toThrow("judge");
    const loading = instrumentGuard(
      fn,
      {
        shedder: {},
        load: () => {
          throw new Error("sampler");
        },
      },
      { meter: sdk.meter, name: "load" },
    );
    await expect(loading()).rejects.toThrow("sampler");
    const fine = instrumentGuard(fn, {}, { meter: sdk.meter, name: "fine" });
    await fine();
    const m = await sdk.collect();
    expect(
      m.sum("tideward.guard.calls", {
        "tideward.name": "judge",
        "tideward.outcome": "failure",
        "error.type": "RangeError",
      }),
    ).toBe(1);
    expect(m.sum("tideward.guard.calls", { "tideward.name": "fine", "tideward.outcome": "success" })).toBe(1);
    // The load was never read: no load to report.
    expect(m.has("tideward.shedder.load")).toBe(false);
    await sdk.shutdown();
  });
});

describe("a call rejected before its first attempt", () => {
  it("is not counted, whether the guard is counted from its events or wrapped", async () => {
    const sdk = metricsSdk();
    let broken = false;
    const clock = () => {
      if (broken) throw new Error("clock gone");
      return 0;
    };
    const options = [{ clock }, { clock, retry: { attempts: 3, base: 1 } }, { clock, hedge: { delay: 1 } }];
    const guards = options.map((o, i) => instrumentGuard(fn, o, { meter: sdk.meter, name: `g${i}` }));
    for (const g of guards) await expect(g()).resolves.toBe("ok");
    broken = true;
    for (const g of guards) await expect(g()).rejects.toThrow("clock gone");
    // A scope the guard refuses is rejected before any attempt too.
    broken = false;
    for (const g of guards) await expect(g.run({ sigal: undefined } as never)).rejects.toThrow(TypeError);
    const m = await sdk.collect();
    for (let i = 0; i < guards.length; i++) expect(m.sum("tideward.guard.calls", { "tideward.name": `g${i}` })).toBe(1);
    await sdk.shutdown();
  });
});

describe("close()", () => {
  it("stops the counting and the gauges, keeping the totals reached", async () => {
    const sdk = metricsSdk();
    const clock = new ManualClock(1_700_000_000_000.5);
    const breaker = new Breaker({}, clock.now());
    for (const retry of [undefined, { attempts: 2 }]) {
      const name = retry === undefined ? "once" : "retrying";
      const call = instrumentGuard(fn, { retry, breaker, clock: clock.now }, { meter: sdk.meter, name });
      await call();
      call.close();
      call.close(); // once only; later calls do nothing
      await call();
      expect(await call.run({})).toBe("ok");
      const m = await sdk.collect();
      expect(m.sum("tideward.guard.calls", { "tideward.name": name })).toBe(1);
      expect(m.sum("tideward.guard.attempts", { "tideward.name": name })).toBe(1);
    }
    const gauge = instrumentBreaker(breaker, { meter: sdk.meter, name: "standalone", clock: clock.now });
    expect((await sdk.collect()).sum("tideward.breaker.drop_ratio", { "tideward.name": "standalone" })).toBe(0);
    gauge.close();
    // Twenty failures: the breaker would now refuse calls, but the closed gauge is not read.
    for (let i = 0; i < 20; i++) breaker.allow(clock.now(), 0.99)?.fail(clock.now());
    expect(breaker.ratio(clock.now())).toBeGreaterThan(0.25);
    expect((await sdk.collect()).sum("tideward.breaker.drop_ratio", { "tideward.name": "standalone" })).toBe(0);
    await sdk.shutdown();
  });
});

describe("instrumentBreaker and instrumentShedder", () => {
  it("read the breaker's ratio and the shedder's flights when collected, and at no other time", async () => {
    const sdk = metricsSdk();
    const clock = new ManualClock(0.25);
    const breaker = new Breaker({ window: 1_000, size: 10 }, clock.now());
    const shedder = new Shedder({}, clock.now());
    instrumentBreaker(breaker, { meter: sdk.meter, name: "b", clock: clock.now });
    instrumentShedder(shedder, { meter: sdk.meter, name: "s", clock: clock.now });
    for (let i = 0; i < 20; i++) breaker.allow(clock.now(), 0.999)?.fail(clock.now());
    const tickets = [shedder.allow(clock.now(), 100), shedder.allow(clock.now(), 100)];
    tickets[0]?.pass(clock.advance(5));
    const m = await sdk.collect();
    expect(m.sum("tideward.breaker.drop_ratio", { "tideward.name": "b" })).toBe(breaker.ratio(clock.now()));
    expect(m.sum("tideward.shedder.active_calls", { "tideward.name": "s" })).toBe(1);
    expect(m.sum("tideward.shedder.average_active_calls", { "tideward.name": "s" })).toBe(shedder.average);
    // A standalone shedder's load is its caller's: not reported.
    expect(m.has("tideward.shedder.load")).toBe(false);
    await sdk.shutdown();
  });
});
