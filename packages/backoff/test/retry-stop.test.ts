// What stops retry before its attempts are spent: a deadline, the caller's signal, a clock that
// breaks (named), and an error that cannot be shown.
import { describe, expect, it } from "vitest";
import { Jitter, RetryBudget, isRetryError, retry } from "@tideward/backoff";
import type { RetryError, Sleep } from "@tideward/backoff";
import { Deadline } from "@tideward/time";
import { flaky, rejection, simulated } from "./simulated";

describe("retry with a broken clock", () => {
  it("rejects, naming the reading, instead of silently turning the deadline off", async () => {
    let calls = 0;
    const e = await rejection(
      retry(
        () => {
          calls++;
          throw new Error("down");
        },
        { clock: () => Number.NaN, sleep: () => Promise.resolve(), deadline: Deadline.start(1_000, 0) },
      ),
    );
    expect(e).toBeInstanceOf(RangeError);
    expect((e as Error).message).toBe("retry clock must return a finite number of milliseconds, got number NaN");
    expect(((e as Error).cause as Error).message).toBe("down"); // the attempt's error, for the log
    expect(calls).toBe(1);
  });

  it("reads no clock when there is neither a deadline nor a budget", async () => {
    const { options } = simulated({ clock: () => Number.NaN });
    let calls = 0;
    await expect(
      retry(() => {
        if (++calls < 3) throw new Error("flaky");
        return "ok";
      }, options),
    ).resolves.toBe("ok");
  });
});

describe("retry against a deadline", () => {
  it("gives up without sleeping when the next wait would pass the deadline", async () => {
    const { clock, slept, events, options } = simulated({ backoff: { jitter: Jitter.rigid, attempts: 5 } });
    const { fn, at } = flaky(clock, Infinity);
    const e = await rejection(retry(fn, { ...options, deadline: Deadline.start(250, 0) }));
    // 0: fail, wait 100 (ends at 100 < 250); 100: fail, the next wait of 200 would end at 300 ≥ 250.
    expect(at).toEqual([0, 100]);
    expect(slept).toEqual([100]);
    expect(events.length).toBe(1);
    expect(clock.now()).toBe(100);
    expect(isRetryError(e) && [e.reason, e.attempts, (e.cause as Error).message]).toEqual(["deadline", 2, "boom 2"]);
    expect((e as Error).message).toBe(
      "Gave up after 2 attempts: the next wait would pass the deadline; last error: Error: boom 2",
    );
  });

  it("counts a server's retryAfter against the deadline too", async () => {
    const { clock, slept, options } = simulated();
    const { fn } = flaky(clock, Infinity, () => Object.assign(new Error("busy"), { retryAfter: 60_000 }));
    const e = await rejection(retry(fn, { ...options, deadline: Deadline.start(30_000, 0) }));
    expect([(e as RetryError).reason, (e as RetryError).attempts, slept]).toEqual(["deadline", 1, []]);
  });

  it("a deadline without a budget never stops anything", async () => {
    const { clock, options } = simulated();
    const { fn, at } = flaky(clock, 2);
    await expect(retry(fn, { ...options, deadline: Deadline.start(0, 0) })).resolves.toBe("ok");
    expect(at.length).toBe(3);
  });
});

describe("retry with an AbortSignal", () => {
  it("stops at once mid-sleep and rejects with the abort reason, even when the sleep ignores the signal", async () => {
    const controller = new AbortController();
    const reason = new Error("user cancelled");
    let calls = 0;
    const forever: Sleep = () => new Promise<void>(() => undefined); // never resolves, never listens
    const run = retry(
      () => {
        calls++;
        throw new Error("down");
      },
      { signal: controller.signal, sleep: forever, onRetry: () => queueMicrotask(() => controller.abort(reason)) },
    );
    expect(await rejection(run)).toBe(reason);
    expect(calls).toBe(1);
  });

  it("stops the real sleep at once: a 60 s wait aborted after 5 ms ends in well under a second", async () => {
    const controller = new AbortController();
    const started = performance.now();
    const run = retry(
      () => {
        throw new Error("down");
      },
      { signal: controller.signal, backoff: { base: 60_000, cap: 60_000, jitter: Jitter.rigid } },
    );
    setTimeout(() => controller.abort(), 5);
    const e = await rejection(run);
    expect((e as Error).name).toBe("AbortError");
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it("never calls when the signal has already fired", async () => {
    let calls = 0;
    const reason = { why: "shutting down" };
    const e = await rejection(retry(() => ++calls, { signal: AbortSignal.abort(reason) }));
    expect([e, calls]).toEqual([reason, 0]);
  });

  it("rejects with the abort reason, not the call's error, when the signal fires during an attempt", async () => {
    const { options } = simulated();
    const controller = new AbortController();
    let calls = 0;
    const e = await rejection(
      retry(
        ({ signal }) => {
          calls++;
          controller.abort("stop");
          return Promise.reject(new Error(signal.aborted ? "aborted" : "?"));
        },
        { ...options, signal: controller.signal },
      ),
    );
    expect([e, calls]).toEqual(["stop", 1]);
  });

  it("earns the budget nothing for a call whose signal had fired before it began", async () => {
    const { options } = simulated();
    const shared = new RetryBudget({ ratio: 0.5, minPerSecond: 0 });
    const before = shared.available(0);
    const e = await rejection(
      retry(() => 1, { ...options, clock: () => 0, budget: shared, signal: AbortSignal.abort("gone") }),
    );
    expect(e).toBe("gone");
    expect(shared.available(0)).toBe(before);
  });

  it("leaves no listener on the caller's signal when a sleep of its own returns no promise", async () => {
    const { options } = simulated();
    const controller = new AbortController();
    const signal = controller.signal;
    let listening = 0;
    const add = signal.addEventListener.bind(signal);
    const remove = signal.removeEventListener.bind(signal);
    signal.addEventListener = (...a: Parameters<typeof add>) => (listening++, add(...a));
    signal.removeEventListener = (...a: Parameters<typeof remove>) => (listening--, remove(...a));
    const failure = new Error("down");
    const e = await rejection(
      retry(() => Promise.reject(failure), { ...options, signal, sleep: (() => undefined) as unknown as Sleep }),
    );
    expect(e).toEqual(new TypeError("retry sleep must return a promise, got undefined"));
    expect((e as Error).cause).toBe(failure);
    expect(listening).toBe(0);
  });
});

describe("retry giving up on errors that cannot be shown", () => {
  it.each([
    ["a Symbol message", () => Object.assign(new Error(), { message: Symbol("m") as unknown as string })],
    [
      "a message getter that throws",
      () =>
        Object.defineProperty(new Error(), "message", {
          get() {
            throw new Error("no");
          },
        }),
    ],
  ])("still makes the RetryError for an Error with %s, its cause kept", async (_, make) => {
    const { options } = simulated();
    const failure = make();
    const e = await rejection(retry(() => Promise.reject(failure), { ...options, backoff: { attempts: 1 } }));
    expect(isRetryError(e)).toBe(true);
    expect((e as RetryError).cause).toBe(failure);
    expect((e as RetryError).message).toContain("an Error that cannot be shown");
  });
});
