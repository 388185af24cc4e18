// Bad input to the backoff package, as a table: each case answers with its exact error (or its
// documented tolerant answer), and leaves the preset, a shared budget, the clock and the calls
// made as they were.
import { describe, expect, it } from "vitest";
import { Backoff, Jitter, RetryBudget, backoff, budget, retry, sleep } from "@tideward/backoff";
import type { BackoffPolicy, RetryOptions } from "@tideward/backoff";
import { Deadline, ManualClock } from "@tideward/time";

const not = <T>(x: unknown): T => x as T;
const T0 = 1_700_000_000_000.25;

interface State {
  readonly clock: ManualClock;
  readonly shared: RetryBudget;
  calls: number;
  slept: number[];
}

function fresh(): State {
  const clock = new ManualClock(T0);
  const shared = new RetryBudget({ ratio: 0.5, minPerSecond: 1 }, T0);
  shared.recordAttempt(T0);
  return { clock, shared, calls: 0, slept: [] };
}

const snapshot = (s: State): unknown => ({
  now: s.clock.now(),
  available: s.shared.available(s.clock.now()),
  calls: s.calls,
  slept: [...s.slept],
  preset: backoff.policy(),
  budgetPreset: { ...budget },
});

/** Options running on the state's manual clock, with a sleep that records. */
function sim(s: State, extra: Record<string, unknown> = {}): RetryOptions {
  return not<RetryOptions>({
    clock: s.clock.now,
    sleep: (span: number) => (s.slept.push(span), s.clock.sleep(span)),
    random: () => 0.5,
    ...extra,
  });
}

const failing = (s: State) => (): never => {
  s.calls++;
  throw new Error("down");
};

type Expect = { readonly throws: ErrorConstructor; readonly message: string } | { readonly answers: unknown };

const rows: [string, (s: State) => unknown, Expect][] = [
  [
    "a Backoff field given as null, where left out means the preset",
    () => new Backoff(not({ base: null })),
    { throws: TypeError, message: "Backoff base (ms) must be a number, got object null" },
  ],
  [
    "a null jitter",
    () => new Backoff(not({ jitter: null })),
    {
      throws: TypeError,
      message:
        "Backoff jitter must be one of Jitter.rigid, Jitter.full, Jitter.equal, Jitter.decorrelated or Jitter.spread(f), got null",
    },
  ],
  [
    "a RetryBudget field given as null",
    () => new RetryBudget(not({ ratio: null })),
    { throws: TypeError, message: "RetryBudget ratio must be a number, got object null" },
  ],
  [
    "a spread over a ceiling past half the largest number: every draw stays finite",
    () => {
      const huge = new Backoff({ base: 1e308, cap: 1e308, jitter: Jitter.spread(1) });
      return [0, 0.25, 0.5, 1].map((random) => huge.delay(1, { random }));
    },
    { answers: [0, 0.5e308, 1e308, Number.MAX_VALUE] },
  ],
  [
    "a Backoff policy given as text",
    () => new Backoff(not("fast")),
    { throws: TypeError, message: 'Backoff policy must be an object, got string "fast"' },
  ],
  [
    "a null Backoff policy",
    () => new Backoff(not(null)),
    { throws: TypeError, message: "Backoff policy must be an object, got null" },
  ],
  [
    "a misspelt attempts",
    () => new Backoff(not({ attemps: 5 })),
    { throws: TypeError, message: 'Backoff has no option "attemps"; did you mean "attempts"?' },
  ],
  [
    "an option nothing like any",
    () => new Backoff(not({ delays: 5 })),
    {
      throws: TypeError,
      message: 'Backoff has no option "delays"; its options are "base", "factor", "cap", "attempts", "jitter"',
    },
  ],
  [
    "a count of retries under another library's name",
    () => new Backoff(not({ retries: 5 })),
    {
      throws: TypeError,
      message:
        'Backoff has no option "retries"; the count is attempts, the first attempt included: { attempts: 6 } for 5 retries',
    },
  ],
  [
    "with() a misspelt field",
    () => backoff.with(not({ bse: 5 })),
    { throws: TypeError, message: 'Backoff has no option "bse"; did you mean "base"?' },
  ],
  [
    "with(null)",
    () => backoff.with(not(null)),
    { throws: TypeError, message: "Backoff changes must be an object, got null" },
  ],
  [
    "a draw passed where delay's options go",
    () => backoff.delay(2, not(0.3)),
    { throws: TypeError, message: "Backoff.delay options must be an object such as { random: 0.5 }, got number 0.3" },
  ],
  [
    "a Symbol draw reads as 0",
    () => backoff.delay(2, { random: not(Symbol("r")) }),
    { answers: backoff.delay(2, { random: 0 }) },
  ],
  ["a Symbol retry has no delay", () => backoff.delay(not(Symbol("n"))), { answers: undefined }],
  [
    "a Symbol previous starts over at the base",
    () => new Backoff({ jitter: Jitter.decorrelated }).delay(2, { random: 1, previous: not(Symbol("p")) }),
    { answers: 300 },
  ],
  ["more() of a Symbol", () => backoff.more(not(Symbol("m"))), { answers: false }],
  [
    "schedule(null)",
    () => backoff.schedule(not(null)),
    { throws: TypeError, message: "Backoff.schedule randoms must be an array of draws in [0, 1), got null" },
  ],
  [
    "a schedule of a billion waits",
    () => new Backoff({ attempts: 1e9 }).schedule(),
    {
      throws: RangeError,
      message:
        "Backoff.schedule lists at most 1000000 waits, and attempts is 1000000000; ask delay(retry) for the ones you need",
    },
  ],
  [
    "a RetryBudget policy given as a number",
    () => new RetryBudget(not(5)),
    { throws: TypeError, message: "RetryBudget policy must be an object, got number 5" },
  ],
  [
    "a misspelt ratio",
    () => new RetryBudget(not({ raito: 0.1 })),
    { throws: TypeError, message: 'RetryBudget has no option "raito"; did you mean "ratio"?' },
  ],
  [
    "10^8 budget buckets",
    () => new RetryBudget({ buckets: 1e8, window: 1e9 }),
    { throws: RangeError, message: "RetryBudget buckets must be at most 1000000, got 100000000" },
  ],
  [
    "budget buckets under 0.01 ms",
    () => new RetryBudget({ window: 0.05 }),
    {
      throws: RangeError,
      message: "RetryBudget window (ms) must be at least 0.1 for 10 buckets (0.01 ms a bucket), got 0.05",
    },
  ],
  [
    "a budget start given as text",
    () => new RetryBudget({}, not("0")),
    { throws: TypeError, message: 'RetryBudget now must be a number, got string "0"' },
  ],
  ["a budget read at a Symbol reads where it stands", (s) => s.shared.available(not(Symbol("now"))), { answers: 10 }],
  ["a budget read at NaN reads where it stands", (s) => s.shared.available(Number.NaN), { answers: 10 }],
];

