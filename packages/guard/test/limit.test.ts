// The adaptive concurrency limit as a stage of the client guard: a place per attempt in flight,
// settled by the attempt's outcome, judged by the guard's priority; at clocks near 0 and near
// Date.now(), on a simulated scheduler.
import { describe, expect, it } from "vitest";
import { AimdLimit, FixedLimit, Limiter, Priorities, criticality } from "@tideward/concurrency";
import { Breaker } from "@tideward/breaker";
import { guard, isRefusal, isTimeoutError } from "@tideward/guard";
import type { RefuseEvent } from "@tideward/guard";
import { Gate } from "@tideward/limiters";
import { simulated } from "./scheduler";
import { deferred, outcome } from "./support/promises";

const STARTS = [0, 1_700_000_000_123.375];

describe.each(STARTS)("guard limit with the clock at %d", (t0) => {
  const sim = () => simulated(t0);

  it("holds a place per call in flight and refuses past the limit with kind limit, retryAfter 0", async () => {
    const { s, base } = sim();
    const limiter = new Limiter(new FixedLimit(2), { now: t0 });
    const open = [deferred<string>(), deferred<string>()];
    let n = 0;
    const refusals: RefuseEvent[] = [];
    const g = guard(() => open[n++].promise, { ...base, limit: limiter, onRefuse: (e) => void refusals.push(e) });
    const a = g();
    const b = g();
    expect(limiter.flying).toBe(2);
    const { error } = await outcome(g());
    expect(isRefusal(error) && [error.kind, error.retryAfter]).toEqual(["limit", 0]);
    expect(String((error as Error).message)).toContain("the concurrency limit is full");
    expect(refusals.map((e) => e.kind)).toEqual(["limit"]);
    open[0].resolve("a");
    open[1].resolve("b");
    expect([await a, await b]).toEqual(["a", "b"]);
    expect(limiter.flying).toBe(0);
    await s.run();
    expect(s.pending).toBe(0);
  });

  it("a success is a sample, a timeout a drop, a failure says nothing (AIMD moves only on the first two)", async () => {
    const { s, base } = sim();
    const limiter = new Limiter(new AimdLimit({ initial: 2, min: 1, max: 10 }), { now: t0 });
    const hang = deferred<string>();
    let mode: "ok" | "fail" | "hang" = "ok";
    const g = guard(
      () => {
        if (mode === "fail") throw new Error("boom");
        if (mode === "hang") return hang.promise;
        return "ok";
      },
      { ...base, limit: limiter, timeout: 100 },
    );
    // One call alone finds 1 of 2 in flight: half the limit, so AIMD adds a place.
    expect(await g()).toBe("ok");
    expect(limiter.limit).toBe(3);
    mode = "fail";
    const failed = await outcome(g());
    expect((failed.error as Error).message).toBe("boom");
    expect([limiter.limit, limiter.flying]).toEqual([3, 0]);
    mode = "hang";
    const p = outcome(g());
    await s.advance(100);
    const timedOut = await p;
    expect(isTimeoutError(timedOut.error)).toBe(true);
    expect([limiter.limit, limiter.flying]).toEqual([2, 0]); // floor(3 × 0.9)
    hang.resolve("late");
    await s.run();
    expect(s.pending).toBe(0);
  });

  it("a place taken and given back when a later stage refuses teaches the limit nothing", async () => {
    const { base } = sim();
    const limiter = new Limiter(new AimdLimit({ initial: 2, min: 1, max: 10 }), { now: t0 });
    const breaker = new Breaker({ protection: 0 }, t0);
    for (let i = 0; i < 50; i++) breaker.allow(t0, () => 0.5)?.fail(t0);
    const g = guard(() => "ok", { ...base, random: () => 0, limit: limiter, breaker });
    const { error } = await outcome(g());
    expect(isRefusal(error) && error.kind).toBe("breaker");
    expect([limiter.limit, limiter.flying]).toEqual([2, 0]);
  });

  it("a guard's priority is every call's: sheddable calls stop at their share, and the refusal says reserved", async () => {
    const { base } = sim();
    const limiter = new Limiter(new FixedLimit(10), { now: t0, priorities: criticality });
    const hold = deferred<string>();
    const prefetch = guard(() => hold.promise, { ...base, limit: limiter, priority: "sheddable" });
    const user = guard(() => hold.promise, { ...base, limit: limiter, priority: 0 });
    const held = Array.from({ length: 6 }, () => prefetch());
    expect(limiter.flyingAt("sheddable")).toBe(6);
    const { error } = await outcome(prefetch());
    expect(isRefusal(error) && error.kind).toBe("reserved");
    expect(String((error as Error).message)).toContain("held for more important calls");
    const users = Array.from({ length: 4 }, () => user());
    expect(limiter.flying).toBe(10);
    expect(await outcome(user()).then((o) => isRefusal(o.error) && o.error.kind)).toBe("limit");
    hold.resolve("done");
    await Promise.all([...held, ...users]);
    expect(limiter.flying).toBe(0);
  });

  it("with a gate as well, a call the limit refuses gives the gate's place back", async () => {
    const { base } = sim();
    const limiter = new Limiter(new FixedLimit(1), { now: t0 });
    const gate = new Gate(5);
    const hold = deferred<string>();
    const g = guard(() => hold.promise, { ...base, limit: limiter, gate });
    const first = g();
    const { error } = await outcome(g());
    expect(isRefusal(error) && error.kind).toBe("limit");
    expect([gate.held, limiter.flying]).toEqual([1, 1]);
    hold.resolve("x");
    await first;
    expect([gate.held, limiter.flying]).toEqual([0, 0]);
  });
});

