// Type tests: vitest's typecheck runs tsc over them (they never run); each test fails on a type
// error inside it, and an `@ts-expect-error` that stops being an error is one.
import { describe, expectTypeOf, test } from "vitest";
import { Bucket, Gate, Gcra, Period, Sliding } from "@tideward/limiters";
import type { BucketOptions, GcraOptions, PeriodAnswer, PeriodOptions, RateLimit } from "@tideward/limiters";

describe("the limiters", () => {
  test("every limiter answers rateLimit(now) with the one shared record", () => {
    expectTypeOf<ReturnType<(Bucket | Sliding | Period | Gcra | Gate)["rateLimit"]>>().toEqualTypeOf<RateLimit>();
    expectTypeOf(new Gate(1).rateLimit(0)).toEqualTypeOf<RateLimit>();
    const r = new Bucket(1).rateLimit(0);
    expectTypeOf(r.remaining).toEqualTypeOf<number>();
    // @ts-expect-error -- the report is read-only
    r.remaining = 5;
  });

  test("take, peek and next read alike across limiters", () => {
    expectTypeOf(new Bucket(1).take(0, 0.5)).toEqualTypeOf<boolean>();
    expectTypeOf(new Gcra(1).peek(0)).toEqualTypeOf<boolean>();
    expectTypeOf(new Sliding(1, 1).take(0)).toEqualTypeOf<boolean>();
    expectTypeOf(new Gate(0).enter()).toEqualTypeOf<boolean>();
    expectTypeOf([
      new Bucket(1).next(0, 2),
      new Sliding(1, 1).next(0),
      new Period(1, 1).next(0),
      new Gcra(1).next(0),
    ]).toEqualTypeOf<number[]>();
  });

  test("options are partial records, and the configuration a limiter exposes is readonly", () => {
    const options: BucketOptions & GcraOptions & PeriodOptions = { burst: 2, now: 0, align: true };
    expectTypeOf(new Bucket(1, options)).toEqualTypeOf<Bucket>();
    expectTypeOf<Record<never, never>>().toExtend<BucketOptions>();
    // @ts-expect-error -- not an option of a bucket
    new Bucket(1, { brust: 2 });
    // @ts-expect-error -- rate is readonly
    new Bucket(1).rate = 2;
    // @ts-expect-error -- a gate's held count is read-only
    new Gate(1).held = 3;
  });
});

describe("Period", () => {
  test("answers one of three strings, and a switch over them is exhaustive", () => {
    expectTypeOf<PeriodAnswer>().toEqualTypeOf<"under" | "hit" | "over">();
    expectTypeOf(new Period(1, 1).take(0)).toEqualTypeOf<PeriodAnswer>();
    expectTypeOf(new Period(1, 1).peek(0)).toEqualTypeOf<PeriodAnswer>();
    const admitted = (q: PeriodAnswer): boolean => {
      switch (q) {
        case "under":
        case "hit":
          return true;
        case "over":
          return false;
      }
    };
    expectTypeOf(admitted).returns.toEqualTypeOf<boolean>();
    // @ts-expect-error -- a PeriodAnswer is not a boolean
    const pass: boolean = new Period(1, 1).take(0);
    void pass;
    // @ts-expect-error -- Period.take takes no cost
    new Period(1, 1).take(0, 2);
  });
});
