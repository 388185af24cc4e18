// The guard's retries: the backoff and the server's hint, a refused retry, a first attempt that
// answers, and the retry budget, shared between guards and earned only by calls that reached the
// backend; on a simulated scheduler at clocks near 0 and near Date.now().
import { describe, expect, it } from "vitest";
import { Jitter, RetryBudget } from "@tideward/backoff";
import { Breaker } from "@tideward/breaker";
import { guard, isRefusal } from "@tideward/guard";
import type { Attempt, RefuseEvent, RetryEvent } from "@tideward/guard";
import { Bucket, Gate } from "@tideward/limiters";
import { Scheduler, simulated } from "./scheduler";
import { outcome } from "./support/promises";
import { STARTS } from "./support/clocks";

describe.each(STARTS)("guard with the clock at %d", (t0) => {
  const sim = () => simulated(t0);

  it("retries with the backoff and the server's hint, whichever is longer", async () => {
    const { s, base } = sim();
    const retries: RetryEvent[] = [];
    let n = 0;
    const g = guard(
      () => {
        n++;
        if (n === 1) throw Object.assign(new Error("busy"), { retryAfter: 500 });
        if (n === 2) throw new Error("down");
        return "ok";
      },
      {
        ...base,
        retry: { attempts: 3, base: 100, cap: 1_000, jitter: Jitter.rigid },
        onRetry: (e) => void retries.push(e),
      },
    );
    const p = g();
    await s.run();
    expect(await p).toBe("ok");
    expect(retries.map((r) => [r.attempt, r.delay])).toEqual([
      [1, 500],
      [2, 200],
    ]);
    expect(s.now() - t0).toBe(700);
  });

  it("a refused retry ends the call with the backend's last answer, and says why through onRefuse", async () => {
    const { s, base } = sim();
    const refused: RefuseEvent[] = [];
    const breaker = new Breaker({ protection: 0, probe: Infinity }, t0);
    const g = guard(
      () => {
        throw new Error("down");
      },
      {
        ...base,
        breaker,
        retry: { attempts: 5, base: 1, cap: 1, jitter: Jitter.rigid },
        budget: false,
        onRefuse: (e) => void refused.push(e),
      },
    );
    const p = outcome(g());
    await s.run();
    // With no protection, after one failure the drop is 1/2 (a draw of 0.5 passes), after two
    // it is 2/3: the third attempt is refused, and the call ends with the second's error.
    expect(((await p).error as Error).message).toBe("down");
    expect(refused.map((r) => [r.kind, r.attempt])).toEqual([["breaker", 3]]);
  });

  it("a retrying guard whose first attempt answers makes one attempt; one that fails goes on with the same call", async () => {
    const { s, base } = sim();
    const budget = new RetryBudget({ ratio: 0.5, minPerSecond: 0 }, t0);
    const seen: number[] = [];
    const retries: RetryEvent[] = [];
    let fail = 0;
    const g = guard(
      (a: Attempt) => {
        seen.push(a.attempt);
        return fail-- > 0 ? Promise.reject(new Error("down")) : Promise.resolve(a.attempt);
      },
      {
        ...base,
        budget,
        retry: { attempts: 3, base: 10, cap: 10, jitter: Jitter.rigid },
        onRetry: (e) => void retries.push(e),
      },
    );
    expect(await g()).toBe(1);
    expect(await g()).toBe(1);
    expect(budget.available(s.now())).toBe(1); // two first attempts at a ratio of one half
    fail = 1;
    const p = g();
    await s.run();
    expect(await p).toBe(2);
    expect(seen).toEqual([1, 1, 1, 2]);
    expect(retries.map((r) => [r.attempt, r.delay])).toEqual([[1, 10]]);
    // Three first attempts, one retry spent.
    expect(budget.available(s.now())).toBe(0);
    // A first attempt refused by the bucket is a refusal, not a retry.
    const dry = guard(() => Promise.resolve(1), {
      ...base,
      retry: { attempts: 3 },
      bucket: new Bucket(1, { burst: 1, now: t0 }),
    });
    await dry();
    const e = (await outcome(dry())).error;
    expect(isRefusal(e) && e.kind).toBe("rate");
  });
});