// The async cases: retry and sleep reject, before any call or wait.
const later: [string, (s: State) => Promise<unknown>, Expect][] = [
  [
    "retry(null)",
    (s) => retry(not(null), sim(s)),
    { throws: TypeError, message: "retry fn must be a function, got null" },
  ],
  [
    "retry of a string",
    (s) => retry(not("fetch"), sim(s)),
    { throws: TypeError, message: 'retry fn must be a function, got string "fetch"' },
  ],
  [
    "retry options given as null",
    (s) => retry(failing(s), not(null)),
    { throws: TypeError, message: "retry options must be an object, got null" },
  ],
  [
    "retry's count given as retries, where the backoff's attempts belong",
    (s) => retry(failing(s), not({ ...sim(s), retries: 3 })),
    {
      throws: TypeError,
      message:
        'retry has no option "retries"; the count is the backoff\'s attempts, the first attempt included: retry(fn, { backoff: { attempts: 4 } }) for 3 retries',
    },
  ],
  [
    "retry's count given as attempts, where the backoff's belong",
    (s) => retry(failing(s), not({ ...sim(s), attempts: 3 })),
    {
      throws: TypeError,
      message:
        'retry has no option "attempts"; the count is the backoff\'s attempts, the first attempt included: retry(fn, { backoff: { attempts: 3 } })',
    },
  ],
  [
    "a misspelt retry option",
    (s) => retry(failing(s), not({ ...sim(s), retyOn: () => true })),
    { throws: TypeError, message: 'retry has no option "retyOn"; did you mean "retryOn"?' },
  ],
  [
    "a number where the deadline goes",
    (s) => retry(failing(s), sim(s, { deadline: 5_000 })),
    { throws: TypeError, message: "retry deadline must be a Deadline (Deadline.start(budget, now)), got number 5000" },
  ],
  [
    "a plain object where the signal goes",
    (s) => retry(failing(s), sim(s, { signal: { aborted: false } })),
    { throws: TypeError, message: "retry signal must be an AbortSignal, got object [object Object]" },
  ],
  [
    "a ratio where the budget goes",
    (s) => retry(failing(s), sim(s, { budget: 0.2 })),
    { throws: TypeError, message: "retry budget must be a RetryBudget, got number 0.2" },
  ],
  [
    "retryOn that is not a function",
    (s) => retry(failing(s), sim(s, { retryOn: true })),
    { throws: TypeError, message: "retry retryOn must be a function, got boolean true" },
  ],
  [
    "a negative maxRetryAfter",
    (s) => retry(failing(s), sim(s, { maxRetryAfter: -1 })),
    { throws: RangeError, message: "retry maxRetryAfter (ms) must be 0 or more, got -1" },
  ],
  [
    "an unknown overMaxRetryAfter",
    (s) => retry(failing(s), sim(s, { overMaxRetryAfter: "wait" })),
    { throws: TypeError, message: 'retry overMaxRetryAfter must be "cap" or "give-up", got string "wait"' },
  ],
  [
    "a null overMaxRetryAfter",
    (s) => retry(failing(s), sim(s, { overMaxRetryAfter: null })),
    { throws: TypeError, message: 'retry overMaxRetryAfter must be "cap" or "give-up", got null' },
  ],
  [
    "a budget without grant (one from an older @tideward/backoff)",
    (s) => retry(failing(s), sim(s, { budget: { recordAttempt: () => undefined, giveBack: () => undefined } })),
    { throws: TypeError, message: "retry budget must be a RetryBudget, got object [object Object]" },
  ],
  [
    "a bad backoff policy",
    (s) => retry(failing(s), sim(s, { backoff: { attempts: 0 } })),
    { throws: RangeError, message: "retry backoff.attempts must be 1 or more, got 0" },
  ],
  [
    "a clock that reads NaN, with a deadline",
    (s) => retry(failing(s), sim(s, { clock: () => Number.NaN, deadline: Deadline.start(1_000, T0) })),
    { throws: RangeError, message: "retry clock must return a finite number of milliseconds, got number NaN" },
  ],
  [
    "a clock that reads text, with a budget",
    (s) => retry(failing(s), sim(s, { clock: () => "now", budget: s.shared })),
    { throws: TypeError, message: 'retry clock must return a finite number of milliseconds, got string "now"' },
  ],
  [
    "sleep for a span given as text",
    () => sleep(not("5")),
    { throws: TypeError, message: 'sleep span must be a number of milliseconds, got string "5"' },
  ],
  [
    "sleep with a signal that is not one",
    () => sleep(5, not("stop")),
    { throws: TypeError, message: 'sleep signal must be an AbortSignal, got string "stop"' },
  ],
  [
    "sleep with a signal that cannot take its listener off (it would throw from the timer)",
    () => sleep(5, not({ aborted: false, addEventListener: () => undefined })),
    { throws: TypeError, message: "sleep signal must be an AbortSignal, got object [object Object]" },
  ],
  [
    "retry with such a signal",
    (s) => retry(failing(s), sim(s, { signal: { aborted: false, addEventListener: () => undefined } })),
    { throws: TypeError, message: "retry signal must be an AbortSignal, got object [object Object]" },
  ],
  [
    "retry with a null backoff",
    (s) => retry(failing(s), sim(s, { backoff: null })),
    { throws: TypeError, message: "retry backoff must be an object, got null" },
  ],
  [
    "retry with a null maxRetryAfter",
    (s) => retry(failing(s), sim(s, { maxRetryAfter: null })),
    { throws: TypeError, message: "retry maxRetryAfter (ms) must be a number, got object null" },
  ],
  [
    "retry with a sleep that returns no promise",
    (s) => retry(failing(s), { ...sim(s), sleep: not(() => undefined) }),
    { throws: TypeError, message: "retry sleep must return a promise, got undefined" },
  ],
];

