// The guard's semantics on a simulated scheduler (a ManualClock and a timer queue), at clocks
// near 0 and near Date.now(): exact, instant, and the same at both scales.
import { describe, expect, it } from "vitest";
import { Backoff, Jitter, RetryBudget } from "@tideward/backoff";
import { Breaker } from "@tideward/breaker";
import { Refusal, guard, isRefusal, isTimeoutError } from "@tideward/guard";
import type { Attempt, HedgeEvent, OutcomeEvent, RefuseEvent, RetryEvent } from "@tideward/guard";
import { Bucket, Gate } from "@tideward/limiters";
import { Shedder } from "@tideward/shedder";
import { Scheduler, simulated } from "./scheduler";
import { deferred, outcome } from "./support/promises";

const STARTS = [0, 1_700_000_000_123.375];

describe.each(STARTS)("guard with the clock at %d", (t0) => {
  const sim = () => simulated(t0);

  it("passes the caller's arguments after the attempt, and returns what the function returns", async () => {
    const { base } = sim();
    const seen: unknown[] = [];
    const g = guard((a: Attempt, x: number, y: string) => {
      seen.push(a.attempt, a.hedge, a.signal.aborted);
      return `${y}${x * 2}`;
    }, base);
    expect(await g(21, "=")).toBe("=42");
    expect(seen).toEqual([1, false, false]);
  });

  it("hands the function exactly the caller's arguments, however many, on every path", async () => {
    const { base } = sim();
    const paths = [
      {}, // a bare guard
      { breaker: new Breaker({}, t0), bucket: new Bucket(1e9, { now: t0 }) }, // the pair alone
      { breaker: new Breaker({}, t0), onOutcome: () => undefined }, // one attempt, with a listener
      { retry: { attempts: 2 } }, // may retry
      { timeout: 1_000 }, // may be cut off
    ];
    for (const extra of paths) {
      const g = guard((a: Attempt, ...rest: unknown[]) => [a.attempt, rest.length, ...rest], { ...base, ...extra });
      for (let n = 0; n <= 5; n++) {
        const args = Array.from({ length: n }, (_, i) => `a${i}`);
        expect(await g(...args)).toEqual([1, n, ...args]);
        expect(await g.run({}, ...args)).toEqual([1, n, ...args]);
      }
    }
  });

  it("a refusal is typed, branded and carries retryAfter; it survives a structured copy of its fields", async () => {
    const { s, base } = sim();
    const g = guard(() => "ok", { ...base, bucket: new Bucket(4, { burst: 1, now: t0 }) });
    await g();
    const e = (await outcome(g())).error;
    expect(e).toBeInstanceOf(Refusal);
    expect(isRefusal(e)).toBe(true);
    expect(isRefusal({ ...(e as object), isRefusal: true })).toBe(true); // another copy of the package
    expect(isRefusal(new Error("x"))).toBe(false);
    expect(isRefusal(e) && e.kind).toBe("rate");
    expect(isRefusal(e) && e.retryAfter).toBeCloseTo(250, 2);
    expect(s.pending).toBe(0);
  });

  it("a refusal from inside (an inner guard) is neither counted on the breaker nor retried", async () => {
    const { base } = sim();
    const breaker = new Breaker({ protection: 0 }, t0);
    let calls = 0;
    const inner = guard(() => "x", { ...base, bucket: new Bucket(1, { burst: 1, now: t0 }) });
    const outcomes: OutcomeEvent[] = [];
    const outer = guard(
      () => {
        calls++;
        return inner();
      },
      { ...base, breaker, retry: { attempts: 5, base: 1, cap: 1 }, onOutcome: (o) => void outcomes.push(o) },
    );
    expect(await outer()).toBe("x");
    const e = (await outcome(outer())).error;
    expect(isRefusal(e)).toBe(true);
    expect(calls).toBe(2); // not retried
    expect(outcomes.map((o) => o.outcome)).toEqual(["success", "refused"]);
    expect(breaker.ratio(t0)).toBe(0); // one success, no failure recorded
  });

  it("isFailure decides what the breaker counts; the default counts only thrown errors", async () => {
    const { base } = sim();
    const outcomes: string[] = [];
    const g = guard((_a, status: number) => ({ status }), {
      ...base,
      isFailure: (error, result) => error !== undefined || (result?.status ?? 0) >= 500,
      onOutcome: (o) => void outcomes.push(o.outcome),
    });
    await g(200);
    await g(503);
    expect(outcomes).toEqual(["success", "failure"]);
    const plain: string[] = [];
    const h = guard(
      (_a, fail: boolean) => {
        if (fail) throw new Error("boom");
        return { status: 503 };
      },
      { ...base, onOutcome: (o) => void plain.push(o.outcome) },
    );
    await h(false);
    await outcome(h(true));
    expect(plain).toEqual(["success", "failure"]);
  });

  it("the deadline abandons a function that ignores its signal: the call rejects at the deadline, the permit fails, nothing stays pending", async () => {
    const { s, base } = sim();
    const breaker = new Breaker({ protection: 0 }, t0);
    const gate = new Gate(1);
    const hanging = deferred<string>();
    let signal: AbortSignal | undefined;
    const outcomes: OutcomeEvent[] = [];
    const g = guard(
      (a) => {
        signal = a.signal;
        return hanging.promise;
      },
      { ...base, breaker, gate, deadline: 1_000, onOutcome: (o) => void outcomes.push(o) },
    );
    const p = outcome(g());
    await s.advance(999);
    expect(gate.held).toBe(1);
    await s.advance(1);
    const { error } = await p;
    expect(isTimeoutError(error) && error.scope).toBe("deadline");
    expect(isTimeoutError(error) && error.after).toBe(1_000);
    expect(signal?.aborted).toBe(true);
    expect(signal?.reason).toBe(error);
    expect(gate.held).toBe(0);
    expect(outcomes.map((o) => [o.outcome, o.duration])).toEqual([["timeout", 1_000]]);
    expect(breaker.ratio(s.now())).toBeGreaterThan(0); // counted as a failure
    hanging.resolve("late");
    await s.run();
    expect(outcomes).toHaveLength(1);
    expect(s.pending).toBe(0);
  });

  it("a per-attempt timeout is retried; the deadline bounds the whole call", async () => {
    const { s, base } = sim();
    const starts: number[] = [];
    const g = guard(
      () => {
        starts.push(s.now() - t0);
        return new Promise<never>(() => undefined);
      },
      {
        ...base,
        timeout: 100,
        deadline: 350,
        retry: new Backoff({ attempts: 10, base: 10, cap: 10, jitter: Jitter.rigid }),
        budget: false,
      },
    );
    const p = outcome(g());
    await s.run();
    const { error } = await p;
    expect(starts).toEqual([0, 110, 220, 330]);
    expect(isTimeoutError(error) && error.scope).toBe("deadline"); // the fourth is cut by the deadline at 350
    expect(isTimeoutError(error) && error.after).toBe(20);
  });

  it("asks the bucket and the gate first and spends them last: a call the breaker refuses takes no token and no place", async () => {
    const { s, base } = sim();
    // A breaker that has seen only failures, and a roll that always lands under its drop ratio.
    const breaker = new Breaker({}, t0);
    for (let i = 0; i < 200; i++) breaker.allow(t0, 0)?.fail(t0);
    expect(breaker.ratio(t0)).toBeGreaterThan(0);
    const bucket = new Bucket(1, { burst: 1, now: t0 });
    const gate = new Gate(1);
    const refused = guard(() => "ok", { ...base, random: () => 0, bucket, gate, breaker });
    const e1 = (await outcome(refused())).error;
    expect(isRefusal(e1) && e1.kind).toBe("breaker");
    expect(bucket.peek(s.now())).toBe(true);
    expect(gate.held).toBe(0);
    // And a call every policy admits spends both: the bucket's one token, held to the gate's one place.
    const admitted = guard(() => gate.held, { ...base, bucket, gate });
    expect(await admitted()).toBe(1);
    expect(gate.held).toBe(0);
    expect(bucket.peek(s.now())).toBe(false);
  });

  it("waits for a token up to maxWait, and refuses with the bucket's wait when it would be longer", async () => {
    const { s, base } = sim();
    const bucket = new Bucket(10, { burst: 1, now: t0 }); // a token every 100 ms
    const at: number[] = [];
    const g = guard(() => void at.push(s.now() - t0), { ...base, bucket, maxWait: 150 });
    const calls = [outcome(g()), outcome(g()), outcome(g())];
    await s.run();
    const results = await Promise.all(calls);
    expect(results.map((r) => (r.error === undefined ? "ok" : (r.error as Refusal).kind))).toEqual([
      "ok",
      "ok",
      "rate",
    ]);
    expect(at[0]).toBe(0);
    expect(at[1]).toBeCloseTo(100, 3);
  });

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

  it("the caller's signal stops the call at once, mid-attempt and mid-wait, without counting it", async () => {
    const { s, base } = sim();
    const breaker = new Breaker({ protection: 0 }, t0);
    const outcomes: string[] = [];
    const g = guard(() => new Promise<never>(() => undefined), {
      ...base,
      breaker,
      onOutcome: (o) => void outcomes.push(o.outcome),
    });
    const controller = new AbortController();
    const p = outcome(g.run({ signal: controller.signal }));
    await s.settle();
    controller.abort(new Error("user left"));
    expect(((await p).error as Error).message).toBe("user left");
    expect(outcomes).toEqual(["cancelled"]);
    expect(breaker.ratio(s.now())).toBe(0);
    // Mid-wait: the backoff sleep ends at once.
    const h = guard(
      () => {
        throw new Error("down");
      },
      { ...base, retry: { attempts: 3, base: 60_000, cap: 60_000 }, budget: false },
    );
    const c2 = new AbortController();
    const q = outcome(h.run({ signal: c2.signal }));
    await s.settle();
    expect(s.pending).toBe(1); // the backoff's timer
    c2.abort(new Error("enough"));
    expect(((await q).error as Error).message).toBe("enough");
    expect(s.pending).toBe(0);
    // Already aborted: the function is never called.
    let called = false;
    const k = guard(() => void (called = true), base);
    const reason = new Error("before");
    expect((await outcome(k.run({ signal: AbortSignal.abort(reason) }))).error).toBe(reason);
    expect(called).toBe(false);
  });

  it("a deadline handed by the caller holds, and one already passed is a deadline refusal", async () => {
    const { s, base } = sim();
    const g = guard(() => new Promise<never>(() => undefined), base);
    const past = await outcome(g.run({ deadline: t0 }));
    expect(isRefusal(past.error) && past.error.kind).toBe("deadline");
    const p = outcome(g.run({ deadline: t0 + 250 }));
    await s.run();
    const { error } = await p;
    expect(isTimeoutError(error) && error.after).toBe(250);
  });

  it("a hedge starts after its delay, the first good answer wins, the loser is aborted and its result discarded", async () => {
    const { s, base } = sim();
    const answers = [deferred<string>(), deferred<string>()];
    const signals: AbortSignal[] = [];
    const hedges: HedgeEvent[] = [];
    const discarded: string[] = [];
    const outcomes: OutcomeEvent[] = [];
    const g = guard(
      (a) => {
        signals.push(a.signal);
        return answers[a.attempt - 1].promise;
      },
      {
        ...base,
        hedge: { delay: 50 },
        discard: (r) => void discarded.push(r),
        onHedge: (e) => void hedges.push(e),
        onOutcome: (o) => void outcomes.push(o),
      },
    );
    const p = g();
    await s.advance(50);
    expect(hedges).toEqual([{ attempt: 2, inFlight: 2, elapsed: 50 }]);
    answers[1].resolve("second");
    expect(await p).toBe("second");
    expect(signals[0].aborted).toBe(true);
    expect(signals[1].aborted).toBe(false);
    answers[0].resolve("first, late");
    await s.run();
    expect(discarded).toEqual(["first, late"]);
    expect(outcomes.map((o) => [o.attempt, o.hedge, o.outcome])).toEqual([
      [2, true, "success"],
      [1, false, "cancelled"],
    ]);
    expect(s.pending).toBe(0);
  });

  it("hedges spend the retry budget; with it spent, no hedge starts and the first attempt answers", async () => {
    const { s, base } = sim();
    const budget = new RetryBudget({ ratio: 0, minPerSecond: 0.1, window: 10_000 }, t0); // one retry
    let calls = 0;
    const refused: RefuseEvent[] = [];
    const g = guard(
      (a) => {
        calls++;
        return new Promise<number>((resolve) => s.set(() => resolve(a.attempt), 100));
      },
      { ...base, budget, hedge: { delay: 10, max: 3 }, onRefuse: (e) => void refused.push(e) },
    );
    const first = g();
    await s.run();
    expect(await first).toBe(1); // the first attempt answered at 100, before its hedge's answer at 110
    expect(calls).toBe(2); // one hedge, then the budget refused the next
    expect(refused.map((r) => r.kind)).toEqual(["budget"]);
    const second = g();
    await s.run();
    expect(await second).toBe(1);
    expect(calls).toBe(3); // no credit left: no hedge at all
  });

  it("a failed attempt starts the next hedge at once, and a round where all fail answers the last failure", async () => {
    const { s, base } = sim();
    const at: number[] = [];
    const g = guard(
      (a) => {
        at.push(s.now() - t0);
        return Promise.reject(new Error(`fail ${a.attempt}`));
      },
      { ...base, hedge: { delay: 1_000, max: 2 }, budget: false },
    );
    const p = outcome(g());
    await s.run();
    expect(((await p).error as Error).message).toBe("fail 3");
    expect(at).toEqual([0, 0, 0]);
  });

  it("events cost nothing when nobody listens, and carry what a counter or a histogram needs when someone does", async () => {
    const { s, base } = sim();
    const outcomes: OutcomeEvent[] = [];
    const g = guard(
      async () => {
        await new Promise((r) => s.set(r as () => void, 40));
        return 7;
      },
      { ...base, deadline: 1_000, onOutcome: (o) => void outcomes.push(o) },
    );
    const p = g();
    await s.run();
    expect(await p).toBe(7);
    expect(outcomes).toEqual([
      { outcome: "success", attempt: 1, hedge: false, duration: 40, error: undefined, result: 7 },
    ]);
  });

  it("keeps no timer while idle: a thousand guards and no calls set none; after calls, none is left behind", async () => {
    const { s, base } = sim();
    const guards = Array.from({ length: 1_000 }, () =>
      guard(() => "x", {
        ...base,
        timeout: 5_000,
        deadline: 10_000,
        breaker: {},
        bucket: { rate: 100 },
        hedge: { delay: 100 },
      }),
    );
    expect(s.pending).toBe(0);
    await Promise.all(guards.slice(0, 10).map((g) => g()));
    await s.run(); // a timeout timer may run out after the calls; none sets itself again
    expect(s.pending).toBe(0);
  });

  it("many attempts with one fixed timeout share one timer", async () => {
    const { s, base } = sim();
    const answers: { resolve: (v: number) => void }[] = [];
    const g = guard(() => new Promise<number>((resolve) => answers.push({ resolve })), { ...base, timeout: 1_000 });
    const calls = Array.from({ length: 100 }, () => g());
    await s.settle();
    expect(s.pending).toBe(1);
    answers.forEach((a, i) => a.resolve(i));
    expect(await Promise.all(calls)).toEqual(answers.map((_, i) => i));
    await s.run();
    expect(s.delays.length).toBe(1); // the one timer ran out with nothing left to cut off
  });

  it("a function that throws at once is a rejection counted as a failure, with or without retries", async () => {
    const { s, base } = sim();
    for (const retry of [undefined, { attempts: 3, base: 1, cap: 1, jitter: Jitter.rigid }]) {
      const breaker = new Breaker({ protection: 0 }, t0);
      const outcomes: string[] = [];
      let calls = 0;
      const g = guard(
        (a: Attempt) => {
          calls++;
          throw new Error(`sync ${a.attempt}`);
        },
        { ...base, breaker, retry, budget: false, random: () => 0.99, onOutcome: (o) => void outcomes.push(o.outcome) },
      );
      let p: Promise<never> | undefined;
      expect(() => (p = g())).not.toThrow();
      expect(p).toBeInstanceOf(Promise);
      const settled = outcome(p as Promise<never>);
      await s.run();
      const n = retry === undefined ? 1 : 3;
      expect(((await settled).error as Error).message).toBe(`sync ${n}`);
      expect(calls).toBe(n);
      expect(outcomes).toEqual(Array.from({ length: n }, () => "failure"));
      expect(breaker.ratio(s.now())).toBeGreaterThan(0); // the failures reached the breaker
    }
  });

  it("a listener, a clock or a random source that throws rejects the call, never throws at the caller, and gives back what was taken", async () => {
    const { s, base } = sim();
    for (const [retry, timeout] of [
      [undefined, undefined],
      [{ attempts: 2 }, undefined],
      [undefined, 1_000],
      [{ attempts: 2 }, 1_000],
    ] as const) {
      const gate = new Gate(1);
      const shedder = new Shedder({}, t0);
      const loud = guard(() => Promise.resolve(1), {
        ...base,
        gate,
        shedder,
        load: () => 0,
        retry,
        timeout,
        onOutcome: () => {
          throw new Error("listener");
        },
      });
      const p = loud();
      expect(((await outcome(p)).error as Error).message).toBe("listener");
      expect([gate.held, shedder.flying]).toEqual([0, 0]);
      // The breaker draws only while it throttles: one failure with no protection makes it throttle.
      const throttled = new Breaker({ protection: 0, probe: Infinity }, s.now());
      throttled.allow(s.now(), 0)?.fail(s.now());
      const dice = guard(() => Promise.resolve(1), {
        ...base,
        gate,
        shedder,
        load: () => 0,
        breaker: throttled,
        retry,
        timeout,
        random: () => {
          throw new Error("no dice");
        },
      });
      expect(((await outcome(dice())).error as Error).message).toBe("no dice");
      expect([gate.held, shedder.flying]).toEqual([0, 0]);
    }
    let broken = false;
    const clock = () => {
      if (broken) throw new Error("no clock");
      return s.now();
    };
    const g = guard(() => Promise.resolve(1), { ...base, clock });
    broken = true;
    expect(((await outcome(g())).error as Error).message).toBe("no clock");
    // An attempt cut off by its timeout, reported to a listener that throws: the call ends with
    // the listener's error, and the timer that cut it off does not throw.
    const hung = guard(() => new Promise<never>(() => undefined), {
      ...base,
      timeout: 100,
      onOutcome: () => {
        throw new Error("listener at the timeout");
      },
    });
    const p = outcome(hung());
    await s.run();
    expect(((await p).error as Error).message).toBe("listener at the timeout");
    expect(s.pending).toBe(0);
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

  it("attempts with different cut-offs are cut off each at its own instant, in order", async () => {
    const { s, base } = sim();
    const cut: number[] = [];
    const g = guard(() => new Promise<never>(() => undefined), {
      ...base,
      onOutcome: () => void cut.push(Math.round(s.now() - t0)),
    });
    const ps = [300, 100, 200, 100].map((d) => outcome(g.run({ deadline: t0 + d })));
    await s.run();
    await Promise.all(ps);
    expect(cut).toEqual([100, 100, 200, 300]);
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
