// A guard's priority as a function of the call's arguments: one guard for mixed traffic, each call
// judged at its own level by the concurrency limit and by a shedder with levels, as the guards of
// one level each sharing the limiter would judge it; asked once a call before anything is taken,
// and what it throws is the call's error with nothing held. At clocks near 0 and near Date.now().
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { AimdLimit, FixedLimit, Gradient2Limit, Limiter, VegasLimit, criticality } from "@tideward/concurrency";
import { Breaker } from "@tideward/breaker";
import { admit, guard, guardFetch, isRefusal } from "@tideward/guard";
import type { RefuseEvent } from "@tideward/guard";
import { Bucket, Gate } from "@tideward/limiters";
import { Shedder } from "@tideward/shedder";
import { ManualClock } from "@tideward/time";
import { Scheduler } from "./scheduler";

const STARTS = [0, 1_700_000_000_123.375];

function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((res) => (resolve = res));
  return { promise, resolve };
}

async function outcome<T>(p: Promise<T>): Promise<{ value?: T; error?: unknown }> {
  try {
    return { value: await p };
  } catch (error) {
    return { error };
  }
}

describe.each(STARTS)("guard priority from the call's arguments, clock at %d", (t0) => {
  const sim = () => {
    const s = new Scheduler(t0);
    return { s, base: { clock: s.now, timers: s, random: () => 0.5 } };
  };

  it("one guard for mixed traffic: each call at its own level, prefetch stopped at its share", async () => {
    const { base } = sim();
    const limiter = new Limiter(new FixedLimit(10), { now: t0, priorities: criticality });
    const hold = deferred<string>();
    const asked: string[] = [];
    const refused: RefuseEvent[] = [];
    const get = guard((_a, _purpose: "user" | "prefetch", _id: number) => hold.promise, {
      ...base,
      limit: limiter,
      priority: (purpose, id) => {
        asked.push(`${purpose}${id}`);
        return purpose === "prefetch" ? "sheddable" : "critical_plus";
      },
      onRefuse: (e) => void refused.push(e),
    });
    // Sheddable may fill 6 of 10 places (the levels above keep the rest); critical_plus all 10.
    const prefetched = Array.from({ length: 6 }, (_, i) => get("prefetch", i));
    expect([limiter.flyingAt("sheddable"), limiter.flyingAt("critical_plus")]).toEqual([6, 0]);
    const { error } = await outcome(get("prefetch", 6));
    expect(isRefusal(error) && error.kind).toBe("reserved");
    const users = Array.from({ length: 4 }, (_, i) => get("user", i));
    expect([limiter.flyingAt("sheddable"), limiter.flyingAt("critical_plus")]).toEqual([6, 4]);
    expect(await outcome(get("user", 4)).then((o) => isRefusal(o.error) && o.error.kind)).toBe("limit");
    // Each refusal tells onRefuse the call's priority as the function gave it.
    expect(refused.map((e) => [e.kind, e.priority])).toEqual([
      ["reserved", "sheddable"],
      ["limit", "critical_plus"],
    ]);
    expect(asked).toEqual(
      [0, 1, 2, 3, 4, 5, 6].map((i) => `prefetch${i}`).concat([0, 1, 2, 3, 4].map((i) => `user${i}`)),
    );
    hold.resolve("done");
    await Promise.all([...prefetched, ...users]);
    expect(limiter.flying).toBe(0);
  });

  it("asks once a call, and its retries and hedges keep the call's level", async () => {
    const { s, base } = sim();
    const limiter = new Limiter(new FixedLimit(10), { now: t0, priorities: criticality });
    let asked = 0;
    const levels: number[][] = [];
    let failures = 2;
    const g = guard(
      async () => {
        levels.push([limiter.flyingAt("critical"), limiter.flyingAt("sheddable")]);
        if (failures-- > 0) throw new Error("reset");
        await new Promise<void>((resolve) => s.set(resolve, 30));
        return "ok";
      },
      {
        ...base,
        limit: limiter,
        retry: { attempts: 3, base: 1 },
        hedge: { delay: 10 },
        priority: () => {
          asked++;
          return "sheddable";
        },
      },
    );
    const answer = g();
    await s.run();
    expect(await answer).toBe("ok");
    expect(asked).toBe(1);
    // Every attempt (two failures, a retry that hangs past the hedge's delay, its hedge) sheddable.
    expect(levels.length).toBeGreaterThanOrEqual(4);
    expect(levels.every(([critical, sheddable]) => critical === 0 && sheddable >= 1)).toBe(true);
    expect([limiter.flying, s.pending]).toEqual([0, 0]);
  });

  it("an answer that is not a level counts as the least important, undefined as the fallback", async () => {
    const { base } = sim();
    const limiter = new Limiter(new FixedLimit(100), { now: t0, priorities: criticality });
    const hold = deferred<string>();
    const g = guard((_a, _p: unknown) => hold.promise, {
      ...base,
      limit: limiter,
      priority: (p) => p as string,
    });
    const calls = ["urgent", 4, -1, 0.5, Number.NaN, Infinity, {}, Symbol("x")].map((p) => g(p));
    expect(limiter.flyingAt("sheddable")).toBe(calls.length);
    // None given: the priorities' fallback (criticality's is "critical").
    calls.push(g(undefined));
    expect(limiter.flyingAt(criticality.fallback)).toBe(1);
    calls.push(g(0), g("critical_plus"));
    expect(limiter.flyingAt("critical_plus")).toBe(2);
    hold.resolve("x");
    await Promise.all(calls);
    expect(limiter.flying).toBe(0);
  });

  it("what it throws is the call's error: nothing taken, no place, token or timer left, on every path", async () => {
    const { s, base } = sim();
    const limiter = new Limiter(new FixedLimit(1), { now: t0, priorities: criticality });
    const gate = new Gate(5);
    const bucket = new Bucket(1, { burst: 1, now: t0 });
    const shedder = new Shedder({}, t0, criticality);
    const breaker = new Breaker({}, t0);
    const boom = new Error("no priority");
    let ran = 0;
    const policies = { ...base, limit: limiter, gate, shedder, load: () => 0, breaker };
    const throwing = () => {
      throw boom;
    };
    const shapes = {
      direct: guard(() => ran++, { ...policies, priority: throwing }),
      timed: guard(() => ran++, { ...policies, deadline: 1_000, timeout: 100, priority: throwing }),
      waiting: guard(() => ran++, { ...policies, bucket, maxWait: 1_000, priority: throwing }),
      retrying: guard(() => ran++, { ...policies, bucket, retry: { attempts: 3 }, priority: throwing }),
      hedging: guard(() => ran++, { ...policies, hedge: { delay: 10 }, priority: throwing }),
    };
    for (const [shape, g] of Object.entries(shapes)) {
      expect([shape, (await outcome(g())).error]).toEqual([shape, boom]);
      const controller = new AbortController();
      expect([shape, (await outcome(g.run({ signal: controller.signal, deadline: t0 + 500 }))).error]).toEqual([
        shape,
        boom,
      ]);
    }
    expect(ran).toBe(0);
    expect([limiter.flying, gate.held, shedder.flying, s.pending]).toEqual([0, 0, 0, 0]);
    // The bucket's one token is still there, and the limit's one place.
    expect(bucket.peek(t0)).toBe(true);
    expect(limiter.acquire(t0, "critical_plus").ok).toBe(true);
  });

  it("the shedder is handed the call's priority too", async () => {
    const { base } = sim();
    // Levels that note what they are asked, read by a hot shedder on every call.
    const seen: unknown[] = [];
    const levels = {
      level: (p: number | string | undefined) => (seen.push(p), criticality.level(p)),
      room: (level: number) => criticality.room(level),
    };
    const shedder = new Shedder({ cpu: 500 }, t0, levels);
    const g = guard((_a, purpose: string) => purpose, {
      ...base,
      shedder,
      load: () => 900,
      priority: (purpose) => (purpose === "prefetch" ? "sheddable" : undefined),
    });
    expect([await g("prefetch"), await g("user"), await g("prefetch")]).toEqual(["prefetch", "user", "prefetch"]);
    // None given: the shedder's levels read it as their fallback, as for a guard with no priority.
    expect(seen).toEqual(["sheddable", undefined, "sheddable"]);
    expect(shedder.flying).toBe(0);
  });
});

