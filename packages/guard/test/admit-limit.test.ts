// admit with an adaptive concurrency limit, priorities and a line to wait in: verdicts, what a
// request holds and gives back, and the invariants under arbitrary traffic at clocks near 0 and
// near Date.now().
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { AimdLimit, FixedLimit, Limiter, Queue, criticality } from "@tideward/concurrency";
import { admit, admitFetch } from "@tideward/guard";
import type { Verdict } from "@tideward/guard";
import { Shedder } from "@tideward/shedder";
import { ManualClock } from "@tideward/time";

const STARTS = [0, 1_700_000_000_123.375];

/** Lets promise callbacks run. */
async function flush(): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve();
}

describe.each(STARTS)("admit limit with the clock at %d", (t0) => {
  it("refuses past the limit with 503, reason limit and the busy Retry-After; a release gives the place back", () => {
    const clock = new ManualClock(t0);
    const limiter = new Limiter(new FixedLimit(2), { now: t0 });
    const a = admit({ limit: limiter, clock: clock.now, busyRetryAfter: 2_000 });
    expect(a.limit).toBe(limiter);
    const v1 = a.check() as Verdict;
    const v2 = a.check() as Verdict;
    expect([v1.allowed, v2.allowed, limiter.flying]).toEqual([true, true, 2]);
    const refused = a.check() as Verdict;
    expect([refused.allowed, refused.status, refused.reason, refused.retryAfter]).toEqual([false, 503, "limit", 2_000]);
    expect(refused.headers).toEqual([["Retry-After", "2"]]);
    refused.release(); // nothing to give back
    expect(limiter.flying).toBe(2);
    v1.release();
    v1.release(); // once only
    expect(limiter.flying).toBe(1);
    expect((a.check() as Verdict).allowed).toBe(true);
  });

  it("a release after a success is a round-trip sample; after a failure, nothing (AIMD grows only on the first)", () => {
    const clock = new ManualClock(t0);
    const limiter = new Limiter(new AimdLimit({ initial: 2, min: 1, max: 10 }), { now: t0 });
    const a = admit({ limit: limiter, clock: clock.now });
    const ok = a.check() as Verdict;
    clock.advance(5);
    ok.release(true);
    expect(limiter.limit).toBe(3);
    const failed = a.check() as Verdict;
    failed.release(false);
    expect([limiter.limit, limiter.flying]).toEqual([3, 0]);
  });

  it("a request a per-key limit refuses gives its place back and teaches the limit nothing", () => {
    const clock = new ManualClock(t0);
    const limiter = new Limiter(new AimdLimit({ initial: 2, min: 1, max: 10 }), { now: t0 });
    const a = admit({ limit: limiter, clock: clock.now, limits: [{ name: "one", quota: 1, window: 1_000 }] });
    const first = a.check("k") as Verdict;
    const second = a.check("k") as Verdict;
    expect([first.allowed, second.allowed, second.reason]).toEqual([true, false, "rate"]);
    expect([limiter.limit, limiter.flying]).toEqual([2, 1]);
    first.release(false);
    expect(limiter.flying).toBe(0);
  });

  it("priority: sheddable requests stop at their share with reason reserved; critical ones take the rest", () => {
    const clock = new ManualClock(t0);
    const limiter = new Limiter(new FixedLimit(10), { now: t0, priorities: criticality });
    const a = admit({ limit: limiter, clock: clock.now });
    const held: Verdict[] = [];
    for (let i = 0; i < 6; i++) held.push(a.check("", 1, "sheddable") as Verdict);
    expect(held.every((v) => v.allowed)).toBe(true);
    const late = a.check("", 1, "sheddable") as Verdict;
    expect([late.allowed, late.status, late.reason]).toEqual([false, 503, "reserved"]);
    for (let i = 0; i < 4; i++) held.push(a.check("", 1, 0) as Verdict);
    expect([held.every((v) => v.allowed), limiter.flying]).toEqual([true, 10]);
    expect((a.check("", 1, "critical_plus") as Verdict).reason).toBe("limit");
    for (const v of held) v.release();
    expect(limiter.flying).toBe(0);
  });

  it("a priority that is not a level (unknown name, out of range, NaN, a fraction, an object) counts as the least important", () => {
    const limiter = new Limiter(new FixedLimit(10), { now: t0, priorities: criticality });
    const a = admit({ limit: limiter, clock: () => t0 });
    const odd = ["vip", 4, -1, Number.NaN, 0.5, Infinity, {} as never, "0"];
    let n = 0;
    for (let i = 0; i < 20; i++) if ((a.check("", 1, odd[i % odd.length]) as Verdict).allowed) n++;
    expect(n).toBe(6); // sheddable's 60 % of 10, never more
    expect(limiter.flyingAt("sheddable")).toBe(6);
  });

  it("the priority option is the level of requests that give none; a bad one is refused by name", () => {
    const limiter = new Limiter(new FixedLimit(10), { now: t0, priorities: criticality });
    const a = admit({ limit: limiter, clock: () => t0, priority: "sheddable" });
    let n = 0;
    while ((a.check() as Verdict).allowed) n++;
    expect(n).toBe(6);
    expect((a.check("", 1, "critical") as Verdict).allowed).toBe(true);
    expect(() => admit({ limit: new Limiter(new FixedLimit(1), { priorities: criticality }), priority: 7 })).toThrow(
      /admit priority must be a level of the limit's priorities: 0 to 3 or .*got 7/,
    );
    expect(() => admit({ limit: {} as never })).toThrow(/admit limit must be a Limiter of @tideward\/concurrency/);
    expect(() => admit({ limt: 1 } as never)).toThrow(/limit/);
  });

  it("a shedder with levels in admit refuses the least important first when hot and full", () => {
    const shedder = new Shedder({}, t0, criticality);
    // A second of requests every 10 ms, each taking 50 ms, on a cool CPU: maxFlight 5, four in flight.
    const flying: { end: number; pass: (now: number) => void }[] = [];
    for (let t = t0; t < t0 + 1_000; t += 10) {
      for (const f of flying.splice(0))
        if (f.end <= t) f.pass(f.end);
        else flying.push(f);
      const ticket = shedder.allow(t, 0);
      if (ticket !== undefined) flying.push({ end: t + 50, pass: (now) => ticket.pass(now) });
    }
    const a = admit({ shedder, load: () => 900, clock: () => t0 + 1_000 });
    expect((a.check("", 1, "sheddable") as Verdict).reason).toBe("shed");
    const critical = a.check("", 1, "critical_plus") as Verdict;
    expect(critical.allowed).toBe(true);
    critical.release(false);
  });

  it("check refuses a signal that is not one, by name", () => {
    const a = admit({ limit: new Limiter(new FixedLimit(1)), clock: () => t0 });
    expect(() => a.check("", 1, undefined, {} as never)).toThrow("admit check signal must be an AbortSignal");
  });
});

