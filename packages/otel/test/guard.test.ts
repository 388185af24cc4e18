// A guard against a flaky server on loopback, reported through the real SDK: every count must be
// what the server and the callers saw, independently of the telemetry.
import { RetryBudget } from "@tideward/backoff";
import { Breaker } from "@tideward/breaker";
import { isRefusal } from "@tideward/guard";
import type { OutcomeEvent } from "@tideward/guard";
import { ManualClock } from "@tideward/time";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { instrumentGuard } from "../src/index";
import { startFlaky, get } from "./support/flaky";
import type { Flaky, Reply } from "./support/flaky";
import { metricsSdk, tracesSdk } from "./support/sdk";

const CALLS = "tideward.guard.calls";
const ATTEMPTS = "tideward.guard.attempts";
const RETRIES = "tideward.guard.retries";
const REFUSALS = "tideward.guard.refusals";
const HEDGES = "tideward.guard.hedges";
const CALL_S = "tideward.guard.call.duration";
const ATTEMPT_S = "tideward.guard.attempt.duration";
const outcome = "tideward.outcome";
const kind = "tideward.attempt.kind";
const errorType = "error.type";

/** Each call has a path of its own, and its replies are scripted by path. */
const scripts = new Map<string, readonly Reply[]>();
let flaky: Flaky;
beforeAll(async () => {
  flaky = await startFlaky((_n, path, attempt) => {
    const script = scripts.get(path) ?? [{ status: 200 }];
    return script[Math.min(attempt, script.length) - 1] ?? { status: 200 };
  });
});
afterAll(() => flaky.close());

let next = 0;
/** A fresh path with `replies` as its script. */
function path(replies: readonly Reply[]): string {
  const p = `/p${++next}`;
  scripts.set(p, replies);
  return p;
}

/** Runs `calls` `width` at a time; answers how many resolved and what each rejection was. */
async function drive(
  calls: readonly (() => Promise<unknown>)[],
  width: number,
): Promise<{ ok: number; errors: unknown[] }> {
  let ok = 0;
  const errors: unknown[] = [];
  for (let i = 0; i < calls.length; i += width) {
    await Promise.all(
      calls.slice(i, i + width).map((c) =>
        c().then(
          () => void ok++,
          (e: unknown) => void errors.push(e),
        ),
      ),
    );
  }
  return { ok, errors };
}

