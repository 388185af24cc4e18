// Every callback a user hands the guard may throw. For each callback and each path a call can
// take (a single attempt, retried, hedged, timed out, aborted), at clocks near 0 and near
// Date.now(): the calls settle as docs/callbacks.md's table says, nothing is left held (a gate place, a
// shedder's ticket, a timer, a retry budget's credit), nothing rejects unhandled, and `discard`
// sees exactly the results the callers did not get.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Jitter, RetryBudget } from "@tideward/backoff";
import { Breaker } from "@tideward/breaker";
import { guard, isRefusal, isTimeoutError } from "@tideward/guard";
import type { Attempt, GuardOptions, OutcomeEvent } from "@tideward/guard";
import { Gate } from "@tideward/limiters";
import { Shedder } from "@tideward/shedder";
import { Scheduler } from "./scheduler";

const CALLBACKS = [
  "isFailure",
  "retryOn",
  "retryAfter",
  "discard",
  "onRefuse",
  "onRetry",
  "onHedge",
  "onOutcome",
] as const;
type Callback = (typeof CALLBACKS)[number];
type Path = "single attempt" | "retried" | "hedged" | "timed out" | "aborted";

/** One call of a fixture: its key, when it starts (ms after t0), and whether it carries the caller's signal. */
interface Caller {
  readonly key: string;
  readonly at: number;
  readonly signal?: boolean;
}

/**
 * A path: the guard's options, when each attempt of each call answers (ms after it starts, or
 * "hang"), what it answers ("good" or "bad", which isFailure calls a failure), and the callers.
 */
interface Fixture {
  readonly options: (s: Scheduler, t0: number) => GuardOptions<string>;
  readonly script: Readonly<Record<string, readonly (readonly [after: number, kind: "good" | "bad"])[]>>;
  readonly callers: readonly Caller[];
  /** When the callers' signal fires (ms after t0), if any carries it. */
  readonly abortAt?: number;
}

/** A retry budget that never refuses in these fixtures (1 000 retries), so that what it is spent on can be counted. */
const plenty = (t0: number) => new RetryBudget({ ratio: 0, minPerSecond: 100, window: 10_000 }, t0);

const FIXTURES: Readonly<Record<Path, Fixture>> = {
  // a is admitted and answers at 10; b arrives with a in flight and the gate full.
  "single attempt": {
    options: () => ({ gate: new Gate(1) }),
    script: { a: [[10, "good"]], b: [[10, "good"]] },
    callers: [
      { key: "a", at: 0 },
      { key: "b", at: 0 },
    ],
  },
  // a answers bad at 10 and its retry at 20 finds the gate held by b (15–45): a ends with its
  // own bad answer. b answers bad at 45, and its retry at 55 answers good.
  retried: {
    options: (_s, t0) => ({
      gate: new Gate(1),
      retry: { attempts: 3, base: 10, cap: 10, jitter: Jitter.rigid },
      budget: plenty(t0),
    }),
    script: {
      a: [
        [10, "bad"],
        [10, "good"],
      ],
      b: [
        [30, "bad"],
        [10, "good"],
      ],
    },
    callers: [
      { key: "a", at: 0 },
      { key: "b", at: 15 },
    ],
  },
  // One hedge credit: a's hedge at 10 takes it and wins at 20, a's first attempt answers late at
  // 50; b's hedge at 10 is refused by the budget and its first attempt answers at 30.
  hedged: {
    options: (_s, t0) => ({
      hedge: { delay: 10, max: 1 },
      budget: new RetryBudget({ ratio: 0, minPerSecond: 0.1, window: 10_000 }, t0),
    }),
    script: {
      a: [
        [50, "good"],
        [10, "good"],
      ],
      b: [[30, "good"]],
    },
    callers: [
      { key: "a", at: 0 },
      { key: "b", at: 0 },
    ],
  },
  // a's first attempt is cut off at 30 (it answers late, at 100); its retry at 40 finds the gate
  // held by b (35–45) and a ends with its timeout.
  "timed out": {
    options: (_s, t0) => ({
      gate: new Gate(1),
      timeout: 30,
      retry: { attempts: 2, base: 10, cap: 10, jitter: Jitter.rigid },
      budget: plenty(t0),
    }),
    script: {
      a: [
        [100, "good"],
        [10, "good"],
      ],
      b: [[10, "good"]],
    },
    callers: [
      { key: "a", at: 0 },
      { key: "b", at: 35 },
    ],
  },
  // The callers' signal fires at 20: a is in flight (it answers late, at 50), b is waiting to
  // retry after a bad answer at 10, and c was refused at once by the full gate.
  aborted: {
    options: (_s, t0) => ({
      gate: new Gate(2),
      retry: { attempts: 3, base: 30, cap: 30, jitter: Jitter.rigid },
      budget: plenty(t0),
    }),
    script: {
      a: [[50, "good"]],
      b: [
        [10, "bad"],
        [10, "good"],
      ],
      c: [[10, "good"]],
    },
    callers: [
      { key: "a", at: 0, signal: true },
      { key: "b", at: 0, signal: true },
      { key: "c", at: 0, signal: true },
    ],
    abortAt: 20,
  },
};