describe("guard limit options", () => {
  it("refuses what is not a Limiter, naming the option and the value", () => {
    expect(() => guard(() => 1, { limit: 5 as never })).toThrow(
      /guard limit must be a Limiter of @tideward\/concurrency .*got 5/,
    );
    expect(() => guard(() => 1, { limit: new AimdLimit() as never })).toThrow(/guard limit must be a Limiter/);
  });

  it("refuses a priority that is not a level of the limit's priorities, or not a number or a name", () => {
    const limiter = () => new Limiter(new FixedLimit(4), { priorities: criticality });
    expect(() => guard(() => 1, { limit: limiter(), priority: "urgent" })).toThrow(
      'guard priority must be a level of the limit\'s priorities: 0 to 3 or "critical_plus", "critical", "sheddable_plus", "sheddable", got "urgent"',
    );
    for (const bad of [4, -1, 0.5, Number.NaN])
      expect(() => guard(() => 1, { limit: limiter(), priority: bad })).toThrow(/guard priority must be a level/);
    expect(() => guard(() => 1, { limit: limiter(), priority: {} as never })).toThrow(
      "guard priority must be a level's number or name, got [object Object]",
    );
    expect(() => guard(() => 1, { limit: limiter(), priority: "sheddable" })).not.toThrow();
    // Without a limit, a priority is only checked for its type.
    expect(() => guard(() => 1, { priority: "anything" })).not.toThrow();
  });

  it("a misspelt option is named with the nearest", () => {
    expect(() => guard(() => 1, { limt: new Limiter(new FixedLimit(1)) } as never)).toThrow(/limit/);
  });

  it("priorities of many levels: a numbered level is accepted by number and by its name", () => {
    const levels = new Priorities({ levels: 3 });
    const limiter = new Limiter(new FixedLimit(3), { priorities: levels });
    expect(() => guard(() => 1, { limit: limiter, priority: 2 })).not.toThrow();
    expect(() =>
      guard(() => 1, { limit: new Limiter(new FixedLimit(3), { priorities: levels }), priority: "2" }),
    ).not.toThrow();
  });
});
