// Bad options fail at construction, naming the path the user typed and the value; a bad scope
// handed to one call rejects that call the same way.
import { describe, expect, it } from "vitest";
import { admit, guard, guardFetch } from "@tideward/guard";
import { isOptionError } from "@tideward/time";
import type { GuardOptions } from "@tideward/guard";
import { Bucket } from "@tideward/limiters";
import { eachRefusal } from "../../../scripts/test-support/bad-input.ts";
import type { Refusal } from "../../../scripts/test-support/bad-input.ts";

const fn = () => 1;
// Every case lays its fields over this; none may change it.
const preset: GuardOptions<number> = { clock: () => 1_700_000_000_000.5 };
const given = (fields: Record<string, unknown>) => () => guard(fn, { ...preset, ...fields });

describe("bad options fail at construction, naming the path and the value", () => {
  const cases: Refusal[] = [
    ["a misspelt option", given({ deadlne: 5 }), TypeError, 'guard has no option "deadlne"; did you mean "deadline"?'],
    ["a misspelt policy", given({ breakr: {} }), TypeError, 'guard has no option "breakr"; did you mean "breaker"?'],
    ["a negative deadline", given({ deadline: -1 }), RangeError, "guard deadline (ms) must be 0 or more, got -1"],
    [
      "a NaN deadline",
      given({ deadline: Number.NaN }),
      RangeError,
      "guard deadline (ms) must be a finite number, got NaN",
    ],
    ["a timeout as text", given({ timeout: "1s" }), TypeError, 'guard timeout (ms) must be a number, got string "1s"'],
    ["a negative maxWait", given({ maxWait: -3 }), RangeError, "guard maxWait (ms) must be 0 or more, got -3"],
    [
      "a bucket of no rate",
      given({ bucket: { rate: 0 } }),
      RangeError,
      "guard bucket.rate (tokens per second) must be above 0, got 0",
    ],
    [
      "a bucket's rate left out",
      given({ bucket: { burst: 2 } }),
      TypeError,
      "guard bucket.rate (tokens per second) is missing: a bucket given as fields is { rate, burst }, such as { rate: 5, burst: 2 }",
    ],
    [
      "a bucket's negative burst",
      given({ bucket: { rate: 5, burst: -1 } }),
      RangeError,
      "guard bucket.burst (tokens) must be above 0, got -1",
    ],
    [
      "a bucket too slow to refill",
      given({ bucket: { rate: 1e-300 } }),
      RangeError,
      "guard bucket.rate (tokens per second) must be at least 5.6843418860808015e-11 for a burst of 1 (it must refill within 17592186044416 ms, 2^44), got 1e-300",
    ],
    [
      "a misspelt bucket field",
      given({ bucket: { rat: 5 } }),
      TypeError,
      'guard bucket has no option "rat"; did you mean "rate"?',
    ],
    [
      "a number for a bucket",
      given({ bucket: 5 }),
      TypeError,
      "guard bucket must be a Bucket or { rate, burst }, got 5",
    ],
    [
      "a breaker's k under its floor",
      given({ breaker: { k: 0.5 } }),
      RangeError,
      "guard breaker.k must be at least floor (1.1), got 0.5",
    ],
    [
      "a breaker's negative window",
      given({ breaker: { window: -1 } }),
      RangeError,
      "guard breaker.window (ms) must be above 0, got -1",
    ],
    [
      "a breaker with no probe (over the client preset, half-open: it could never close)",
      given({ breaker: { probe: Infinity } }),
      RangeError,
      "guard breaker.probe (ms) must be finite when halfOpen is true: a half-open breaker lets only the probe through, so with no probe it never closes (give a finite probe, or halfOpen: false), got Infinity",
    ],
    [
      "a misspelt breaker field",
      given({ breaker: { windw: 5 } }),
      TypeError,
      'guard breaker has no option "windw"; did you mean "window"?',
    ],
    [
      "a string for a breaker",
      given({ breaker: "sre" }),
      TypeError,
      'guard breaker must be a Breaker, Sre fields, true or false, got "sre"',
    ],
    [
      "a null breaker",
      given({ breaker: null }),
      TypeError,
      "guard breaker must be a Breaker, Sre fields, true or false, got null",
    ],
    [
      "a breaker's halfOpen given as text",
      given({ breaker: { halfOpen: "yes" } }),
      TypeError,
      'guard breaker.halfOpen must be true, false or { probes, share, inFlight, hold }, got string "yes"',
    ],
    [
      "a breaker's half-open trial of no probes",
      given({ breaker: { halfOpen: { probes: 0 } } }),
      RangeError,
      "guard breaker.halfOpen.probes must be 1 or more, got 0",
    ],
    ["a gate of none", given({ gate: 0 }), RangeError, "guard gate (calls in flight) must be 1 or more, got 0"],
    [
      "a shedder without a load",
      given({ shedder: {} }),
      TypeError,
      "guard shedder needs a load: pass load: () => thousandths (for example LoadSampler's load from @tideward/shedder/node)",
    ],
    [
      "a shedder's beta past 1",
      given({ shedder: { beta: 2 }, load: () => 0 }),
      RangeError,
      "guard shedder.beta must be 0 or more and under 1, got 2",
    ],
    ["no attempts", given({ retry: { attempts: 0 } }), RangeError, "guard retry.attempts must be 1 or more, got 0"],
    [
      "a retry cap under the base",
      given({ retry: { base: 100, cap: -1 } }),
      RangeError,
      "guard retry.cap (ms) must be at least the base (100), got -1",
    ],
    [
      "retries, as other libraries count them",
      given({ retry: { retries: 3 } }),
      TypeError,
      'guard retry has no option "retries"; the count is attempts, the first attempt included: { attempts: 4 } for 3 retries',
    ],
    ["a number for retry", given({ retry: 3 }), TypeError, "guard retry must be a Backoff or backoff fields, got 3"],
    [
      "a negative budget ratio",
      given({ budget: { ratio: -1 } }),
      RangeError,
      "guard budget.ratio must be 0 or more, got -1",
    ],
    [
      "a misspelt budget field",
      given({ budget: { raito: 1 } }),
      TypeError,
      'guard budget has no option "raito"; did you mean "ratio"?',
    ],
    [
      "a budget from an older @tideward/backoff (tryRetry, no grant)",
      given({ budget: { recordAttempt: () => undefined, tryRetry: () => true, available: () => 1 } }),
      TypeError,
      "guard budget must be a RetryBudget with grant and giveBack (@tideward/backoff 0.2)",
    ],
    [
      "a negative hedge delay",
      given({ hedge: { delay: -1 } }),
      RangeError,
      "guard hedge.delay (ms) must be 0 or more, got -1",
    ],
    ["no hedges", given({ hedge: { delay: 10, max: 0 } }), RangeError, "guard hedge.max must be 1 or more, got 0"],
    [
      "a misspelt hedge field",
      given({ hedge: { dealy: 10 } }),
      TypeError,
      'guard hedge has no option "dealy"; did you mean "delay"?',
    ],
    [
      "a hedge with no delay",
      given({ hedge: { max: 2 } }),
      TypeError,
      "guard hedge.delay (ms) is missing: hedging is { delay, max }, such as { delay: 50 }",
    ],
    [
      "a boolean for isFailure",
      given({ isFailure: true }),
      TypeError,
      "guard isFailure must be a function, got boolean true",
    ],
    [
      "an unknown overMaxRetryAfter",
      given({ overMaxRetryAfter: "wait" }),
      TypeError,
      'guard overMaxRetryAfter must be "cap" or "give-up", got "wait"',
    ],
    [
      "a negative maxRetryAfter",
      given({ maxRetryAfter: -1 }),
      RangeError,
      "guard maxRetryAfter (ms) must be 0 or more, got -1",
    ],
    [
      "a clock that reads NaN",
      given({ clock: () => Number.NaN }),
      RangeError,
      "guard clock() must be a finite number, got NaN",
    ],
    [
      "timers without set",
      given({ timers: { set: 1 } }),
      TypeError,
      "guard timers must have set(fn, ms) and clear(handle), got [object Object]",
    ],
    [
      "a function that is not one",
      () => guard(5 as never),
      TypeError,
      "guard expects a function to guard, got number 5",
    ],
    ["null options", () => guard(fn, null as never), TypeError, "guard options must be an object, got null"],
    ["an array of options", () => guard(fn, [] as never), TypeError, "guard options must be an object, got an array"],
    [
      "guardFetch: a judging option it owns",
      () => guardFetch(fetch, { isFailure: () => true } as never),
      TypeError,
      'guardFetch has no option "isFailure": HTTP judges answers (failOn, retryStatuses, methods)',
    ],
    [
      "guardFetch: retryOn, which is HTTP's too (not a misspelt retry)",
      () => guardFetch(fetch, { retryOn: () => true } as never),
      TypeError,
      'guardFetch has no option "retryOn": HTTP judges answers (failOn, retryStatuses, methods)',
    ],
    ...(
      [
        ["onRetry", 5, "number 5"],
        ["clock", "now", 'string "now"'],
        ["random", 1, "number 1"],
        ["onOutcome", {}, "object [object Object]"],
        ["load", 3, "number 3"],
      ] as const
    ).map(([k, v, got]): Refusal => [
      `guardFetch: ${k} that is not a function`,
      () => guardFetch(fetch, { [k]: v }),
      TypeError,
      `guardFetch ${k} must be a function, got ${got}`,
    ]),
    [
      "guardFetch: a misspelt option",
      () => guardFetch(fetch, { methds: ["GET"] } as never),
      TypeError,
      'guardFetch has no option "methds"; did you mean "methods"?',
    ],
    [
      "guardFetch: a status out of range",
      () => guardFetch(fetch, { retryStatuses: [99] }),
      RangeError,
      "guardFetch retryStatuses has an invalid entry 99",
    ],
    [
      "guardFetch: a string for statuses",
      () => guardFetch(fetch, { retryStatuses: "429" as never }),
      TypeError,
      'guardFetch retryStatuses must be an array, got "429"',
    ],
    [
      "guardFetch: a fetch that is not one",
      () => guardFetch("fetch" as never),
      TypeError,
      'guardFetch expects a fetch function, got string "fetch"',
    ],
    [
      "guardFetch: a retry field under its path",
      () => guardFetch(fetch, { retry: { cap: -1, base: 5 } }),
      RangeError,
      "guardFetch retry.cap (ms) must be at least the base (5), got -1",
    ],
  ];
  eachRefusal(cases, preset);

  it("options are read once: a getter cannot change a value between the check and the use", async () => {
    let reads = 0;
    const options = {
      get bucket() {
        reads++;
        return reads === 1 ? new Bucket(1, { burst: 1 }) : { rate: -1 };
      },
    };
    const g = guard(fn, options as never);
    expect(reads).toBe(1);
    expect(await g()).toBe(1);
  });
});

