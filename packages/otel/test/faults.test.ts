// Telemetry that throws, through the real SDK with one method made to throw: the call answers as
// the guard alone would, the caller's listeners run, spans end, and the process keeps running.
import { context } from "@opentelemetry/api";
import type { Meter, Span, Tracer } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { guard, isTimeoutError } from "@tideward/guard";
import type { Attempt, GuardOptions } from "@tideward/guard";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { instrumentGuard } from "../src/index";
import { metricsSdk, tracesSdk } from "./support/sdk";

beforeAll(() => void context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable()));
afterAll(() => void context.disable());

/** `target` with `method` throwing and everything else its own. */
function throwing<T extends object>(target: T, method: string): T {
  return new Proxy(target, {
    get(t, k) {
      if (k === method)
        return () => {
          throw new Error(`${method} failed`);
        };
      const v: unknown = Reflect.get(t, k);
      return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(t) : v;
    },
  });
}

/** A tracer whose spans throw from `method`. */
function spansThrowing(tracer: Tracer, method: keyof Span): Tracer {
  return new Proxy(tracer, {
    get: (t, k) =>
      k === "startSpan"
        ? (...a: Parameters<Tracer["startSpan"]>) => throwing(t.startSpan(...a), method)
        : (Reflect.get(t, k) as unknown),
  });
}

/** A meter whose histograms throw from `record`. */
function recordThrowing(meter: Meter): Meter {
  return new Proxy(meter, {
    get: (t, k) =>
      k === "createHistogram"
        ? (...a: Parameters<Meter["createHistogram"]>) => throwing(t.createHistogram(...a), "record")
        : (Reflect.get(t, k) as unknown),
  });
}

/** An attempt that never answers: only its signal ends it. */
const hanging = ({ signal }: Attempt) =>
  new Promise<string>((_resolve, reject) => signal.addEventListener("abort", () => reject(signal.reason as Error)));

/** How a call settled: `ok <value>` or the name of what it rejected with. */
const settled = (p: Promise<unknown>) =>
  p.then(
    (v) => `ok ${String(v)}`,
    (e: unknown) => (isTimeoutError(e) ? "TimeoutError" : (e as Error).message),
  );

describe("telemetry that throws", () => {
  it("leaves an attempt cut off by its timeout to the guard when the span's addEvent or the clock throws", async () => {
    const traces = tracesSdk();
    const uncaught: unknown[] = [];
    const note = (e: unknown) => void uncaught.push(e);
    process.on("uncaughtException", note);
    try {
      const events = instrumentGuard(
        hanging,
        { timeout: 5 },
        { tracer: spansThrowing(traces.tracer, "addEvent"), name: "events" },
      );
      // A clock that breaks once the attempt has started: the guard's own reading at the cut-off
      // is its business; ours, in the signal's listener, must not escape.
      let broken = false;
      const clock = () => {
        if (broken) throw new Error("clock gone");
        return performance.now();
      };
      const options: GuardOptions<string> = { timeout: 5, clock };
      const breaking = (a: Attempt) => {
        broken = true;
        return hanging(a);
      };
      const clocked = instrumentGuard(breaking, options, { tracer: traces.tracer, name: "clock" });
      expect(await settled(events())).toBe("TimeoutError");
      const traced = await settled(clocked());
      broken = false;
      expect(traced).toBe(await settled(guard(breaking, options)()));
      // Listener errors are reported on a later turn.
      await new Promise((resolve) => setImmediate(resolve));
      expect(uncaught).toEqual([]);
      expect(traces.exporter.getFinishedSpans().map((s) => s.name)).toEqual(["guard events", "guard clock"]);
    } finally {
      process.off("uncaughtException", note);
      await traces.shutdown();
    }
  });

  it("answers as the guard would and still runs the caller's listener when a histogram or a span throws", async () => {
    const sdk = metricsSdk();
    const traces = tracesSdk();
    let heard = 0;
    let ran = 0;
    const fn = () => {
      ran++;
      return Promise.resolve("ok");
    };
    const onOutcome = () => void heard++;
    const meter = recordThrowing(sdk.meter);
    const guards = [
      instrumentGuard(fn, { onOutcome }, { meter, name: "one" }),
      instrumentGuard(fn, { onOutcome, retry: { attempts: 2, base: 1 } }, { meter, name: "retrying" }),
      instrumentGuard(fn, { onOutcome }, { tracer: spansThrowing(traces.tracer, "addEvent"), name: "events" }),
      instrumentGuard(fn, { onOutcome }, { tracer: throwing(traces.tracer, "startSpan"), name: "untraced" }),
    ];
    for (const g of guards) expect(await settled(g())).toBe("ok ok");
    expect([ran, heard]).toEqual([4, 4]);
    // Nothing is counted for an event whose duration could not be recorded.
    const m = await sdk.collect();
    expect(m.sum("tideward.guard.calls") + m.sum("tideward.guard.attempts")).toBe(0);
    // The span whose events failed still ended; the tracer that failed made none.
    expect(traces.exporter.getFinishedSpans().map((s) => s.name)).toEqual(["guard events"]);
    await sdk.shutdown();
    await traces.shutdown();
  });

  it("ends every span, even when setAttribute throws", async () => {
    const traces = tracesSdk();
    const call = instrumentGuard(
      () => Promise.resolve("ok"),
      { retry: { attempts: 2, base: 1 } },
      {
        tracer: spansThrowing(traces.tracer, "setAttribute"),
        name: "attributes",
      },
    );
    for (let i = 0; i < 3; i++) expect(await call()).toBe("ok");
    expect(traces.exporter.getFinishedSpans()).toHaveLength(3);
    await traces.shutdown();
  });

  it("counts every call made after the meter's createObservableCounter threw once, on the same meter and name", async () => {
    const sdk = metricsSdk();
    let failures = 1;
    const meter = new Proxy(sdk.meter, {
      get: (t, k) =>
        k === "createObservableCounter" && failures-- > 0
          ? () => {
              throw new Error("createObservableCounter failed");
            }
          : (Reflect.get(t, k) as unknown),
    });
    const fn = () => Promise.resolve("ok");
    // The meter's error at setup is the caller's to see.
    expect(() => instrumentGuard(fn, {}, { meter, name: "again" })).toThrow("createObservableCounter failed");
    const call = instrumentGuard(fn, {}, { meter, name: "again" });
    for (let i = 0; i < 10; i++) expect(await call()).toBe("ok");
    const m = await sdk.collect();
    expect(m.sum("tideward.guard.calls", { "tideward.name": "again" })).toBe(10);
    expect(m.sum("tideward.guard.attempts", { "tideward.name": "again" })).toBe(10);
    await sdk.shutdown();
  });
});