describe("a retrying guard against a flaky server", () => {
  it("counts calls, attempts and retries by outcome and error type exactly as the server and the callers saw them", async () => {
    const sdk = metricsSdk();
    const before = { ...Object.fromEntries(flaky.served.by), requests: flaky.served.requests };
    // Four kinds of call: fails once then answers; fails three times; answers at once; the
    // connection drops, then it answers.
    const plans: Reply[][] = [
      [{ status: 503 }, { status: 200 }],
      ["reset", { status: 503 }, { status: 503 }],
      [{ status: 200 }],
      ["reset", { status: 200 }],
    ];
    const call = instrumentGuard(
      ({ signal, attempt }, p: string) => get(flaky.url + p, signal, attempt),
      {
        retry: { attempts: 3, base: 1, cap: 2 },
        budget: false,
      },
      { meter: sdk.meter, name: "api" },
    );
    const paths = Array.from({ length: 40 }, (_, i) => path(plans[i % 4]));
    const { ok, errors } = await drive(
      paths.map((p) => () => call(p)),
      8,
    );
    const m = await sdk.collect();
    const served = (k: number | "reset") =>
      (flaky.served.by.get(k) ?? 0) - ((before as Record<string, number>)[k] ?? 0);
    const requests = flaky.served.requests - before.requests;

    // The callers: 30 answers, 10 failures with the last attempt's 503.
    expect(ok).toBe(30);
    expect(errors.map((e) => (e as Error).name)).toEqual(Array(10).fill("HttpError"));
    expect(m.sum(CALLS, { [outcome]: "success" })).toBe(ok);
    expect(m.sum(CALLS, { [outcome]: "failure", [errorType]: "HttpError" })).toBe(errors.length);
    expect(m.sum(CALLS)).toBe(40);

    // The server: every attempt reached it, and each reply is an attempt of that outcome.
    expect(m.sum(ATTEMPTS)).toBe(requests);
    expect(m.sum(ATTEMPTS, { [outcome]: "success" })).toBe(served(200));
    expect(m.sum(ATTEMPTS, { [outcome]: "failure", [errorType]: "HttpError" })).toBe(served(503));
    // A dropped connection is fetch's TypeError.
    expect(m.sum(ATTEMPTS, { [outcome]: "failure", [errorType]: "TypeError" })).toBe(served("reset"));
    expect(m.sum(ATTEMPTS, { [kind]: "first" })).toBe(40);
    expect(m.sum(ATTEMPTS, { [kind]: "first", [outcome]: "success" })).toBe(10);
    expect(m.sum(ATTEMPTS, { [kind]: "hedge" })).toBe(0);

    // Every attempt after a call's first is a retry, and nothing was refused.
    expect(m.sum(RETRIES)).toBe(requests - 40);
    expect(m.sum(RETRIES, { [errorType]: "TypeError" })).toBe(served("reset"));
    expect(m.sum(REFUSALS)).toBe(0);

    // One duration per attempt and per call, in seconds: a call lasts at least its attempts.
    const attemptTime = m.histogram(ATTEMPT_S);
    const callTime = m.histogram(CALL_S);
    expect(attemptTime.count).toBe(requests);
    expect(callTime.count).toBe(40);
    expect(callTime.sum).toBeGreaterThanOrEqual(attemptTime.sum);
    expect(callTime.sum).toBeLessThan(40 * 10); // seconds, not milliseconds
    expect(m.metric(CALL_S).descriptor.unit).toBe("s");
    await sdk.shutdown();
  });

  it("counts a timed-out attempt as a timeout, and a call whose every attempt timed out as one", async () => {
    const sdk = metricsSdk();
    // Generous numbers: on two cores shared with a cold full test run, a loopback GET has taken
    // past 300 ms (every retry timed out too); a second leaves room, the slow answer five.
    const slow = { status: 200, delay: 5_000 };
    const call = instrumentGuard(
      ({ signal, attempt }, p: string) => get(flaky.url + p, signal, attempt),
      {
        timeout: 1_000,
        retry: { attempts: 2, base: 1, cap: 1 },
        budget: false,
      },
      { meter: sdk.meter, name: "slow" },
    );
    const recovering = Array.from({ length: 6 }, () => path([slow, { status: 200 }]));
    const stuck = Array.from({ length: 2 }, () => path([slow, slow]));
    const { ok, errors } = await drive(
      [...recovering, ...stuck].map((p) => () => call(p)),
      8,
    );
    expect(ok).toBe(6);
    expect(errors.map((e) => (e as Error).name)).toEqual(["TimeoutError", "TimeoutError"]);
    const m = await sdk.collect();
    expect(m.sum(ATTEMPTS, { [outcome]: "timeout", [errorType]: "TimeoutError" })).toBe(6 + 4);
    expect(m.sum(ATTEMPTS, { [kind]: "retry", [outcome]: "success" })).toBe(6);
    expect(m.sum(CALLS, { [outcome]: "success" })).toBe(6);
    expect(m.sum(CALLS, { [outcome]: "timeout", [errorType]: "TimeoutError" })).toBe(2);
    expect(m.sum(RETRIES, { [errorType]: "TimeoutError" })).toBe(8);
    // A timed-out attempt lasted its timeout: 1 s, give or take a timer's lateness.
    const timedOut = m.histogram(ATTEMPT_S, { [outcome]: "timeout" });
    expect(timedOut.sum / timedOut.count).toBeGreaterThanOrEqual(0.999);
    await sdk.shutdown();
  });

  it("counts hedges, and the slow attempt each hedge beat as cancelled", async () => {
    const sdk = metricsSdk();
    const call = instrumentGuard(
      ({ signal, attempt }, p: string) => get(flaky.url + p, signal, attempt),
      {
        hedge: { delay: 30 },
      },
      { meter: sdk.meter, name: "hedged" },
    );
    const paths = Array.from({ length: 5 }, () => path([{ status: 200, delay: 3_000 }, { status: 200 }]));
    const { ok } = await drive(
      paths.map((p) => () => call(p)),
      5,
    );
    expect(ok).toBe(5);
    const m = await sdk.collect();
    expect(m.sum(HEDGES)).toBe(5);
    expect(m.sum(ATTEMPTS, { [kind]: "hedge", [outcome]: "success" })).toBe(5);
    expect(m.sum(ATTEMPTS, { [kind]: "first", [outcome]: "cancelled", [errorType]: "AbortError" })).toBe(5);
    expect(m.sum(CALLS, { [outcome]: "success" })).toBe(5);
    await sdk.shutdown();
  });

  it("counts the retry budget's refusals, and reports what the budget has left", async () => {
    const sdk = metricsSdk();
    const clock = new ManualClock(1_700_000_000_000.25);
    const budget = new RetryBudget({ ratio: 0, minPerSecond: 0 }, clock.now());
    const call = instrumentGuard(
      ({ signal, attempt }, p: string) => get(flaky.url + p, signal, attempt),
      {
        retry: { attempts: 3, base: 1, cap: 1 },
        budget,
        clock: clock.now,
      },
      { meter: sdk.meter, name: "budgeted" },
    );
    const paths = Array.from({ length: 4 }, () => path([{ status: 503 }, { status: 200 }]));
    const { ok, errors } = await drive(
      paths.map((p) => () => call(p)),
      4,
    );
    expect(ok).toBe(0);
    expect(errors).toHaveLength(4);
    const m = await sdk.collect();
    expect(m.sum(REFUSALS, { "tideward.refusal.kind": "budget" })).toBe(4);
    expect(m.sum(RETRIES)).toBe(0);
    expect(m.sum(CALLS, { [outcome]: "failure", [errorType]: "HttpError" })).toBe(4);
    expect(m.sum("tideward.retry_budget.available")).toBe(budget.available(clock.now()));
    await sdk.shutdown();
  });
});

