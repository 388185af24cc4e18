// The guard's semantics on a simulated scheduler (a ManualClock and a timer queue), at clocks
// near 0 and near Date.now(): exact, instant, and the same at both scales. Here a call's
// arguments and answer, refusals, the limiters asked first and spent last, events and timers, and
// callbacks that throw; deadlines, timeouts and the caller's signal are in guard-deadline.test.ts,
// retries and their budget in guard-retry.test.ts, hedges in guard-hedge.test.ts.
import { describe, expect, it } from "vitest";
import { Jitter } from "@tideward/backoff";
import { Breaker } from "@tideward/breaker";
import { Refusal, guard, isRefusal } from "@tideward/guard";
import type { Attempt, OutcomeEvent } from "@tideward/guard";
import { Bucket, Gate } from "@tideward/limiters";
import { Shedder } from "@tideward/shedder";
import { simulated } from "./scheduler";
import { outcome } from "./support/promises";
import { STARTS } from "./support/clocks";

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
});
