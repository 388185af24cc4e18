// retry on a manual clock: the schedule it waits, when it gives up, what it retries, and a
// server's retryAfter; and once with the real defaults. What stops it early is in
// retry-stop.test.ts, a shared RetryBudget in retry-budget.test.ts.
import { describe, expect, it } from "vitest";
import { Backoff, Jitter, RetryBudget, RetryError, isRetryError, retry } from "@tideward/backoff";
import { seededRandom } from "@tideward/time";
import { flaky, rejection, simulated } from "./simulated";

describe("retry on a manual clock", () => {
  it("returns the first success, waiting the preset's schedule between failures", async () => {
    const { clock, slept, events, options } = simulated();
    const { fn, at } = flaky(clock, 2);
    await expect(retry(fn, options)).resolves.toBe("ok");
    expect(at).toEqual([0, 100, 300]); // draws of 0.5: the middle of 80–120 and of 160–240 ms
    expect(slept).toEqual([100, 200]);
    expect(events.map((e) => [e.attempt, (e.error as Error).message, e.delay])).toEqual([
      [1, "boom 1", 100],
      [2, "boom 2", 200],
    ]);
  });

  it("makes one call and no wait when the first attempt succeeds, and hands it the attempt and a signal", async () => {
    const { slept, options } = simulated();
    const seen: unknown[] = [];
    const value = await retry(({ attempt, signal }) => {
      seen.push(attempt, signal instanceof AbortSignal, signal.aborted);
      return 42;
    }, options);
    expect(value).toBe(42);
    expect(seen).toEqual([1, true, false]);
    expect(slept).toEqual([]);
  });

  it("hands each attempt a signal of its own when the caller gave none, so a listener left on it goes with the attempt", async () => {
    const { options } = simulated();
    const signals: AbortSignal[] = [];
    const listen = ({ signal }: { signal: AbortSignal }) => {
      signals.push(signal);
      signal.addEventListener("abort", () => undefined); // never removed, as careless code does
    };
    await expect(
      retry((c) => {
        listen(c);
        return Promise.reject(new Error("again"));
      }, options),
    ).rejects.toThrow(RetryError);
    await retry(listen, options);
    await retry(listen, options);
    expect(signals).toHaveLength(5); // three attempts, then two calls of one
    expect(new Set(signals).size).toBe(5);
    expect(signals.every((s) => !s.aborted)).toBe(true);
    // The caller's own signal, when given, is the one every attempt gets.
    const controller = new AbortController();
    const handed: AbortSignal[] = [];
    await expect(
      retry(
        ({ signal }) => {
          handed.push(signal);
          return Promise.reject(new Error("again"));
        },
        { ...options, signal: controller.signal },
      ),
    ).rejects.toThrow(RetryError);
    expect(handed).toEqual([controller.signal, controller.signal, controller.signal]);
  });

  it("gives up with a RetryError when the attempts are spent: the last error as cause, the count in the message", async () => {
    const { clock, slept, options } = simulated();
    const { fn, at } = flaky(clock, Infinity);
    const e = await rejection(retry(fn, options));
    expect(e).toBeInstanceOf(RetryError);
    expect(isRetryError(e)).toBe(true);
    const err = e as RetryError;
    expect(err.attempts).toBe(3);
    expect(err.reason).toBe("exhausted");
    expect((err.cause as Error).message).toBe("boom 3");
    expect(err.message).toBe("Gave up after 3 attempts: the policy allows no more attempts; last error: Error: boom 3");
    expect(at).toEqual([0, 100, 300]);
    expect(slept).toEqual([100, 200]);
    expect(clock.now()).toBe(300);
  });

  it("runs a whole schedule of each jitter exactly as `schedule` plans it, decorrelated's growth included", async () => {
    for (const jitter of [Jitter.rigid, Jitter.full, Jitter.equal, Jitter.decorrelated, Jitter.spread(0.3)]) {
      const policy = new Backoff({ attempts: 8, jitter });
      const { clock, slept, options } = simulated({ random: seededRandom(9), backoff: policy });
      const { fn } = flaky(clock, Infinity);
      const e = await rejection(retry(fn, options));
      expect((e as RetryError).attempts).toBe(8);
      const draw = seededRandom(9);
      expect(slept).toEqual(policy.schedule(Array.from({ length: 7 }, draw)));
      expect(clock.now()).toBe(slept.reduce((a, b) => a + b, 0));
    }
  });

  it("takes the backoff as fields over the preset, validated", async () => {
    const { clock, slept, options } = simulated({ backoff: { attempts: 5, jitter: Jitter.rigid } });
    await rejection(retry(flaky(clock, Infinity).fn, options));
    expect(slept).toEqual([100, 200, 400, 800]);
    await expect(retry(() => 1, { backoff: { attempts: 0 } })).rejects.toThrow(
      new RangeError("retry backoff.attempts must be 1 or more, got 0"),
    );
    await expect(retry(() => 1, { backoff: { cap: -1 } })).rejects.toThrow(
      new RangeError("retry backoff.cap (ms) must be at least the base (100), got -1"),
    );
    await expect(retry(() => 1, { backoff: { atempts: 2 } as never })).rejects.toThrow(
      /^retry backoff has no option "atempts"/,
    );
    await expect(retry(() => 1, { backoff: 5 as never })).rejects.toThrow(/^retry backoff must be an object, got /);
  });

  it("retries a call that throws synchronously", async () => {
    const { options } = simulated();
    let calls = 0;
    const value = await retry(() => {
      if (++calls < 3) throw new Error("sync");
      return "done";
    }, options);
    expect([value, calls]).toEqual(["done", 3]);
  });

  it("stops at once when retryOn says no, rejecting with that very error, unwrapped", async () => {
    const { clock, slept, events, options } = simulated();
    const fatal = new TypeError("bad request");
    const { fn, at } = flaky(clock, Infinity, () => fatal);
    const seen: unknown[] = [];
    const e = await rejection(retry(fn, { ...options, retryOn: (err) => (seen.push(err), false) }));
    expect(e).toBe(fatal);
    expect(seen).toEqual([fatal]);
    expect(at).toEqual([0]);
    expect([slept, events]).toEqual([[], []]);
  });

  it("retries what retryOn accepts and stops at the first it refuses", async () => {
    const { clock, options } = simulated();
    const { fn, at } = flaky(clock, Infinity, (n) => Object.assign(new Error(`e${n}`), { status: n < 2 ? 503 : 400 }));
    const e = await rejection(
      retry(fn, { ...options, backoff: { attempts: 5 }, retryOn: (err) => (err as { status: number }).status === 503 }),
    );
    expect((e as Error).message).toBe("e2");
    expect(at).toEqual([0, 100]);
  });

  it("waits at least an error's retryAfter (ms), and the backoff's delay when that is longer", async () => {
    const { clock, slept, events, options } = simulated({ backoff: { attempts: 4, jitter: Jitter.rigid } });
    const hints = [5_000, 50, 0];
    const { fn, at } = flaky(clock, 3, (n) => Object.assign(new Error(`busy ${n}`), { retryAfter: hints[n - 1] }));
    await expect(retry(fn, options)).resolves.toBe("ok");
    expect(slept).toEqual([5_000, 200, 400]); // 5 000 > 100; 50 < 200; 0 is no hint
    expect(events.map((e) => e.delay)).toEqual([5_000, 200, 400]);
    expect(at).toEqual([0, 5_000, 5_200, 5_600]);
  });

  it("reads a retryAfter of 0 or less, undefined or null as no hint", async () => {
    const { clock, slept, options } = simulated({ backoff: { attempts: 5, jitter: Jitter.rigid } });
    const hints: unknown[] = [-1, -Infinity, undefined, null];
    const { fn } = flaky(clock, 4, (n) => Object.assign(new Error("x"), { retryAfter: hints[n - 1] }));
    await retry(fn, options);
    expect(slept).toEqual([100, 200, 400, 800]);
  });

  // Text was ignored without a word, and the call retried after the backoff's delay alone.
  it.each([
    ["text", "9000", TypeError, 'got string "9000": text is not read as a number; parse it into milliseconds first'],
    ["NaN", Number.NaN, RangeError, "got NaN"],
    [
      "a Date",
      new Date(0),
      TypeError,
      "got object [object Date]: a Date is an instant; give the wait until it (date.getTime() - now)",
    ],
    ["a BigInt", 5n, TypeError, "got bigint 5n"],
    ["true", true, TypeError, "got boolean true"],
  ] as const)(
    "rejects a retryAfter of %s, naming it, the attempt's error its cause, before any wait or grant",
    async (_, hint, type, got) => {
      const budget = new RetryBudget({ ratio: 0, minPerSecond: 1 });
      const { clock, slept, events, options } = simulated({ budget });
      const { fn, at } = flaky(clock, 1, () => Object.assign(new Error("busy"), { retryAfter: hint }));
      const e = await rejection(retry(fn, options));
      expect(e).toBeInstanceOf(type);
      expect((e as Error).message).toBe(
        `retry: the error's retryAfter must be a number of milliseconds (or undefined for none), ${got}`,
      );
      expect(((e as Error).cause as Error).message).toBe("busy");
      expect([at, slept, events, budget.available(clock.now())]).toEqual([[0], [], [], 10]);
    },
  );
});