describe("a guard that makes one attempt a call", () => {
  it("counts the breaker's refusals as refused calls, and reports its drop ratio as the breaker reads it", async () => {
    const sdk = metricsSdk();
    const clock = new ManualClock(1_700_000_000_000.5);
    const breaker = new Breaker({ window: 1_000, size: 10 }, clock.now());
    const call = instrumentGuard(
      ({ signal, attempt }, p: string) => get(flaky.url + p, signal, attempt),
      {
        breaker,
        clock: clock.now,
        random: () => 0.5,
      },
      { meter: sdk.meter, name: "outage" },
    );
    const down = path([{ status: 503 }]);
    const { errors } = await drive(
      Array.from({ length: 30 }, () => () => call(down)),
      1,
    );
    const refused = errors.filter((e) => isRefusal(e) && e.kind === "breaker").length;
    const failed = errors.filter((e) => (e as Error).name === "HttpError").length;
    expect(refused + failed).toBe(30);
    expect(refused).toBeGreaterThan(0);
    expect(flaky.served.paths.get(down)).toBe(failed);
    const m = await sdk.collect();
    expect(m.sum(REFUSALS, { "tideward.refusal.kind": "breaker" })).toBe(refused);
    expect(m.sum(CALLS, { [outcome]: "refused", "tideward.refusal.kind": "breaker", [errorType]: "Refusal" })).toBe(
      refused,
    );
    expect(m.sum(CALLS, { [outcome]: "failure" })).toBe(failed);
    expect(m.sum(ATTEMPTS)).toBe(failed);
    // The clock stands still between the collection and this reading: the same instant.
    const ratio = m.sum("tideward.breaker.drop_ratio", { "tideward.name": "outage" });
    expect(ratio).toBe(breaker.ratio(clock.now()));
    expect(ratio).toBeGreaterThan(0.5);
    // A window later, with the backend healthy again, the ratio is back to 0.
    clock.advance(2_000);
    const up = path([{ status: 200 }]);
    await drive(
      Array.from({ length: 10 }, () => () => call(up)),
      1,
    );
    expect((await sdk.collect()).sum("tideward.breaker.drop_ratio", { "tideward.name": "outage" })).toBe(0);
    await sdk.shutdown();
  });

  it("builds the breaker and shedder it is given as fields, so that they can be read", async () => {
    const sdk = metricsSdk();
    const call = instrumentGuard(
      ({ signal, attempt }, p: string) => get(flaky.url + p, signal, attempt),
      {
        breaker: { window: 1_000, size: 10 },
        shedder: { cpu: 800 },
        load: () => 425,
        random: () => 0,
      },
      { meter: sdk.meter, name: "fields" },
    );
    const down = path([{ status: 503 }]);
    await drive(
      Array.from({ length: 12 }, () => () => call(down)),
      1,
    );
    const m = await sdk.collect();
    expect(m.sum("tideward.breaker.drop_ratio", { "tideward.name": "fields" })).toBeGreaterThan(0);
    expect(m.sum("tideward.shedder.load", { "tideward.name": "fields" })).toBe(0.425);
    expect(m.sum("tideward.shedder.active_calls", { "tideward.name": "fields" })).toBe(0);
    expect(m.sum("tideward.shedder.capacity", { "tideward.name": "fields" })).toBeGreaterThanOrEqual(1);
    await sdk.shutdown();
  });
});

