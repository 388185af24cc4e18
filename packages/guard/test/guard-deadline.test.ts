// The guard's deadlines, per-attempt timeouts and the caller's signal, on a simulated scheduler at
// clocks near 0 and near Date.now().
import { describe, expect, it } from "vitest";
import { Backoff, Jitter } from "@tideward/backoff";
import { Breaker } from "@tideward/breaker";
import { guard, isRefusal, isTimeoutError } from "@tideward/guard";
import type { OutcomeEvent } from "@tideward/guard";
import { Gate } from "@tideward/limiters";
import { simulated } from "./scheduler";
import { deferred, outcome } from "./support/promises";
import { STARTS } from "./support/clocks";

describe.each(STARTS)("guard with the clock at %d", (t0) => {
  const sim = () => simulated(t0);

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
