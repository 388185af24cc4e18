// A guarded call's span and its events, through the real tracing SDK with Node's
// AsyncLocalStorage context manager, against a flaky server on loopback.
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { RetryBudget } from "@tideward/backoff";
import { guard } from "@tideward/guard";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { instrumentGuard } from "../src/index";
import { get, startFlaky } from "./support/flaky";
import type { Flaky, Reply } from "./support/flaky";
import { tracesSdk } from "./support/sdk";

const scripts = new Map<string, readonly Reply[]>();
let flaky: Flaky;
let manager: AsyncLocalStorageContextManager;
beforeAll(async () => {
  manager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(manager);
  flaky = await startFlaky((_n, path, attempt) => {
    const script = scripts.get(path) ?? [{ status: 200 }];
    return script[Math.min(attempt, script.length) - 1] ?? { status: 200 };
  });
});
afterAll(async () => {
  await flaky.close();
  context.disable();
});

let next = 0;
function path(replies: readonly Reply[]): string {
  const p = `/s${++next}`;
  scripts.set(p, replies);
  return p;
}

/** A span's events as `name attribute=value …` lines, the attributes named by `keys`. */
function story(span: ReadableSpan, keys: readonly string[]): string[] {
  return span.events.map((e) =>
    [
      e.name,
      ...keys.filter((k) => e.attributes?.[k] !== undefined).map((k) => `${k}=${String(e.attributes?.[k])}`),
    ].join(" "),
  );
}

const KEYS = ["tideward.attempt.number", "tideward.outcome", "error.type", "tideward.refusal.kind"];

