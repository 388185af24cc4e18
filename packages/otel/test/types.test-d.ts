// Type tests: vitest's typecheck runs tsc over them (they never run); each test fails on a type
// error inside it, and an `@ts-expect-error` that stops being an error is one.
import { metrics, trace } from "@opentelemetry/api";
import { Breaker } from "@tideward/breaker";
import type { Admission, Attempt, Guarded } from "@tideward/guard";
import { QuotaEngine, QuotaKey } from "@tideward/quota-engine";
import type { AtomicReport, Decision } from "@tideward/quota-engine";
import type { RedisDecision, RedisQuotaEngine } from "@tideward/redis";
import { Shedder } from "@tideward/shedder";
import { describe, expectTypeOf, test } from "vitest";
import {
  ATTRIBUTES,
  DURATION_BUCKETS,
  INSTRUMENTS,
  METRICS,
  instrumentAdmit,
  instrumentBreaker,
  instrumentGuard,
  instrumentQuota,
  instrumentShedder,
} from "@tideward/otel";
import type {
  InstrumentSpec,
  Instrumentation,
  InstrumentedGuard,
  InstrumentedQuota,
  TelemetryOptions,
} from "@tideward/otel";

const meter = metrics.getMeter("types");
const tracer = trace.getTracer("types");

describe("instrumentGuard", () => {
  test("is the guard it builds: the call's arguments and result, plus close()", () => {
    const getUser = instrumentGuard(
      (_: Attempt, id: string) => Promise.resolve({ id }),
      { retry: { attempts: 3 } },
      {
        meter,
        tracer,
        name: "users",
      },
    );
    expectTypeOf(getUser).toEqualTypeOf<InstrumentedGuard<[id: string], { id: string }>>();
    expectTypeOf(getUser).toMatchTypeOf<Guarded<[id: string], { id: string }>>();
    expectTypeOf(getUser).toMatchTypeOf<Instrumentation>();
    expectTypeOf(getUser("42")).toEqualTypeOf<Promise<{ id: string }>>();
    expectTypeOf(getUser.run({ deadline: 1_000 }, "42")).toEqualTypeOf<Promise<{ id: string }>>();
    expectTypeOf(getUser.close()).toEqualTypeOf<void>();
    // @ts-expect-error -- the guarded call takes the call's own arguments
    void getUser(42);
  });

  test("takes the guard's options, typed by the result, and telemetry with a name", () => {
    instrumentGuard(() => ({ status: 200 }), { isFailure: (_e, r) => (r?.status ?? 0) >= 500 }, { meter, name: "a" });
    instrumentGuard(() => 1, undefined, { tracer, name: "a", durations: false });
    // A priority function reads the call's arguments, as the guard's does.
    instrumentGuard(
      (_: Attempt, path: string) => path,
      { priority: (path) => (path === "/" ? 0 : 3) },
      { meter, name: "a" },
    );
    // @ts-expect-error -- the arguments are the call's
    instrumentGuard((_: Attempt, path: string) => path, { priority: (path: number) => path }, { meter, name: "a" });
    // @ts-expect-error -- every series needs its name
    instrumentGuard(() => 1, {}, { meter });
    // @ts-expect-error -- a guard option that does not exist
    instrumentGuard(() => 1, { retries: 3 }, { meter, name: "a" });
    // @ts-expect-error -- not a meter
    instrumentGuard(() => 1, {}, { meter: 1, name: "a" });
  });
});

describe("the other instrumentations", () => {
  test("an admission is still an Admission", () => {
    const admission = instrumentAdmit({ gate: 8 }, { meter, name: "web" });
    expectTypeOf(admission).toMatchTypeOf<Admission>();
    expectTypeOf(admission.close()).toEqualTypeOf<void>();
  });

  test("a quota store keeps its own answers: at once in process, promises on Redis", () => {
    const key = new QuotaKey("t", "s", "r");
    const local = instrumentQuota(new QuotaEngine(), { meter, name: "q" });
    expectTypeOf(local).toEqualTypeOf<InstrumentedQuota<QuotaEngine>>();
    expectTypeOf(local.checkTokenBucket(key, "l", 0)).toEqualTypeOf<Decision>();
    expectTypeOf(local.checkAtomic([], 0)).toEqualTypeOf<AtomicReport>();
    const redis = instrumentQuota({} as RedisQuotaEngine, { meter, name: "q" });
    expectTypeOf(redis.checkTokenBucket(key, "l", 0)).toEqualTypeOf<Promise<RedisDecision>>();
    expectTypeOf(local).not.toHaveProperty("snapshot"); // the engine's own, not the counted store's
  });

  test("a breaker and a shedder hand back a handle", () => {
    expectTypeOf(instrumentBreaker(new Breaker(), { meter, name: "b" })).toEqualTypeOf<Instrumentation>();
    expectTypeOf(instrumentShedder(new Shedder(), { meter, name: "s" })).toEqualTypeOf<Instrumentation>();
    // @ts-expect-error -- a breaker is wanted
    instrumentBreaker(new Shedder(), { meter, name: "b" });
  });
});

describe("the names", () => {
  test("are constants a dashboard's code can use", () => {
    expectTypeOf(METRICS.calls).toEqualTypeOf<"tideward.guard.calls">();
    expectTypeOf(ATTRIBUTES.errorType).toEqualTypeOf<"error.type">();
    expectTypeOf(DURATION_BUCKETS).toEqualTypeOf<readonly number[]>();
    expectTypeOf(INSTRUMENTS).toEqualTypeOf<readonly InstrumentSpec[]>();
    expectTypeOf<TelemetryOptions["name"]>().toEqualTypeOf<string>();
  });
});
