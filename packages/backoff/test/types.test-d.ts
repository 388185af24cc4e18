// Type tests: checked by `tsc -p .` (typecheck), not run.
import { expectTypeOf } from "vitest";
import { Backoff, Jitter, RetryBudget, backoff, retry } from "@tideward/backoff";
import type { BackoffPolicy, Budget, RetryError } from "@tideward/backoff";

expectTypeOf(backoff.ceiling(1)).toEqualTypeOf<number | undefined>();
expectTypeOf(backoff.delay(1, { random: 0.5 })).toEqualTypeOf<number | undefined>();
expectTypeOf(backoff.schedule()).toEqualTypeOf<number[]>();
expectTypeOf(backoff.more(1)).toEqualTypeOf<boolean>();
expectTypeOf(new RetryBudget().tryRetry(0)).toEqualTypeOf<boolean>();
expectTypeOf<RetryError["reason"]>().toEqualTypeOf<"exhausted" | "retryAfter" | "deadline" | "budget">();

// A jitter narrows on its kind; only a spread has a fraction.
declare const j: Jitter;
if (j.kind === "spread") expectTypeOf(j.fraction).toEqualTypeOf<number>();
// @ts-expect-error -- a rigid jitter has no fraction
void Jitter.rigid.fraction;
// @ts-expect-error -- not one of the five kinds
new Backoff({ jitter: { kind: "wobbly" } });

// Policies are partial records over the preset, and a Backoff spreads into one.
expectTypeOf<Partial<BackoffPolicy>>().toMatchTypeOf<ConstructorParameters<typeof Backoff>[0]>();
new Backoff({ ...backoff, attempts: 5 });
new RetryBudget({ ratio: 0.1 } satisfies Partial<Budget>);
// @ts-expect-error -- a policy field is readonly
backoff.attempts = 4;

// retry resolves to what the call returns, sync or async.
expectTypeOf(retry(() => 1)).toEqualTypeOf<Promise<number>>();
expectTypeOf(retry(({ attempt, signal }) => Promise.resolve({ attempt, aborted: signal.aborted }))).toEqualTypeOf<Promise<{ attempt: number; aborted: boolean }>>();