const BOOM = "boom";
const REASON = "the caller left";

/**
 * What each caller gets on each path when the named callback throws (undefined: when nothing
 * throws). A value is the attempt's answer, "boom" the callback's error, "refused gate" a
 * Refusal, "timeout" a TimeoutError, "reason" the caller's abort reason.
 */
const EXPECTED: Readonly<Record<Path, Readonly<Partial<Record<Callback | "none", readonly string[]>>>>> = {
  "single attempt": {
    none: ["a1:good", "refused gate"],
    isFailure: [BOOM, "refused gate"],
    onOutcome: [BOOM, "refused gate"],
    onRefuse: ["a1:good", BOOM],
  },
  retried: {
    none: ["a1:bad", "b2:good"],
    discard: ["a1:bad", "b2:good"],
    isFailure: [BOOM, BOOM],
    retryOn: [BOOM, BOOM],
    retryAfter: [BOOM, BOOM],
    onRetry: [BOOM, BOOM],
    onRefuse: [BOOM, "b2:good"],
    onOutcome: [BOOM, BOOM],
  },
  hedged: {
    none: ["a2:good", "b1:good"],
    discard: ["a2:good", "b1:good"],
    isFailure: [BOOM, BOOM],
    retryOn: [BOOM, BOOM],
    onHedge: [BOOM, "b1:good"],
    onRefuse: ["a2:good", BOOM],
    onOutcome: [BOOM, BOOM],
  },
  "timed out": {
    none: ["timeout", "b1:good"],
    discard: ["timeout", "b1:good"],
    isFailure: ["timeout", BOOM],
    retryOn: [BOOM, BOOM],
    retryAfter: [BOOM, "b1:good"],
    onRetry: [BOOM, "b1:good"],
    onRefuse: [BOOM, "b1:good"],
    onOutcome: [BOOM, BOOM],
  },
  aborted: {
    none: ["reason", "reason", "refused gate"],
    discard: ["reason", "reason", "refused gate"],
    isFailure: ["reason", BOOM, "refused gate"],
    retryOn: ["reason", BOOM, "refused gate"],
    retryAfter: ["reason", BOOM, "refused gate"],
    onRetry: ["reason", BOOM, "refused gate"],
    onRefuse: ["reason", "reason", BOOM],
    onOutcome: [BOOM, BOOM, "refused gate"],
  },
};

function label(answer: { value?: string; error?: unknown }): string {
  if (answer.error === undefined) return String(answer.value);
  const e = answer.error;
  if (isRefusal(e)) return `refused ${e.kind}`;
  if (isTimeoutError(e)) return "timeout";
  if (e instanceof Error && e.message === BOOM) return BOOM;
  if (e instanceof Error && e.message === REASON) return "reason";
  return `unexpected ${e instanceof Error ? e.message : JSON.stringify(e)}`;
}