describe("retry and a server's retryAfter that is too long", () => {
  it("gives up at once, without sleeping, on a hint over maxRetryAfter (a minute by default)", async () => {
    const { clock, slept, events, options } = simulated();
    const { fn, at } = flaky(clock, Infinity, () => Object.assign(new Error("come back later"), { retryAfter: 1e308 }));
    const e = await rejection(retry(fn, options));
    expect(isRetryError(e) && [e.reason, e.attempts, (e.cause as Error).message]).toEqual([
      "retryAfter",
      1,
      "come back later",
    ]);
    expect((e as Error).message).toBe(
      "Gave up after 1 attempt: the error asked to wait longer than maxRetryAfter; last error: Error: come back later",
    );
    expect([at, slept, events, clock.now()]).toEqual([[0], [], [], 0]);
  });

  it("obeys a hint up to maxRetryAfter, and any hint with Infinity", async () => {
    const hinted = (ms: number) => () => Object.assign(new Error("busy"), { retryAfter: ms });
    const a = simulated();
    await rejection(retry(flaky(a.clock, Infinity, hinted(60_000)).fn, a.options));
    expect(a.slept).toEqual([60_000, 60_000]); // exactly the default cap is still obeyed
    const b = simulated({ maxRetryAfter: 3_600_000 });
    await rejection(retry(flaky(b.clock, Infinity, hinted(3_600_000)).fn, b.options));
    expect(b.slept).toEqual([3_600_000, 3_600_000]);
    const c = simulated({ maxRetryAfter: 100 });
    const e = await rejection(retry(flaky(c.clock, Infinity, hinted(101)).fn, c.options));
    expect([(e as RetryError).reason, c.slept]).toEqual(["retryAfter", []]);
    const d = simulated({ maxRetryAfter: Infinity });
    await rejection(retry(flaky(d.clock, Infinity, hinted(1e300)).fn, d.options));
    expect(d.slept).toEqual([1e300, 1e300]);
  });

  it("gives up on a retryAfter of Infinity, as on 1e308, whatever maxRetryAfter is", async () => {
    for (const maxRetryAfter of [undefined, 1e308, Infinity]) {
      const { clock, slept, options } = simulated({ maxRetryAfter });
      const { fn, at } = flaky(clock, Infinity, () => Object.assign(new Error("busy"), { retryAfter: Infinity }));
      const e = await rejection(retry(fn, options));
      expect([isRetryError(e) && e.reason, at, slept]).toEqual(["retryAfter", [0], []]);
    }
  });

  it("gives up on the attempts first: a hint after the last attempt is not the reason", async () => {
    const { clock, options } = simulated({ backoff: { attempts: 1 } });
    const e = await rejection(
      retry(flaky(clock, Infinity, () => Object.assign(new Error("x"), { retryAfter: 1e9 })).fn, options),
    );
    expect((e as RetryError).reason).toBe("exhausted");
  });
});

describe("retry with the real defaults", () => {
  it("sleeps for real between attempts (a few ms)", async () => {
    const started = performance.now();
    let calls = 0;
    const value = await retry(
      () => {
        if (++calls < 3) throw new Error("flaky");
        return calls;
      },
      { backoff: { base: 4, cap: 4, jitter: Jitter.rigid } },
    );
    expect(value).toBe(3);
    expect(performance.now() - started).toBeGreaterThanOrEqual(7); // two timers of 4 ms, give or take a ms
  });
});
