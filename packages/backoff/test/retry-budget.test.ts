// retry with a shared RetryBudget: what it spends and earns, and the credit given back when a
// retry does not happen, at clocks near 0 and near Date.now().
import { describe, expect, it } from "vitest";
import { Jitter, RetryBudget, isRetryError, retry } from "@tideward/backoff";
import type { RetryOptions, Sleep } from "@tideward/backoff";
import { Deadline, ManualClock } from "@tideward/time";
import { flaky, rejection, simulated } from "./simulated";

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