describe("the guard's own events", () => {
  it("still reach the caller's listeners, once each and in order", async () => {
    const sdk = metricsSdk();
    const seen: string[] = [];
    const call = instrumentGuard(
      ({ signal, attempt }, p: string) => get(flaky.url + p, signal, attempt),
      {
        retry: { attempts: 2, base: 1, cap: 1 },
        budget: false,
        onOutcome: (e: OutcomeEvent) => void seen.push(`outcome ${e.attempt} ${e.outcome}`),
        onRetry: (e) => void seen.push(`retry ${e.attempt}`),
        onRefuse: (e) => void seen.push(`refuse ${e.kind}`),
        onHedge: () => void seen.push("hedge"),
      },
      { meter: sdk.meter, name: "listened" },
    );
    await call(path([{ status: 503 }, { status: 200 }]));
    expect(seen).toEqual(["outcome 1 failure", "retry 1", "outcome 2 success"]);
    await sdk.shutdown();
  });

  it("count no retry that a throwing onRetry stopped, and no retry event on the call's span", async () => {
    const sdk = metricsSdk();
    const traces = tracesSdk();
    const budget = new RetryBudget({ minPerSecond: 10 });
    const call = instrumentGuard(
      ({ signal, attempt }, p: string) => get(flaky.url + p, signal, attempt),
      {
        retry: { attempts: 3, base: 1, cap: 1 },
        budget,
        onRetry: () => {
          throw new Error("no retry");
        },
      },
      { meter: sdk.meter, tracer: traces.tracer, name: "stopped" },
    );
    const before = budget.available(performance.now());
    await expect(call(path([{ status: 503 }, { status: 200 }]))).rejects.toThrow("no retry");
    const m = await sdk.collect();
    expect(m.sum(RETRIES, { "tideward.name": "stopped" })).toBe(0);
    expect(m.sum(ATTEMPTS, { "tideward.name": "stopped" })).toBe(1);
    expect(m.sum(CALLS, { "tideward.name": "stopped", [outcome]: "failure", [errorType]: "Error" })).toBe(1);
    // The retry it stopped was given back to the budget, as the guard does.
    expect(budget.available(performance.now())).toBe(before);
    const events = traces.exporter.getFinishedSpans().flatMap((s) => s.events.map((e) => e.name));
    expect(traces.exporter.getFinishedSpans()).toHaveLength(1);
    expect(events.filter((n) => n.includes("retry"))).toEqual([]);
    await sdk.shutdown();
    await traces.shutdown();
  });

  it("are counted before the caller's listener runs, so one that throws still leaves the count", async () => {
    const sdk = metricsSdk();
    for (const retry of [undefined, { attempts: 2 }]) {
      const name = retry === undefined ? "one" : "retrying";
      const throwing = instrumentGuard(
        () => Promise.resolve("ok"),
        {
          retry,
          onOutcome: () => {
            throw new Error("listener");
          },
        },
        { meter: sdk.meter, name },
      );
      // A listener that throws ends the call with its error, as the guard documents.
      await expect(throwing()).rejects.toThrow("listener");
      const m = await sdk.collect();
      expect(m.sum(ATTEMPTS, { "tideward.name": name, [outcome]: "success" })).toBe(1);
      // The call is counted as what its caller got: the listener's error.
      expect(m.sum(CALLS, { "tideward.name": name })).toBe(1);
      expect(m.sum(CALLS, { "tideward.name": name, [outcome]: "failure", [errorType]: "Error" })).toBe(1);
    }
    await sdk.shutdown();
  });

  it("count a one-attempt call whose clock threw after its attempt as the rejection it is", async () => {
    const sdk = metricsSdk();
    let broken = false;
    const clock = () => {
      if (broken) throw new RangeError("clock gone");
      return 0;
    };
    const call = instrumentGuard(
      () => {
        broken = true;
        return Promise.resolve("ok");
      },
      { clock },
      { meter: sdk.meter, name: "late-clock" },
    );
    await expect(call()).rejects.toThrow("clock gone");
    const m = await sdk.collect();
    expect(m.sum(CALLS)).toBe(1);
    expect(m.sum(CALLS, { [outcome]: "failure", [errorType]: "RangeError" })).toBe(1);
    await sdk.shutdown();
  });
});