describe("admit reads a shedder and a gate as the guard reads them", () => {
  const thrown = (f: () => unknown): unknown => {
    try {
      f();
    } catch (e) {
      return e;
    }
    throw new Error("did not throw");
  };
  it.each([
    [
      "a shedder that is neither an instance nor fields",
      { shedder: 5 },
      "shedder must be a Shedder or Shed fields, got 5",
      TypeError,
    ],
    [
      "a misspelt shedder field",
      { shedder: { windw: 1 }, load: () => 0 },
      'shedder has no option "windw"; did you mean "window"?',
      TypeError,
    ],
    ["a shedder without a load", { shedder: {} }, "shedder needs a load", TypeError],
    ["a load that is not a function", { load: 5 }, "load must be a function", TypeError],
  ] as const)("%s: one message under each one's name, the path as data", (_, options, message, type) => {
    for (const [owner, build] of [
      ["guard", () => guard(fn, { ...preset, ...(options as object) })],
      ["admit", () => admit(options as never)],
    ] as const) {
      const e = thrown(build);
      expect(e).toBeInstanceOf(type);
      expect((e as Error).message.startsWith(`${owner} ${message}`)).toBe(true);
      expect(isOptionError(e) && e.path).toBe(`${owner}.${Object.keys(options)[0]}`);
    }
  });
  it("a gate of no places: each names what it counts", () => {
    expect(thrown(() => guard(fn, { ...preset, gate: 0 }))).toMatchObject({
      message: "guard gate (calls in flight) must be 1 or more, got 0",
    });
    expect(thrown(() => admit({ gate: 0 }))).toMatchObject({
      message: "admit gate (requests in flight) must be 1 or more, got 0",
    });
  });
});