describe("guard priority function options", () => {
  it("a guard takes a function; admit still takes a level only", () => {
    const limiter = new Limiter(new FixedLimit(4), { priorities: criticality });
    expect(() =>
      guard((_a, id: string) => id, { limit: limiter, priority: (id) => (id === "" ? 0 : 3) }),
    ).not.toThrow();
    expect(() => guard(() => 1, { limit: limiter, priority: {} as never })).toThrow(
      "guard priority must be a level's number or name, got [object Object]",
    );
    expect(() => admit({ limit: limiter, priority: (() => 0) as never })).toThrow(
      /^admit priority must be a level's number or name, got /,
    );
  });

  it("guardFetch hands it the request's input and init", async () => {
    const limiter = new Limiter(new FixedLimit(4), { priorities: criticality });
    const seen: string[] = [];
    const fetchIt = guardFetch(
      (input) => {
        seen.push(`${typeof input === "string" ? input : "?"} ${limiter.flyingAt("sheddable")}`);
        return Promise.resolve(new Response("ok"));
      },
      {
        limit: limiter,
        priority: (input, init) =>
          init?.method === "HEAD" || (typeof input === "string" && input.endsWith("/prefetch")) ? "sheddable" : 0,
      },
    );
    await fetchIt("data:,/prefetch");
    await fetchIt("data:,/user");
    await fetchIt("data:,/user", { method: "HEAD" });
    expect(seen).toEqual(["data:,/prefetch 1", "data:,/user 0", "data:,/user 1"]);
  });
});

// The property: one guard whose priority is a function of its arguments decides exactly as the
// guards of one level each, sharing one limiter (and one shedder with levels), do.
interface Arrival {
  readonly gap: number;
  readonly duration: number;
  readonly level: number;
  readonly fails: boolean;
}