describe("a span per guarded call", () => {
  it("shows why a call took three attempts: two failures, two retries, then the answer", async () => {
    const sdk = tracesSdk();
    const call = instrumentGuard(
      ({ signal, attempt }, p: string) => get(flaky.url + p, signal, attempt),
      {
        retry: { attempts: 3, base: 1, cap: 1 },
        budget: false,
      },
      { tracer: sdk.tracer, name: "users" },
    );
    await call(path(["reset", { status: 503 }, { status: 200 }]));
    const [span] = sdk.exporter.getFinishedSpans();
    expect(span?.name).toBe("guard users");
    expect(story(span, KEYS)).toEqual([
      "tideward.attempt tideward.attempt.number=1 tideward.outcome=failure error.type=TypeError",
      "tideward.retry tideward.attempt.number=1 error.type=TypeError",
      "tideward.attempt tideward.attempt.number=2 tideward.outcome=failure error.type=HttpError",
      "tideward.retry tideward.attempt.number=2 error.type=HttpError",
      "tideward.attempt tideward.attempt.number=3 tideward.outcome=success",
    ]);
    expect(span?.attributes).toMatchObject({
      "tideward.name": "users",
      "tideward.outcome": "success",
      "tideward.attempts": 3,
    });
    expect(span?.status.code).toBe(0); // unset: the call answered
    const delays = span?.events
      .filter((e) => e.name === "tideward.retry")
      .map((e) => e.attributes?.["tideward.retry.delay"]);
    expect(delays).toHaveLength(2);
    for (const d of delays ?? []) expect(d).toBeLessThanOrEqual(0.0012); // seconds: the cap is 1 ms, jittered by a fifth
    await sdk.shutdown();
  });

  it("keeps each of many concurrent calls' attempts on its own span", async () => {
    const sdk = tracesSdk();
    const call = instrumentGuard(
      ({ signal, attempt }, p: string) => get(flaky.url + p, signal, attempt),
      {
        retry: { attempts: 4, base: 1, cap: 3 },
        budget: false,
      },
      { tracer: sdk.tracer, name: "many" },
    );
    const failures = [0, 3, 1, 2, 0, 1, 3, 2, 1, 0, 2, 3];
    const paths = failures.map((f) => path([...Array<Reply>(f).fill({ status: 503 }), { status: 200 }]));
    // Each call runs in a parent span of its own, so its span can be told apart.
    const parents = await Promise.all(
      paths.map((p) =>
        sdk.tracer.startActiveSpan(`parent ${p}`, async (parent) => {
          await call(p);
          parent.end();
          return parent.spanContext().spanId;
        }),
      ),
    );
    const spans = sdk.exporter.getFinishedSpans();
    paths.forEach((p, i) => {
      const span = spans.find((s) => s.name === "guard many" && s.parentSpanContext?.spanId === parents[i]);
      const attempts = span?.events.filter((e) => e.name === "tideward.attempt") ?? [];
      // As many attempts as the server saw on this call's path, numbered from 1, the last the answer.
      expect(attempts.map((e) => e.attributes?.["tideward.attempt.number"])).toEqual(
        Array.from({ length: flaky.served.paths.get(p) ?? -1 }, (_, k) => k + 1),
      );
      expect(attempts.length).toBe((failures[i] ?? 0) + 1);
      expect(attempts.at(-1)?.attributes?.["tideward.outcome"]).toBe("success");
      expect(span?.attributes["tideward.attempts"]).toBe(attempts.length);
    });
    await sdk.shutdown();
  });

  it("records a timed-out attempt, and a call that timed out as an error", async () => {
    const sdk = tracesSdk();
    const call = instrumentGuard(
      ({ signal, attempt }, p: string) => get(flaky.url + p, signal, attempt),
      {
        timeout: 300,
        retry: { attempts: 2, base: 1, cap: 1 },
        budget: false,
      },
      { tracer: sdk.tracer, name: "slow" },
    );
    const slow = { status: 200, delay: 3_000 };
    await expect(call(path([slow, slow]))).rejects.toThrow(/timed out/);
    const [span] = sdk.exporter.getFinishedSpans();
    expect(story(span, KEYS)).toEqual([
      "tideward.attempt tideward.attempt.number=1 tideward.outcome=timeout error.type=TimeoutError",
      "tideward.retry tideward.attempt.number=1 error.type=TimeoutError",
      "tideward.attempt tideward.attempt.number=2 tideward.outcome=timeout error.type=TimeoutError",
    ]);
    expect(span?.status).toEqual({ code: 2, message: "TimeoutError" });
    expect(span?.attributes["tideward.outcome"]).toBe("timeout");
    const ran = span?.events[0]?.attributes?.["tideward.attempt.duration"] as number;
    // Node's timers count from the event loop's cached time, which the tick's own work has left
    // behind: a 300 ms timeout can end a few milliseconds short of 300 ms by the clock.
    expect(ran).toBeGreaterThanOrEqual(0.25);
    expect(ran).toBeLessThan(3);
    await sdk.shutdown();
  });

  it("records the retry the budget refused, and a hedge with the attempt it beat", async () => {
    const sdk = tracesSdk();
    const refusing = instrumentGuard(
      ({ signal, attempt }, p: string) => get(flaky.url + p, signal, attempt),
      {
        retry: { attempts: 3, base: 1, cap: 1 },
        budget: new RetryBudget({ ratio: 0, minPerSecond: 0 }),
      },
      { tracer: sdk.tracer, name: "budget" },
    );
    await expect(refusing(path([{ status: 503 }]))).rejects.toThrow("HTTP 503");
    const hedged = instrumentGuard(
      ({ signal, attempt }, p: string) => get(flaky.url + p, signal, attempt),
      {
        hedge: { delay: 30 },
      },
      { tracer: sdk.tracer, name: "hedge" },
    );
    await hedged(path([{ status: 200, delay: 3_000 }, { status: 200 }]));
    const spans = sdk.exporter.getFinishedSpans();
    const budget = spans.find((s) => s.name === "guard budget") as ReadableSpan;
    expect(story(budget, KEYS)).toEqual([
      "tideward.attempt tideward.attempt.number=1 tideward.outcome=failure error.type=HttpError",
      "tideward.refusal tideward.attempt.number=2 tideward.refusal.kind=budget",
    ]);
    expect(budget.status.code).toBe(2);
    const hedge = spans.find((s) => s.name === "guard hedge") as ReadableSpan;
    expect(story(hedge, KEYS)).toEqual([
      "tideward.hedge tideward.attempt.number=2",
      "tideward.attempt tideward.attempt.number=2 tideward.outcome=success",
      "tideward.attempt tideward.attempt.number=1 tideward.outcome=cancelled error.type=AbortError",
    ]);
    await sdk.shutdown();
  });

  it("makes what the function does a child of the call's span", async () => {
    const sdk = tracesSdk();
    const call = instrumentGuard(
      () => {
        const inner = sdk.tracer.startSpan("inner");
        inner.end();
        return "ok";
      },
      {},
      { tracer: sdk.tracer, name: "parent" },
    );
    await call();
    const spans = sdk.exporter.getFinishedSpans();
    const outer = spans.find((s) => s.name === "guard parent");
    const inner = spans.find((s) => s.name === "inner");
    expect(inner?.parentSpanContext?.spanId).toBe(outer?.spanContext().spanId);
    expect(trace.getActiveSpan()).toBeUndefined(); // and nothing is left active after it
    await sdk.shutdown();
  });

  it("refuses a malformed scope with the guard's own error, as the plain guard does", async () => {
    const traces = tracesSdk();
    const fn = () => Promise.resolve("ran");
    const plain = guard(fn, {});
    const traced = instrumentGuard(fn, {}, { tracer: traces.tracer, name: "scoped" });
    const why = (p: Promise<unknown>) =>
      p.then(String, (e: unknown) => `${(e as Error).name}: ${(e as Error).message}`);
    for (const scope of [{ sigal: new AbortController().signal }, 5, null, [], { signal: "no" }]) {
      const expected = await why(plain.run(scope as never));
      expect(expected).toMatch(/^TypeError/);
      expect(await why(traced.run(scope as never))).toBe(expected);
    }
    // A scope with a deadline and no signal keeps its deadline.
    await expect(traced.run({ deadline: -1 })).rejects.toMatchObject({ kind: "deadline" });
    await traces.shutdown();
  });

  it("still makes the span, with no events, where no context manager carries it", async () => {
    const sdk = tracesSdk();
    context.disable(); // the global manager gone: context.with changes nothing
    try {
      const call = instrumentGuard(
        () => Promise.resolve("ok"),
        { retry: { attempts: 2 } },
        { tracer: sdk.tracer, name: "bare" },
      );
      await call();
    } finally {
      context.setGlobalContextManager(manager.enable());
    }
    const [span] = sdk.exporter.getFinishedSpans();
    expect(span?.name).toBe("guard bare");
    expect(span?.events).toEqual([]);
    expect(span?.attributes["tideward.outcome"]).toBe("success");
    expect(span?.attributes["tideward.attempts"]).toBeUndefined(); // not known, so not said
    await sdk.shutdown();
  });
});