describe("a shared retry budget", () => {
  it("counts the first attempts of a guard that never retries, which another guard may then spend", async () => {
    const s = new Scheduler(0);
    const budget = new RetryBudget({ ratio: 0.5, minPerSecond: 0 }, 0);
    const reads = guard(() => "ok", { clock: s.now, timers: s, budget });
    const writes = guard(
      () => {
        throw new Error("down");
      },
      { clock: s.now, timers: s, budget, retry: { attempts: 10, base: 1, cap: 1 } },
    );
    for (let i = 0; i < 4; i++) await reads();
    expect(budget.available(s.now())).toBe(2);
    const p = writes().catch((e: unknown) => e);
    await s.run();
    await p;
    // Five first attempts in all (four reads, one write) at a ratio of one half: two retries.
    expect(budget.available(s.now())).toBe(0);
  });
});

describe.each(STARTS)("what earns retry credit, with the clock at %d", (t0) => {
  // A call that never reached the backend earns no credit: 100 calls refused for a past deadline
  // earned 50 (at a ratio of one half), and the next failing call reached the backend 51 times.
  const refusals: readonly (readonly [string, (s: Scheduler, budget: RetryBudget) => () => Promise<unknown>])[] = [
    [
      "a past deadline",
      (s, budget) => {
        const g = guard(() => "ok", { clock: s.now, timers: s, budget, retry: { attempts: 2 } });
        return () => g.run({ deadline: t0 - 1 });
      },
    ],
    [
      "a signal already aborted",
      (s, budget) => {
        const g = guard(() => "ok", { clock: s.now, timers: s, budget });
        return () => g.run({ signal: AbortSignal.abort(new Error("gone")) });
      },
    ],
    [
      "the bucket (the direct path)",
      (s, budget) => {
        const bucket = new Bucket(0.001, { burst: 1, now: t0 });
        bucket.take(t0);
        const g = guard(() => "ok", { clock: s.now, timers: s, budget, bucket });
        return () => g();
      },
    ],
    [
      "the breaker, with retries",
      (s, budget) => {
        const breaker = new Breaker({ protection: 0, probe: Infinity }, t0);
        for (let i = 0; i < 10; i++) breaker.allow(t0, 0.99)?.fail(t0);
        const g = guard(() => "ok", {
          clock: s.now,
          timers: s,
          budget,
          breaker,
          random: () => 0,
          retry: { attempts: 3 },
        });
        return () => g();
      },
    ],
    [
      "a full gate, waiting for a token",
      (s, budget) => {
        const gate = new Gate(1);
        gate.enter();
        const g = guard(() => "ok", { clock: s.now, timers: s, budget, gate, bucket: { rate: 1_000 }, maxWait: 10 });
        return () => g();
      },
    ],
  ];
  it.each(refusals)("100 calls refused by %s earn nothing", async (_, make) => {
    const s = new Scheduler(t0);
    const budget = new RetryBudget({ ratio: 0.5, minPerSecond: 0 }, t0);
    const refused = make(s, budget);
    for (let i = 0; i < 100; i++) expect((await outcome(refused())).error).toBeDefined();
    expect(budget.available(s.now())).toBe(0);
    let reached = 0;
    const failing = guard(
      () => {
        reached++;
        throw new Error("down");
      },
      { clock: s.now, timers: s, budget, retry: { attempts: 100, base: 1, cap: 1 } },
    );
    const p = outcome(failing());
    await s.run();
    expect(((await p).error as Error).message).toBe("down");
    // Its own first attempt earns half a retry: none.
    expect(reached).toBe(1);
  });
});