let unhandled: unknown[] = [];
const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
beforeEach(() => {
  unhandled = [];
  process.on("unhandledRejection", onUnhandled);
});
afterEach(() => {
  process.off("unhandledRejection", onUnhandled);
});

interface Run {
  readonly answers: string[];
  readonly produced: string[];
  readonly discarded: string[];
  readonly called: number;
  readonly seen: ReadonlySet<Callback>;
  /**
   * What is left held: gate places, shedder tickets, timers, and retry budget credits spent for
   * nothing (not on a retry that reached the function, nor on a hedge that started).
   */
  readonly held: readonly [gate: number, shedder: number, timers: number, credits: number];
}

async function run(path: Path, throwing: Callback | "none", t0: number): Promise<Run> {
  const fixture = FIXTURES[path];
  const s = new Scheduler(t0);
  const produced: string[] = [];
  const discarded: string[] = [];
  let called = 0;
  const seen = new Set<Callback>();
  // Each callback does what a user's would; the one under test throws after it was called.
  const wrap =
    <A extends unknown[], T>(name: Callback, body: (...a: A) => T) =>
    (...a: A): T => {
      seen.add(name);
      const answer = body(...a);
      if (name === throwing) {
        called++;
        throw new Error(BOOM);
      }
      return answer;
    };
  const shedder = new Shedder({}, t0);
  const base = fixture.options(s, t0);
  const gate = base.gate instanceof Gate ? base.gate : undefined;
  const budget = base.budget instanceof RetryBudget ? base.budget : undefined;
  const credits = budget?.available(t0) ?? 0;
  let retried = 0; // retries that reached the function
  let hedges = 0; // hedged attempts that started
  const options: GuardOptions<string> = {
    ...base,
    clock: s.now,
    timers: s,
    random: () => 0.5,
    shedder,
    load: () => 0,
    breaker: new Breaker({}, t0),
    isFailure: wrap(
      "isFailure",
      (error: unknown, result: string | undefined) => error !== undefined || result?.endsWith("bad") === true,
    ),
    retryOn: wrap(
      "retryOn",
      (error: unknown, result: string | undefined) => error !== undefined || result?.endsWith("bad") === true,
    ),
    retryAfter: wrap("retryAfter", () => undefined),
    discard: wrap("discard", (r: string) => void discarded.push(r)),
    onRefuse: wrap("onRefuse", () => undefined),
    onRetry: wrap("onRetry", () => undefined),
    onHedge: wrap("onHedge", () => undefined),
    onOutcome: wrap("onOutcome", (e: OutcomeEvent<string>) => void (e.hedge && hedges++)),
  };
  const g = guard((a: Attempt, key: string) => {
    if (a.attempt > 1 && !a.hedge) retried++;
    const [after, kind] = fixture.script[key][a.attempt - 1];
    const value = `${key}${a.attempt}:${kind}`;
    return new Promise<string>((resolve) =>
      s.set(() => {
        produced.push(value);
        resolve(value);
      }, after),
    );
  }, options);
  const controller = new AbortController();
  if (fixture.abortAt !== undefined) s.set(() => controller.abort(new Error(REASON)), fixture.abortAt);
  const answers: { value?: string; error?: unknown }[] = [];
  const calls: Promise<void>[] = [];
  for (const [i, c] of fixture.callers.entries())
    s.set(() => {
      const p = c.signal === true ? g.run({ signal: controller.signal }, c.key) : g(c.key);
      calls.push(
        p.then(
          (value) => void (answers[i] = { value }),
          (error: unknown) => void (answers[i] = { error }),
        ),
      );
    }, c.at);
  await s.run();
  await Promise.all(calls);
  await s.settle();
  return {
    answers: fixture.callers.map((_, i) => label(answers[i] ?? { error: "never settled" })),
    produced,
    discarded,
    called,
    seen,
    held: [gate?.held ?? 0, shedder.flying, s.pending, credits - (budget?.available(s.now()) ?? 0) - retried - hedges],
  };
}

