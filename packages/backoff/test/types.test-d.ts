// Type tests: vitest's typecheck runs tsc over them (they never run); each test fails on a type
// error inside it, and an `@ts-expect-error` that stops being an error is one.
import { describe, expectTypeOf, test } from "vitest";
import { Backoff, Jitter, RetryBudget, backoff, budget, isRetryError, retry, sleep } from "@tideward/backoff";
import type { BackoffPolicy, Budget, GiveUp, RetryError, RetryContext, RetryOptions, Sleep } from "@tideward/backoff";

describe("Backoff", () => {
  test("answers numbers, and undefined past the last attempt", () => {
    expectTypeOf(backoff.ceiling(1)).toEqualTypeOf<number | undefined>();
    expectTypeOf(backoff.delay(1, { random: 0.5 })).toEqualTypeOf<number | undefined>();
    expectTypeOf(backoff.schedule()).toEqualTypeOf<number[]>();
    expectTypeOf(backoff.more(1)).toEqualTypeOf<boolean>();
  });

  test("takes a Partial of the policy, and a Backoff spreads into one", () => {
    expectTypeOf<Partial<BackoffPolicy>>().toExtend<ConstructorParameters<typeof Backoff>[0]>();
    expectTypeOf(new Backoff({ ...backoff, attempts: 5 })).toEqualTypeOf<Backoff>();
    expectTypeOf(backoff.with({ attempts: 5 })).toEqualTypeOf<Backoff>();
    expectTypeOf(backoff.policy()).toEqualTypeOf<BackoffPolicy>();
    // @ts-expect-error -- not a policy field
    new Backoff({ attempt: 5 });
    // @ts-expect-error -- a span is milliseconds, not text
    new Backoff({ base: "100ms" });
  });

  test("its fields are readonly", () => {
    // @ts-expect-error -- a policy field is readonly
    backoff.attempts = 4;
  });
});

describe("Jitter", () => {
  test("is the union of the five kinds", () => {
    expectTypeOf<Jitter["kind"]>().toEqualTypeOf<"rigid" | "full" | "equal" | "decorrelated" | "spread">();
    expectTypeOf(Jitter.spread(0.2)).toExtend<Jitter>();
    expectTypeOf(Jitter.full).toExtend<Jitter>();
  });

  test("narrows on its kind; only a spread has a fraction", () => {
    const j = Jitter.rigid as Jitter;
    if (j.kind === "spread") expectTypeOf(j.fraction).toEqualTypeOf<number>();
    // @ts-expect-error -- a rigid jitter has no fraction
    void Jitter.rigid.fraction;
    // @ts-expect-error -- not one of the five kinds
    new Backoff({ jitter: { kind: "wobbly" } });
    // @ts-expect-error -- a spread needs its fraction
    new Backoff({ jitter: { kind: "spread" } });
  });
});

describe("retry", () => {
  test("resolves to what the call returns, sync or async", () => {
    expectTypeOf(retry(() => 1)).toEqualTypeOf<Promise<number>>();
    expectTypeOf(retry(({ attempt, signal }) => Promise.resolve({ attempt, aborted: signal.aborted }))).toEqualTypeOf<
      Promise<{ attempt: number; aborted: boolean }>
    >();
    expectTypeOf<Parameters<Parameters<typeof retry>[0]>[0]>().toEqualTypeOf<RetryContext>();
  });

  test("takes a Backoff or a Partial policy", () => {
    expectTypeOf<{ backoff: Backoff }>().toExtend<RetryOptions>();
    expectTypeOf<{ backoff: { attempts: number } }>().toExtend<RetryOptions>();
    // @ts-expect-error -- retryOn is a predicate
    void retry(() => 1, { retryOn: true });
  });

  test("gives up with a RetryError carrying one of four reasons", () => {
    expectTypeOf<RetryError["reason"]>().toEqualTypeOf<GiveUp>();
    expectTypeOf<GiveUp>().toEqualTypeOf<"exhausted" | "retryAfter" | "deadline" | "budget">();
    const e: unknown = new Error("x");
    if (isRetryError(e)) expectTypeOf(e).toEqualTypeOf<RetryError>();
    expectTypeOf(sleep).toEqualTypeOf<Sleep>();
  });
});

describe("RetryBudget", () => {
  test("takes a Partial of its policy and answers booleans", () => {
    expectTypeOf(new RetryBudget({ ratio: 0.1 } satisfies Partial<Budget>).tryRetry(0)).toEqualTypeOf<boolean>();
    expectTypeOf(budget).toEqualTypeOf<Budget>();
    // @ts-expect-error -- not a budget field
    new RetryBudget({ ratoi: 0.1 });
  });

  test("grants with a receipt, a number, that giveBack takes", () => {
    const b = new RetryBudget();
    expectTypeOf(b.grant(0)).toEqualTypeOf<number>();
    expectTypeOf<Parameters<RetryBudget["giveBack"]>>().toEqualTypeOf<[receipt: number]>();
    expectTypeOf(b.giveBack(b.grant(0))).toEqualTypeOf<void>();
  });
});
