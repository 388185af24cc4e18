// Type tests: vitest's typecheck runs tsc over them (they never run); each test fails on a type
// error inside it, and an `@ts-expect-error` that stops being an error is one.
import { describe, expectTypeOf, test } from "vitest";
import { Breaker, sre } from "@tideward/breaker";
import type { BreakerSnapshot, HalfOpen, Permit, RestoreOptions, Sre } from "@tideward/breaker";
import type { Span } from "@tideward/time";

describe("Breaker", () => {
  test("takes a Partial of the Sre policy laid over the preset", () => {
    expectTypeOf<ConstructorParameters<typeof Breaker>>().toEqualTypeOf<[policy?: Partial<Sre>, now?: number]>();
    expectTypeOf(sre).toEqualTypeOf<Sre>();
    expectTypeOf(new Breaker({ ...sre, k: 2 }).policy).toEqualTypeOf<Sre>();
    expectTypeOf<Sre["window"]>().toEqualTypeOf<Span>();
    expectTypeOf<keyof Sre>().toEqualTypeOf<"k" | "floor" | "protection" | "probe" | "size" | "window" | "halfOpen">();
    expectTypeOf<Sre["halfOpen"]>().toEqualTypeOf<boolean | HalfOpen | undefined>();
    expectTypeOf<HalfOpen>().toEqualTypeOf<{
      readonly probes?: number;
      readonly share?: number;
      readonly inFlight?: number;
      readonly hold?: Span;
    }>();
    // @ts-expect-error -- a share is a number, not a percentage as text
    new Breaker({ halfOpen: { share: "80%" } });
    // @ts-expect-error -- not a policy field
    new Breaker({ threshold: 0.5 });
    // @ts-expect-error -- a span is milliseconds, not text
    new Breaker({ window: "10s" });
    // @ts-expect-error -- the preset is readonly
    sre.k = 2;
  });

  test("allow answers a Permit or undefined (refused)", () => {
    const permit = new Breaker().allow(0, 0.5);
    expectTypeOf(permit).toEqualTypeOf<Permit | undefined>();
    // @ts-expect-error -- a refusal is undefined: check before settling
    permit.pass(1);
    if (permit !== undefined) {
      expectTypeOf<Permit["pass"]>().parameters.toEqualTypeOf<[now: number]>();
      expectTypeOf(permit.settled).toEqualTypeOf<boolean>();
    }
    expectTypeOf(new Breaker().ratio(0)).toEqualTypeOf<number>();
    // @ts-expect-error -- the roll is a draw in [0, 1), not optional
    new Breaker().allow(0);
  });
});

describe("snapshots", () => {
  test("snapshot answers plain data that restore takes back, with the options of a restore", () => {
    const b = new Breaker();
    const s = b.snapshot();
    expectTypeOf(s).toEqualTypeOf<BreakerSnapshot>();
    expectTypeOf(s.buckets[0]).toEqualTypeOf<readonly [success: number, failure: number, drop: number]>();
    expectTypeOf<Parameters<Breaker["restore"]>>().toEqualTypeOf<
      [snapshot: unknown, now: number, options?: RestoreOptions]
    >();
    expectTypeOf<RestoreOptions>().toEqualTypeOf<{ readonly age?: number; readonly sameClock?: boolean }>();
    // @ts-expect-error -- a restore needs the restoring clock's reading
    b.restore(s);
  });
});