describe.each([0, 1_700_000_000_123.375])("a throwing callback, with the clock at %d", (t0) => {
  const paths = Object.keys(FIXTURES) as Path[];
  it.each(paths)(
    "%s: with no callback throwing, every callback is called and the answers are the fixture's",
    async (path) => {
      const r = await run(path, "none", t0);
      expect(r.answers).toEqual(EXPECTED[path].none);
      const asked = CALLBACKS.filter((c) => EXPECTED[path][c] !== undefined);
      expect(CALLBACKS.filter((c) => r.seen.has(c))).toEqual(asked);
      expect(r.held).toEqual([0, 0, 0, 0]);
      expect(unhandled).toEqual([]);
    },
  );

  const cases = paths.flatMap((path) => CALLBACKS.map((callback) => [path, callback] as const));
  it.each(cases)("%s, %s throws: the documented answer, nothing held, nothing unhandled", async (path, callback) => {
    const r = await run(path, callback, t0);
    const want = EXPECTED[path][callback] ?? EXPECTED[path].none;
    expect(r.answers).toEqual(want);
    // Called where the table expects something to change; where it does not, the path never asks it.
    if (EXPECTED[path][callback] !== undefined) expect(r.called).toBeGreaterThan(0);
    expect(r.held).toEqual([0, 0, 0, 0]);
    expect(unhandled).toEqual([]);
    // discard saw exactly what was produced and not handed to a caller, each once.
    const returned = new Set(r.answers);
    expect([...r.discarded].sort()).toEqual(r.produced.filter((v) => !returned.has(v)).sort());
  });
});

describe.each([0, 1_700_000_000_123.375])("onRetry throwing with a retry budget, with the clock at %d", (t0) => {
  it.each(["g()", "g.run({ signal })"])(
    "%s: the call rejects with its error, the budget is as it was before the retry, no timer is left",
    async (how) => {
      const s = new Scheduler(t0);
      const budget = new RetryBudget({ ratio: 0.5, minPerSecond: 0, window: 10_000 }, t0);
      budget.recordAttempt(t0); // an earlier call: with each of these, one retry's worth
      let broken = true;
      let calls = 0;
      let before = -1;
      const g = guard(
        () => {
          if (++calls === 1) before = budget.available(s.now()); // this call's first attempt counted
          return new Promise<string>((_, reject) => s.set(() => reject(new Error(`down ${calls}`)), 10));
        },
        {
          clock: s.now,
          timers: s,
          budget,
          retry: { attempts: 2, base: 10, cap: 10, jitter: Jitter.rigid },
          onRetry: () => {
            if (broken) throw new Error(BOOM);
          },
        },
      );
      const call = () => (how === "g()" ? g() : g.run({ signal: new AbortController().signal }));
      const first = call().catch((e: unknown) => e);
      await s.run();
      expect(label({ error: await first })).toBe(BOOM);
      expect(before).toBe(1);
      expect(budget.available(s.now())).toBe(before);
      expect([calls, s.pending]).toEqual([1, 0]);
      // The credit given back is one to spend: the next call, told without throwing, retries on it.
      broken = false;
      const second = call().catch((e: unknown) => e);
      await s.run();
      expect((await second) as Error).toEqual(new Error("down 3"));
      expect([calls, s.pending, budget.available(s.now())]).toEqual([3, 0, 0]);
      expect(unhandled).toEqual([]);
    },
  );
});