async function outcome(act: () => unknown): Promise<Expect> {
  try {
    return { answers: await act() };
  } catch (e) {
    return { throws: (e as Error).constructor as ErrorConstructor, message: (e as Error).message };
  }
}

describe("bad input to the backoff package", () => {
  it("has at least fifteen cases", () => {
    expect(rows.length + later.length).toBeGreaterThanOrEqual(15);
  });

  it.each(rows)("%s", async (_, act, want) => {
    const s = fresh();
    const before = snapshot(s);
    expect(await outcome(() => act(s))).toEqual(want);
    expect(snapshot(s)).toEqual(before);
  });

  it.each(later)("%s", async (_, act, want) => {
    const s = fresh();
    const before = snapshot(s);
    expect(await outcome(() => act(s))).toEqual(want);
    // Rejected before a call was made (a NaN clock: after the first, before any wait) and nothing slept.
    const after = snapshot(s) as { calls: number };
    expect(after.calls).toBeLessThanOrEqual(1);
    expect({ ...after, calls: 0 }).toEqual({ ...(before as object), calls: 0 });
  });

  it("reads each policy field once, so a getter cannot change attempts between the check and the use", () => {
    let reads = 0;
    const policy = {
      get attempts() {
        reads++;
        return reads === 1 ? 4 : 1e9;
      },
    };
    const b = new Backoff(not<Partial<BackoffPolicy>>(policy));
    expect([b.attempts, reads]).toEqual([4, 1]);
  });
});