describe.each(STARTS)("admit wait with the clock at %d", (t0) => {
  const build = (places: number, policy: { interval?: number; target?: number; capacity?: number } = {}) => {
    const clock = new ManualClock(t0);
    const limiter = new Limiter(new FixedLimit(places), { now: t0, priorities: criticality });
    const queue = new Queue({ interval: 100, target: 5, ...policy }, { now: t0, priorities: criticality });
    // Requests that give no priority are the most important: one place is theirs to take.
    const a = admit({ limit: limiter, wait: queue, clock: clock.now, priority: "critical_plus" });
    return { clock, limiter, a };
  };

  it("a request the limit refuses waits, holding nothing, and is served when a place frees", async () => {
    const { clock, limiter, a } = build(1);
    expect(a.waits).toBe(true);
    const first = a.check() as Verdict;
    const waiting = a.check();
    expect(waiting).toBeInstanceOf(Promise);
    expect([a.waiting, limiter.flying]).toEqual([1, 1]);
    clock.advance(20);
    first.release();
    const served = await waiting;
    expect([served.allowed, a.waiting, limiter.flying]).toEqual([true, 0, 1]);
    served.release();
    expect(limiter.flying).toBe(0);
  });

  it("the most important waiter is served first", async () => {
    const { a, limiter } = build(10);
    const held = Array.from({ length: 10 }, () => a.check() as Verdict);
    const order: string[] = [];
    const low = (a.check("", 1, "sheddable") as Promise<Verdict>).then((v) => (order.push("sheddable"), v));
    const high = (a.check("", 1, "critical_plus") as Promise<Verdict>).then((v) => (order.push("critical_plus"), v));
    held.pop()?.release();
    const first = await high;
    expect([order, limiter.flying, a.waiting]).toEqual([["critical_plus"], 10, 1]);
    // The sheddable waiter goes once it fits its 60 %: five more places freed.
    for (let i = 0; i < 4; i++) held.pop()?.release();
    await flush();
    expect(order).toEqual(["critical_plus"]);
    held.pop()?.release();
    const second = await low;
    expect([order, limiter.flying, a.waiting]).toEqual([["critical_plus", "sheddable"], 6, 0]);
    for (const v of [first, second, ...held]) v.release();
    expect(limiter.flying).toBe(0);
  });

  it("a waiter the queue gives up on (its wait ran out) is refused as the limit refused it", async () => {
    const { clock, a, limiter } = build(1, { interval: 50, target: 5 });
    const first = a.check() as Verdict;
    const waiting = a.check() as Promise<Verdict>;
    clock.advance(50);
    // A place freed after the wait ran out: the waiter is handed back first, refused.
    first.release();
    const v = await waiting;
    expect([v.allowed, v.status, v.reason, a.waiting, limiter.flying]).toEqual([false, 503, "limit", 0, 0]);
  });

  it("a full queue refuses at once; an aborted waiter leaves the line, its promise rejected with the reason", async () => {
    const { a, limiter } = build(1, { capacity: 1 });
    const first = a.check() as Verdict;
    const controller = new AbortController();
    const waiting = a.check("", 1, undefined, controller.signal) as Promise<Verdict>;
    const full = await a.check();
    expect([full.allowed, full.reason]).toEqual([false, "limit"]);
    controller.abort(new Error("client left"));
    await expect(waiting).rejects.toThrow("client left");
    expect([a.waiting, limiter.flying]).toEqual([0, 1]);
    first.release();
    expect(limiter.flying).toBe(0);
    // An already aborted signal never waits.
    const gone = new AbortController();
    gone.abort(new Error("gone"));
    await expect(a.check("", 1, undefined, gone.signal)).rejects.toThrow("gone");
  });

  it("needs a limit and a queue of the limit's levels, refused by name", () => {
    expect(() => admit({ wait: new Queue() })).toThrow("admit wait needs a limit");
    expect(() => admit({ limit: new Limiter(new FixedLimit(1)), wait: {} as never })).toThrow(
      /admit wait must be a Queue of @tideward\/concurrency/,
    );
    expect(() =>
      admit({ limit: new Limiter(new FixedLimit(1), { priorities: criticality }), wait: new Queue() }),
    ).toThrow(/admit wait must wait by the limit's priorities/);
  });
});

// Arbitrary traffic: requests of any priority (levels and junk), some with a signal that aborts,
// releases as successes and failures, the clock moving. At every admission the limiter is within
// its limit; at every step the places held are exactly the verdicts allowed and not released, the
// sheddable level within its share, and at the end nothing waits and nothing is held.
describe("admit limit invariants", () => {
  const step = fc.oneof(
    fc.record({
      op: fc.constant("check" as const),
      priority: fc.oneof(
        fc.constantFrom(...criticality.names),
        fc.integer({ min: -2, max: 6 }),
        fc.constantFrom(Number.NaN, 0.5, "vip", undefined),
      ),
      abortable: fc.boolean(),
    }),
    fc.record({ op: fc.constant("release" as const), which: fc.nat(), ok: fc.boolean() }),
    fc.record({ op: fc.constant("abort" as const), which: fc.nat() }),
    fc.record({ op: fc.constant("tick" as const), ms: fc.double({ min: 0, max: 40, noNaN: true }) }),
  );
  for (const t0 of STARTS)
    it(`hold at the clock near ${t0 === 0 ? "0" : "Date.now()"}, with and without a line`, async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(step, { maxLength: 60 }),
          fc.boolean(),
          fc.integer({ min: 1, max: 6 }),
          async (steps, waits, initial) => {
            const clock = new ManualClock(t0);
            const limiter = new Limiter(new AimdLimit({ initial, min: 1, max: 8, timeout: 30 }), {
              now: t0,
              priorities: criticality,
            });
            const queue = new Queue({ interval: 30, target: 5, capacity: 4 }, { now: t0, priorities: criticality });
            const a = admit({ limit: limiter, clock: clock.now, ...(waits ? { wait: queue } : {}) });
            const allowed: Verdict[] = [];
            const controllers: AbortController[] = [];
            const pending: Promise<unknown>[] = [];
            const take = (v: Verdict): void => {
              if (!v.allowed) return;
              // Admitted within the limit, never past it.
              expect(limiter.flying).toBeLessThanOrEqual(Math.max(limiter.limit, 1));
              allowed.push(v);
            };
            for (const s of steps) {
              if (s.op === "check") {
                const c = s.abortable ? new AbortController() : undefined;
                if (c) controllers.push(c);
                const v = a.check("", 1, s.priority, c?.signal);
                if (v instanceof Promise) pending.push(v.then(take, () => undefined));
                else take(v);
              } else if (s.op === "release" && allowed.length > 0) {
                const [v] = allowed.splice(s.which % allowed.length, 1);
                v.release(s.ok);
              } else if (s.op === "abort" && controllers.length > 0) {
                controllers.splice(s.which % controllers.length, 1)[0].abort();
              } else if (s.op === "tick") clock.advance(s.ms);
              await flush();
              expect(limiter.flying).toBe(allowed.length);
              expect(limiter.flyingAt("sheddable")).toBeLessThanOrEqual(limiter.priorities.places(3, 8));
            }
            // Everyone still waiting leaves; every place is given back.
            for (const c of controllers) c.abort();
            clock.advance(1_000);
            for (const v of allowed.splice(0)) v.release();
            await Promise.all(pending);
            await flush();
            for (const v of allowed.splice(0)) v.release();
            expect([a.waiting, limiter.flying]).toEqual([0, 0]);
          },
        ),
        { numRuns: 150 },
      );
    });
});

