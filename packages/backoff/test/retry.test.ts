import { describe, expect, it } from "vitest";
import { Backoff, Jitter, RetryBudget, RetryError, isRetryError, retry } from "@tideward/backoff";
import type { RetryEvent, RetryOptions, Sleep } from "@tideward/backoff";
import { Deadline, ManualClock, seededRandom } from "@tideward/time";

/** Options that run on a manual clock: sleeping moves the clock, nothing waits for real. */
function simulated(extra: RetryOptions = {}): {
  clock: ManualClock;
  slept: number[];
  events: RetryEvent[];
  options: RetryOptions;
} {
  const clock = new ManualClock(0);
  const slept: number[] = [];
  const events: RetryEvent[] = [];
  const options: RetryOptions = {
    clock: clock.now,
    sleep: (span, signal) => {
      slept.push(span);
      return clock.sleep(span, signal);
    },
    random: () => 0.5,
    onRetry: (e) => void events.push(e),
    ...extra,
  };
  return { clock, slept, events, options };
}

/** A call that fails `failures` times, then returns "ok"; it records when each attempt was made. */
function flaky(clock: ManualClock, failures: number, error: (n: number) => Error = (n) => new Error(`boom ${n}`)) {
  const at: number[] = [];
  const fn = ({ attempt }: { attempt: number }): Promise<string> => {
    at.push(clock.now());
    return attempt <= failures ? Promise.reject(error(attempt)) : Promise.resolve("ok");
  };
  return { fn, at };
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error("expected a rejection");
}

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

describe("retry with a shared RetryBudget", () => {
  it("holds 100 failing calls of 4 attempts each to 120 calls in all, not 400", async () => {
    const shared = new RetryBudget({ ratio: 0.2, minPerSecond: 0 });
    const { clock, options } = simulated({
      budget: shared,
      backoff: { attempts: 4, base: 10, cap: 10, jitter: Jitter.rigid },
    });
    let calls = 0;
    const outcomes: string[] = [];
    for (let i = 0; i < 100; i++) {
      const e = await rejection(
        retry(() => {
          calls++;
          throw new Error("outage");
        }, options),
      );
      outcomes.push(isRetryError(e) ? `${e.reason}/${e.attempts}` : "other");
    }
    expect(calls).toBe(120);
    const tally = outcomes.reduce<Record<string, number>>((acc, o) => ((acc[o] = (acc[o] ?? 0) + 1), acc), {});
    expect(tally).toEqual({ "budget/1": 80, "budget/2": 20 }); // every fifth call earns one retry
    expect(clock.now()).toBe(200); // twenty waits of 10 ms
    expect(shared.available(clock.now())).toBe(0);
  });

  it("does not spend the budget on a retry the deadline forbids", async () => {
    const shared = new RetryBudget({ ratio: 0, minPerSecond: 1, window: 1_000 });
    const { clock, options } = simulated({ budget: shared });
    await rejection(retry(flaky(clock, Infinity).fn, { ...options, deadline: Deadline.start(50, 0) }));
    expect(shared.available(clock.now())).toBe(1);
  });

  describe.each([0, 1_700_000_000_123.375])("with the clock at %d", (t0) => {
    /** A budget of two retries, a clock, and a sleep that records what it was asked to wait. */
    function setup() {
      const clock = new ManualClock(t0);
      const shared = new RetryBudget({ ratio: 0, minPerSecond: 2, window: 1_000 }, t0);
      const slept: number[] = [];
      const options: RetryOptions = {
        budget: shared,
        clock: clock.now,
        random: () => 0.5,
        backoff: { attempts: 3, base: 10, cap: 10, jitter: Jitter.rigid },
        sleep: (span, signal) => (slept.push(span), clock.sleep(span, signal)),
      };
      return { clock, shared, slept, options };
    }

    it("a throwing onRetry ends the call with its error, starts no wait and gives the retry's credit back", async () => {
      const { clock, shared, slept, options } = setup();
      const failure = new Error("down");
      const thrown = new Error("onRetry broke");
      let calls = 0;
      const before = shared.available(clock.now());
      const e = await rejection(
        retry(
          () => {
            calls++;
            throw failure;
          },
          {
            ...options,
            onRetry: () => {
              throw thrown;
            },
          },
        ),
      );
      expect(e).toBe(thrown);
      expect([calls, slept]).toEqual([1, []]);
      expect(clock.now()).toBe(t0);
      expect(shared.available(clock.now())).toBe(before);
      // The credit is there to spend: a call whose onRetry does not throw gets both its retries.
      const { fn, at } = flaky(clock, 2);
      expect(await retry(fn, options)).toBe("ok");
      expect(at).toEqual([t0, t0 + 10, t0 + 20]);
      expect(shared.available(clock.now())).toBe(0);
    });

    it("a caller who gives up during the wait ends the call with its reason and gets the retry's credit back", async () => {
      const { clock, shared, options } = setup();
      const before = shared.available(clock.now());
      const reason = new Error("the caller left");
      for (const when of ["during", "as it ends"] as const) {
        const controller = new AbortController();
        const { fn, at } = flaky(clock, Infinity);
        const call = retry(fn, {
          ...options,
          signal: controller.signal,
          // "as it ends": the wait is over, and the caller has given up before the retry starts.
          sleep: (span, signal) =>
            when === "during" ? clock.sleep(span, signal) : (controller.abort(reason), Promise.resolve()),
        });
        if (when === "during") {
          await Promise.resolve();
          controller.abort(reason);
        }
        expect(await rejection(call)).toBe(reason);
        expect(at).toHaveLength(1);
        expect(shared.available(clock.now())).toBe(before);
      }
    });

    it.each([
      [
        "throws",
        () => {
          throw new Error("no sleep");
        },
        "no sleep",
      ],
      ["returns no promise", () => undefined, "retry sleep must return a promise, got undefined"],
    ])("a sleep that %s ends the call and gives the retry's credit back", async (_, sleep, message) => {
      const { clock, shared, options } = setup();
      const before = shared.available(clock.now());
      const told: number[] = [];
      const e = await rejection(
        retry(flaky(clock, Infinity).fn, {
          ...options,
          onRetry: (event) => void told.push(event.attempt),
          sleep: sleep as unknown as Sleep,
        }),
      );
      expect((e as Error).message).toBe(message);
      expect(told).toEqual([1]);
      expect(shared.available(clock.now())).toBe(before);
    });
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
