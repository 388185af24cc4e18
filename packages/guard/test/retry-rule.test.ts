// One retry decision for both retry loops: the same hints, deadlines and budgets run through
// `retry` (@tideward/backoff) and the guard, near 0 and near Date.now(), answer alike. Before,
// `retry` threw RetryError("retryAfter") where the guard capped, and a hint that was not a
// number of ms (`retryAfter: () => "100"`) was ignored without a word: the call retried at once.
import { describe, expect, it } from "vitest";
import { Jitter, RetryBudget, isRetryError, retry } from "@tideward/backoff";
import type { OverMaxRetryAfter } from "@tideward/backoff";
import { guard } from "@tideward/guard";
import type { RefuseEvent } from "@tideward/guard";
import { Deadline, ManualClock } from "@tideward/time";
import { Scheduler } from "./scheduler";

const BACKOFF = { attempts: 2, base: 10, cap: 10, jitter: Jitter.rigid } as const;
const CAP = 1_000;

/** A row: the hint the first attempt's error carries, and what each mode answers. */
type Row = readonly [name: string, hint: unknown, giveUp: string, cap: string];

// "retried after n": the second attempt came n ms after the first; "gave up: why": no retry, for
// that reason; "TypeError …"/"RangeError …": the call rejected with it, naming the hint.
const NOT_MS = "must be a number of milliseconds (or undefined for none), got";
const HINTS: readonly Row[] = [
  ["0", 0, "retried after 10", "retried after 10"],
  ["50", 50, "retried after 50", "retried after 50"],
  ["over the cap", 5_000, "gave up: retryAfter", "retried after 1000"],
  ["exactly the cap", CAP, "retried after 1000", "retried after 1000"],
  ["NaN", Number.NaN, `RangeError ${NOT_MS} NaN`, `RangeError ${NOT_MS} NaN`],
  ["negative", -5, "retried after 10", "retried after 10"],
  [
    "text",
    "100",
    `TypeError ${NOT_MS} string "100": text is not read as a number; parse it into milliseconds first`,
    `TypeError ${NOT_MS} string "100": text is not read as a number; parse it into milliseconds first`,
  ],
  ["Infinity", Infinity, "gave up: retryAfter", "retried after 1000"],
  [
    "a Date",
    new Date(Date.now() + 50),
    `TypeError ${NOT_MS} object [object Date]: a Date is an instant; give the wait until it (date.getTime() - now)`,
    `TypeError ${NOT_MS} object [object Date]: a Date is an instant; give the wait until it (date.getTime() - now)`,
  ],
  ["undefined", undefined, "retried after 10", "retried after 10"],
  ["null", null, "retried after 10", "retried after 10"],
];

/** What else the call runs under: a deadline 40 ms after it starts, or a budget with nothing in it. */
type Limit = "none" | "deadline" | "budget";
const LIMITS: readonly (readonly [string, unknown, Limit, string])[] = [
  ["a 50 ms hint with 40 ms left", 50, "deadline", "gave up: deadline"],
  ["a 30 ms hint with 40 ms left", 30, "deadline", "retried after 30"],
  ["no hint with the budget spent", undefined, "budget", "gave up: budget"],
];

function busy(hint: unknown): Error {
  return Object.assign(new Error("busy"), { retryAfter: hint });
}

function label(error: unknown): string {
  const e = error as Error;
  return `${e.name} ${e.message.slice(e.message.indexOf(" must be") + 1)}`;
}

/** `retry` from @tideward/backoff, on a manual clock. */
async function throughRetry(t0: number, hint: unknown, over: OverMaxRetryAfter, limit: Limit): Promise<string> {
  const clock = new ManualClock(t0);
  const at: number[] = [];
  try {
    await retry(
      ({ attempt }) => {
        at.push(clock.now());
        if (attempt === 1) throw busy(hint);
        return "ok";
      },
      {
        backoff: BACKOFF,
        maxRetryAfter: CAP,
        overMaxRetryAfter: over,
        clock: clock.now,
        sleep: clock.sleep,
        random: () => 0.5,
        deadline: limit === "deadline" ? Deadline.start(40, t0) : undefined,
        budget: limit === "budget" ? new RetryBudget({ ratio: 0, minPerSecond: 0 }, t0) : undefined,
      },
    );
    return `retried after ${at[1] - at[0]}`;
  } catch (e) {
    if (isRetryError(e)) return `gave up: ${e.reason}`;
    expect((e as Error).message).toMatch(/^retry: the error's retryAfter must be/);
    expect(((e as Error).cause as Error).message).toBe("busy");
    return label(e);
  }
}

/** The guard, on a simulated scheduler; its hint read by default (the error's property) or by a callback. */
async function throughGuard(
  t0: number,
  hint: unknown,
  over: OverMaxRetryAfter,
  limit: Limit,
  callback: boolean,
): Promise<string> {
  const s = new Scheduler(t0);
  const at: number[] = [];
  const refused: RefuseEvent[] = [];
  const g = guard(
    ({ attempt }) => {
      at.push(s.now());
      if (attempt === 1) throw busy(hint);
      return "ok";
    },
    {
      retry: BACKOFF,
      maxRetryAfter: CAP,
      overMaxRetryAfter: over,
      clock: s.now,
      timers: s,
      random: () => 0.5,
      deadline: limit === "deadline" ? 40 : undefined,
      budget: limit === "budget" ? new RetryBudget({ ratio: 0, minPerSecond: 0 }, t0) : false,
      onRefuse: (e) => void refused.push(e),
      ...(callback ? { retryAfter: (e: unknown) => (e as { retryAfter: number }).retryAfter } : {}),
    },
  );
  const p = g().then(
    () => `retried after ${at[1] - at[0]}`,
    (e: unknown) => {
      // The guard answers a call it does not retry with the attempt's own error.
      if (e instanceof Error && e.message === "busy") return `gave up: ${refused[0]?.kind ?? "retryAfter"}`;
      expect((e as Error).message).toMatch(
        callback ? /^guard retryAfter's answer must be/ : /^guard: the error's retryAfter must be/,
      );
      expect(((e as Error).cause as Error).message).toBe("busy");
      return label(e);
    },
  );
  await s.run();
  const answer = await p;
  expect(s.pending).toBe(0);
  return answer;
}

describe.each([0, 1_700_000_000_000.375])("one retry decision for both loops, at a clock of %d", (t0) => {
  it.each(HINTS)("a hint of %s: retry, the guard and the guard's retryAfter answer alike", async (_, hint, ...want) => {
    for (const [i, over] of (["give-up", "cap"] as const).entries()) {
      const answers = [
        await throughRetry(t0, hint, over, "none"),
        await throughGuard(t0, hint, over, "none", false),
        await throughGuard(t0, hint, over, "none", true),
      ];
      expect([over, answers]).toEqual([over, [want[i], want[i], want[i]]]);
    }
  });

  it.each(LIMITS)("%s: retry and the guard answer alike", async (_, hint, limit, want) => {
    for (const over of ["give-up", "cap"] as const)
      expect([await throughRetry(t0, hint, over, limit), await throughGuard(t0, hint, over, limit, false)]).toEqual([
        want,
        want,
      ]);
  });
});