describe("admit wait keeps one timer, and none once nobody waits", () => {
  it("served, aborted and given-up waiters leave no timer behind", async () => {
    const real = globalThis.setTimeout;
    const clear = globalThis.clearTimeout;
    const live = new Set<unknown>();
    // Every short timer set from here on, until it fires or is cleared (vitest's own are long).
    const set = vi.spyOn(globalThis, "setTimeout").mockImplementation((fn: () => void, ms?: number) => {
      let handle: ReturnType<typeof setTimeout> | undefined = undefined;
      handle = real(() => {
        live.delete(handle);
        fn();
      }, ms);
      if ((ms ?? 0) < 10_000) live.add(handle);
      return handle;
    });
    const cleared = vi.spyOn(globalThis, "clearTimeout").mockImplementation(((h?: ReturnType<typeof setTimeout>) => {
      live.delete(h);
      clear(h);
    }) as typeof clearTimeout);
    try {
      const limiter = new Limiter(new FixedLimit(1));
      const a = admit({ limit: limiter, wait: new Queue({ interval: 30, target: 5 }) });
      const first = a.check() as Verdict;
      const given = a.check() as Promise<Verdict>;
      const controller = new AbortController();
      const aborted = (a.check("", 1, undefined, controller.signal) as Promise<Verdict>).catch((e: unknown) => e);
      expect(live.size).toBe(1); // one timer for the whole line
      controller.abort();
      await aborted;
      const v = await given; // its 30 ms ran out
      expect([v.allowed, v.reason, live.size, a.waiting]).toEqual([false, "limit", 0, 0]);
      const served = a.check() as Promise<Verdict>;
      expect(live.size).toBe(1);
      first.release();
      (await served).release();
      expect([live.size, a.waiting, limiter.flying]).toEqual([0, 0, 0]);
    } finally {
      set.mockRestore();
      cleared.mockRestore();
    }
  });
});