describe("a bad scope handed to one call rejects it, naming the field; nothing runs", () => {
  const rows: readonly (readonly [string, unknown, ErrorConstructor, string])[] = [
    [
      "a NaN deadline",
      { deadline: Number.NaN },
      RangeError,
      "guard run deadline (an instant on the guard's clock, ms) must be a finite number, got NaN",
    ],
    [
      "a deadline as text",
      { deadline: "soon" },
      TypeError,
      'guard run deadline (an instant on the guard\'s clock, ms) must be a number, got string "soon"',
    ],
    [
      "a deadline of -Infinity",
      { deadline: -Infinity },
      RangeError,
      "guard run deadline (an instant on the guard's clock, ms) must be a finite number, got -Infinity",
    ],
    [
      "a signal that is not one",
      { signal: { aborted: "no" } },
      TypeError,
      "guard run signal must be an AbortSignal, got [object Object]",
    ],
    ["a misspelt field", { deadlin: 5 }, TypeError, 'guard run has no option "deadlin"; did you mean "deadline"?'],
    ["null", null, TypeError, "guard run scope must be an object, got null"],
  ];
  it.each(rows)("%s", async (_, scope, type, message) => {
    let calls = 0;
    const g = guard(() => ++calls, { ...preset, timeout: 1_000 });
    const error = await g.run(scope as never).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(type);
    expect((error as Error).message).toBe(message);
    expect(calls).toBe(0);
  });

  it("guardFetch names init.signal, the signal its caller gave", async () => {
    const f = guardFetch(() => Promise.resolve(new Response("ok")));
    await expect(f("http://x/", { signal: 5 as never })).rejects.toThrow(
      new TypeError("guardFetch init.signal must be an AbortSignal, got 5"),
    );
  });

  it("a deadline of Infinity is none, as the option's is", async () => {
    const g = guard(() => 7, preset);
    expect(await g.run({ deadline: Infinity })).toBe(7);
  });
});