const arrival: fc.Arbitrary<Arrival> = fc.record({
  gap: fc.double({ min: 0, max: 8, noNaN: true }),
  duration: fc.double({ min: 0.5, max: 60, noNaN: true }),
  level: fc.integer({ min: 0, max: 3 }),
  fails: fc.boolean(),
});

type Build = (now: number) => Limiter;
const algorithms: [string, Build][] = [
  [
    "AIMD",
    (now) => new Limiter(new AimdLimit({ initial: 4, min: 1, max: 12, timeout: 40 }), { now, priorities: criticality }),
  ],
  ["Vegas", (now) => new Limiter(new VegasLimit({ initial: 6, min: 1, max: 16 }), { now, priorities: criticality })],
  [
    "Gradient2",
    (now) => new Limiter(new Gradient2Limit({ initial: 6, min: 1, max: 16 }), { now, priorities: criticality }),
  ],
];

/** The events of a trace in time order, an end before an arrival at the same instant. */
function events(trace: readonly Arrival[], t0: number): { at: number; end: boolean; i: number }[] {
  const out: { at: number; end: boolean; i: number }[] = [];
  let t = t0;
  trace.forEach((a, i) => {
    t += a.gap;
    out.push({ at: t, end: false, i }, { at: t + a.duration, end: true, i });
  });
  return out.sort((x, y) => x.at - y.at || Number(y.end) - Number(x.end) || x.i - y.i);
}

const flush = async (): Promise<void> => {
  for (let i = 0; i < 6; i++) await Promise.resolve();
};

/** One side: a trace through the guards `make` builds (one per level, or one for all). */
async function side(
  build: Build,
  trace: readonly Arrival[],
  t0: number,
  perCall: boolean,
): Promise<{ lines: string[]; shed: number }> {
  const clock = new ManualClock(t0);
  const limiter = build(t0);
  const shedder = new Shedder({ cpu: 500, latency: 5, window: 400, size: 8 }, t0, criticality);
  let refused: string | undefined;
  let shed = 0;
  const ends: ((() => void) | undefined)[] = [];
  const fn = (_a: unknown, i: number, _level: number) =>
    new Promise<string>((resolve, reject) => {
      ends[i] = () => (trace[i].fails ? reject(new Error("down")) : resolve("ok"));
    });
  const common = {
    limit: limiter,
    shedder,
    load: () => 950,
    clock: clock.now,
    onRefuse: (e: RefuseEvent) => {
      refused = e.kind;
      if (e.kind === "shed") shed++;
    },
  };
  const one = guard(fn, { ...common, priority: (_i, level) => criticality.names[level] });
  const guards = criticality.names.map((priority) => guard(fn, { ...common, priority }));
  const lines: string[] = [];
  for (const e of events(trace, t0)) {
    clock.set(e.at);
    if (e.end) {
      const end = ends[e.i];
      if (end === undefined) continue;
      end();
      await flush();
      lines.push(`end ${e.i} ${limiter.limit} ${limiter.flying} ${shedder.flying}`);
    } else {
      refused = undefined;
      const level = trace[e.i].level;
      (perCall ? one : guards[level])(e.i, level).catch(() => undefined);
      lines.push(`${e.i} ${refused ?? "in"} ${limiter.limit} ${limiter.flying} ${shedder.flying}`);
    }
  }
  return { lines, shed };
}

/** A crowd of twenty at once with lengthening calls, then quick ones; a steady overlap with failures. */
const fixed: Arrival[][] = [
  [
    ...Array.from({ length: 20 }, (_, i) => ({ gap: 0, duration: 2 + 3 * i, level: i % 4, fails: false })),
    ...Array.from({ length: 40 }, (_, i) => ({ gap: 6, duration: 1, level: i % 4, fails: false })),
  ],
  Array.from({ length: 30 }, (_, i) => ({ gap: 0.5, duration: 50, level: i % 4, fails: i % 3 === 0 })),
];

describe.each([
  ["near 0", 0],
  ["near Date.now()", 1_700_000_000_000.37],
])("one guard with a priority function decides as per-level guards sharing a limiter, clock %s", (_, t0) => {
  it.each(algorithms)("%s", async (_name, build) => {
    const kinds = new Set<string>();
    const alike = async (trace: readonly Arrival[]): Promise<void> => {
      const ours = await side(build, trace, t0, true);
      const theirs = await side(build, trace, t0, false);
      expect(ours).toEqual(theirs);
      for (const line of ours.lines) kinds.add(line.split(" ")[1]);
    };
    for (const trace of fixed) await alike(trace);
    // The fixed traces alone put every policy to work: the limit full, its places reserved, the shedder.
    expect(["in", "limit", "reserved", "shed"].filter((k) => kinds.has(k))).toEqual([
      "in",
      "limit",
      "reserved",
      "shed",
    ]);
    await fc.assert(fc.asyncProperty(fc.array(arrival, { minLength: 1, maxLength: 80 }), alike), { numRuns: 30 });
  });
});