// A priority(req) that throws, on any request of arbitrary traffic through admitFetch: it takes
// nothing — every place is back once the handlers have answered — at both clock scales.
describe("a throwing priority(req) never leaks a place", () => {
  for (const t0 of STARTS)
    it(`at the clock near ${t0 === 0 ? "0" : "Date.now()"}`, async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.record({ throws: fc.boolean(), level: fc.integer({ min: -1, max: 4 }), fails: fc.boolean() }), {
            minLength: 1,
            maxLength: 30,
          }),
          fc.boolean(),
          async (requests, waits) => {
            const clock = new ManualClock(t0);
            const limiter = new Limiter(new AimdLimit({ initial: 3, min: 1, max: 6 }), {
              now: t0,
              priorities: criticality,
            });
            const queue = new Queue({ interval: 50 }, { now: t0, priorities: criticality });
            const a = admit({ limit: limiter, clock: clock.now, priority: 0, ...(waits ? { wait: queue } : {}) });
            const handler = admitFetch(
              a,
              (request) => {
                clock.advance(1);
                return new Response("ok", { status: request.headers.get("x-fail") === "1" ? 500 : 200 });
              },
              {
                priority: (request) => {
                  const p = request.headers.get("x-priority") ?? "";
                  if (p === "throw") throw new Error("priority failed");
                  return Number(p);
                },
              },
            );
            const answers = await Promise.all(
              requests.map((r) =>
                handler(
                  new Request("http://localhost/", {
                    headers: { "x-priority": r.throws ? "throw" : String(r.level), "x-fail": r.fails ? "1" : "0" },
                  }),
                ).then(
                  (res) => res.status,
                  (e: unknown) => (e as Error).message,
                ),
              ),
            );
            expect(answers.filter((x) => x === "priority failed").length).toBe(requests.filter((r) => r.throws).length);
            expect([limiter.flying, a.waiting]).toEqual([0, 0]);
          },
        ),
        { numRuns: 100 },
      );
    });
});
