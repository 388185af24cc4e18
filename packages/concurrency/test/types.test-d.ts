// Type tests: vitest's typecheck runs tsc over them (they never run); each test fails on a type
// error inside it, and an `@ts-expect-error` that stops being an error is one.
import { describe, expectTypeOf, test } from "vitest";
import { Limiter, Queue, VegasLimit, aimd, criticality } from "@tideward/concurrency";
import type {
  Aimd,
  Limit,
  LimiterSnapshot,
  Refusal,
  RefusalReason,
  Token,
  Waiter,
  AimdLimit,
  FixedLimit,
  Gradient2Limit,
} from "@tideward/concurrency";

describe("Limiter", () => {
  test("takes one of the four algorithms and answers a Token or a Refusal", () => {
    expectTypeOf<ConstructorParameters<typeof AimdLimit>>().toEqualTypeOf<[policy?: Partial<Aimd>]>();
    expectTypeOf<Limit>().toEqualTypeOf<AimdLimit | VegasLimit | Gradient2Limit | FixedLimit>();
    const limiter = new Limiter(new VegasLimit(), { priorities: criticality });
    const answer = limiter.acquire(0, "critical");
    expectTypeOf(answer).toEqualTypeOf<Token | Refusal>();
    if (answer.ok) {
      expectTypeOf(answer).toEqualTypeOf<Token>();
      expectTypeOf<Token["pass"]>().parameters.toEqualTypeOf<[now: number]>();
      expectTypeOf<Token["drop"]>().parameters.toEqualTypeOf<[now: number]>();
      expectTypeOf<Token["ignore"]>().parameters.toEqualTypeOf<[]>();
    } else {
      expectTypeOf(answer.reason).toEqualTypeOf<RefusalReason>();
      // A refusal has nothing to settle.
      expectTypeOf(answer).not.toHaveProperty("pass");
    }
    // Settled only once it is known to be a token.
    expectTypeOf(answer).not.toHaveProperty("pass");
    // @ts-expect-error -- a priority is a number or a name
    limiter.acquire(0, { level: 1 });
    // @ts-expect-error -- not an algorithm
    new Limiter({ limit: 3 });
    expectTypeOf(limiter.snapshot()).toEqualTypeOf<LimiterSnapshot>();
    // @ts-expect-error -- presets are readonly
    aimd.max = 5;
  });
});

describe("Queue", () => {
  test("keeps the caller's value with its waiter", () => {
    const q = new Queue<() => void>({ target: 10 });
    const w = q.push(0, () => undefined, "critical");
    expectTypeOf(w).toEqualTypeOf<Waiter<() => void> | undefined>();
    expectTypeOf(q.dropped(0)).toEqualTypeOf<Waiter<() => void> | undefined>();
    // @ts-expect-error -- the value is of the queue's type
    q.push(0, 5);
  });
});