describe.each([0, 1_700_000_000_123.375])("timers that throw, with the clock at %d", (t0) => {
  const paths = [
    ["a timeout", { timeout: 50 }],
    ["a hedge", { hedge: { delay: 10 }, budget: false }],
    ["a retry's wait", { retry: { attempts: 2, base: 10, cap: 10 }, budget: false }],
    ["a deadline and the caller's signal", { deadline: 100 }],
  ] as const;
  it.each(
    paths.flatMap(([name, extra]) => (["set", "clear"] as const).map((broken) => [name, broken, extra] as const)),
  )(
    "%s, its timers' %s throwing: the call settles (set: with that error), nothing held or pending",
    async (name, broken, extra) => {
      const s = new Scheduler(t0);
      const gate = new Gate(1);
      const timers = {
        set: (fn: () => void, ms: number) => {
          if (broken === "set") throw new Error("no set");
          return s.set(fn, ms);
        },
        clear: (h: unknown) => {
          if (broken === "clear") throw new Error("no clear");
          s.clear(h);
        },
      };
      let n = 0;
      const g = guard(
        () => {
          n++;
          const failing = n === 1 && name === "a retry's wait";
          return new Promise<string>((resolve, reject) =>
            s.set(() => (failing ? reject(new Error("first")) : resolve("v")), 30),
          );
        },
        { ...extra, gate, clock: s.now, timers },
      );
      const c = new AbortController();
      const signal = extra === paths[3][1];
      if (signal) s.set(() => c.abort(new Error(REASON)), 5);
      const p = (signal ? g.run({ signal: c.signal }) : g()).then(
        (value) => label({ value }),
        (error: unknown) => (error instanceof Error && error.message === "no set" ? "no set" : label({ error })),
      );
      await s.run();
      const want = broken === "set" ? "no set" : signal ? "reason" : "v";
      expect(await p).toBe(want);
      await s.run();
      expect([gate.held, s.pending]).toEqual([0, 0]);
      expect(unhandled).toEqual([]);
    },
  );
});

describe.each([0, 1_700_000_000_123.375])("a retry's budget credit, with the clock at %d", (t0) => {
  // The first attempt fails at 10; its retry waits 10 ms and is then admitted, refused, cut
  // short by the caller, or never waited for: only a retry that reaches the function spends.
  const cases = [
    ["made", undefined, 1, "v"],
    ["refused by the bucket after its wait", "bucket", 0, "first"],
    ["cut short by the caller during its wait", "abort", 0, "reason"],
    ["never waited for: timers.set throws", "set", 0, "no set"],
  ] as const;
  it.each(cases)("a retry %s: its credit spent only if it reached the function", async (_name, how, spent, want) => {
    const s = new Scheduler(t0);
    const budget = new RetryBudget({ ratio: 0, minPerSecond: 100, window: 10_000 }, t0);
    const timers = {
      // The first timer is the attempt's own answer below; the retry's wait is the next one set.
      set: (fn: () => void, ms: number) => {
        if (how === "set" && ms === 10 && s.now() > t0) throw new Error("no set");
        return s.set(fn, ms);
      },
      clear: s.clear,
    };
    let n = 0;
    const g = guard(
      () => {
        n++;
        return new Promise<string>((resolve, reject) =>
          s.set(() => (n === 1 ? reject(new Error("first")) : resolve("v")), 10),
        );
      },
      {
        retry: { attempts: 2, base: 10, cap: 10, jitter: Jitter.rigid },
        budget,
        // One token: the first attempt takes it, and none is back 10 ms later.
        ...(how === "bucket" ? { bucket: { rate: 1, burst: 1 } } : {}),
        clock: s.now,
        timers,
      },
    );
    const before = budget.available(t0);
    const c = new AbortController();
    if (how === "abort") s.set(() => c.abort(new Error(REASON)), 15);
    const p = g.run({ signal: c.signal }).then(
      (value) => value,
      (error: unknown) =>
        isRefusal(error)
          ? "refused"
          : error instanceof Error && error.message === REASON
            ? "reason"
            : (error as Error).message,
    );
    await s.run();
    expect(await p).toBe(want);
    expect([n, budget.available(s.now()), s.pending]).toEqual([1 + spent, before - spent, 0]);
    expect(unhandled).toEqual([]);
  });
});
