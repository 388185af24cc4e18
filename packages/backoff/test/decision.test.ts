// The one retry decision both loops take (retry here, the guard's): a model of its rule checked
// against it over random policies, hints, deadlines and budgets, on clocks near 0 and near
// Date.now(); and the one reading of a hint.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Backoff, Jitter, RetryBudget, decideRetry, readHint, retryAfterProperty } from "@tideward/backoff";
import type { FailedAttempt, RetryRule } from "@tideward/backoff";

const jitter = fc.constantFrom(Jitter.rigid, Jitter.full, Jitter.equal, Jitter.decorrelated, Jitter.spread(0.2));
const backoffs = fc
  .record({
    base: fc.double({ min: 0, max: 1_000, noNaN: true }),
    factor: fc.double({ min: 1, max: 4, noNaN: true }),
    extra: fc.double({ min: 0, max: 10_000, noNaN: true }),
    attempts: fc.integer({ min: 1, max: 6 }),
    jitter,
  })
  .map(({ extra, ...p }) => new Backoff({ ...p, cap: p.base + extra }));
const hints = fc.oneof(
  fc.constant(0),
  fc.double({ min: 0, max: 5_000, noNaN: true }),
  fc.double({ min: 5_000, max: 1e300, noNaN: true }),
  fc.constant(Infinity),
);

describe.each([0, 1_700_000_000_000.375])("decideRetry, at a clock of %d", (t0) => {
  it("weighs the delay, the hint, its cap, the deadline and the budget as its rule says", () => {
    fc.assert(
      fc.property(
        backoffs,
        fc.oneof(fc.double({ min: 0, max: 10_000, noNaN: true }), fc.constant(Infinity)),
        fc.constantFrom<"cap" | "give-up">("cap", "give-up"),
        fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
        fc.record({
          made: fc.integer({ min: 1, max: 7 }),
          draw: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
          previous: fc.oneof(fc.constant(Number.NaN), fc.double({ min: 0, max: 5_000, noNaN: true })),
          hint: hints,
          after: fc.double({ min: 0, max: 1_000, noNaN: true }),
          left: fc.oneof(fc.constant(Infinity), fc.double({ min: 0, max: 20_000, noNaN: true })),
        }),
        (backoff, maxRetryAfter, over, credits, f) => {
          const now = t0 + f.after;
          const budget =
            credits === undefined
              ? undefined
              : new RetryBudget({ ratio: 0, minPerSecond: credits / 10, window: 10_000 }, t0);
          const rule: RetryRule = { backoff, maxRetryAfter, overMaxRetryAfter: over, budget };
          let reads = 0;
          const failed: FailedAttempt = {
            made: f.made,
            draw: f.draw,
            previous: f.previous,
            hint: f.hint,
            end: now + f.left,
            now: () => {
              reads++;
              return now;
            },
          };
          const before = budget?.available(now);
          const d = decideRetry(rule, failed);
          // The model: the same rule, written out.
          const over_ = f.hint > maxRetryAfter || f.hint === Infinity;
          const delay = backoff.delay(f.made, {
            random: f.draw,
            previous: f.previous >= 0 ? f.previous : backoff.base,
          });
          const hint = over_ ? maxRetryAfter : f.hint;
          const wait = delay === undefined ? 0 : hint > delay ? hint : delay;
          const want = !backoff.more(f.made)
            ? "exhausted"
            : over_ && (over === "give-up" || maxRetryAfter === Infinity)
              ? "retryAfter"
              : failed.end < Infinity && !(now + wait < failed.end)
                ? "deadline"
                : budget !== undefined && before === 0
                  ? "budget"
                  : undefined;
          expect(d.giveUp).toBe(want);
          const asked =
            want !== "exhausted" && want !== "retryAfter" && (failed.end < Infinity || budget !== undefined);
          expect(reads).toBe(asked ? 1 : 0);
          if (want === undefined) {
            expect([d.wait, d.delay]).toEqual([wait, delay]);
            expect(d.wait).toBeGreaterThanOrEqual(d.delay);
            if (failed.end < Infinity) expect(now + d.wait).toBeLessThan(failed.end);
            expect(d.receipt >= 0).toBe(budget !== undefined);
            // The one thing spent, and only on a retry.
            if (budget !== undefined) expect(budget.available(now)).toBe((before ?? 0) - 1);
          } else {
            expect([d.wait, d.delay, d.receipt]).toEqual([0, 0, -1]);
            expect(budget?.available(now)).toBe(before);
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it("gives up at a deadline for a clock that reads NaN, and takes the clock's reading as a number too", () => {
    const rule: RetryRule = {
      backoff: new Backoff({ jitter: Jitter.rigid }),
      maxRetryAfter: 60_000,
      overMaxRetryAfter: "give-up",
      budget: undefined,
    };
    const f = { made: 1, draw: 0, previous: Number.NaN, hint: 0, end: t0 + 1_000 };
    expect(decideRetry(rule, { ...f, now: () => Number.NaN }).giveUp).toBe("deadline");
    expect(decideRetry(rule, { ...f, now: t0 }).wait).toBe(100);
    expect(decideRetry(rule, { ...f, now: t0 + 900 }).giveUp).toBe("deadline"); // 900 + 100 is not before 1 000
  });

  it("refuses a hint readHint would not answer", () => {
    const rule: RetryRule = {
      backoff: new Backoff(),
      maxRetryAfter: 60_000,
      overMaxRetryAfter: "cap",
      budget: undefined,
    };
    for (const hint of [Number.NaN, -1])
      expect(() => decideRetry(rule, { made: 1, draw: 0, previous: 0, hint, end: Infinity, now: t0 })).toThrow(
        RangeError,
      );
  });
});

describe("readHint", () => {
  it("reads a number of milliseconds: 0 or less is no wait, Infinity is never, undefined and null are none", () => {
    expect([50, 0, -0, -5, -Infinity, Infinity, undefined, null].map((v) => readHint(v, "h"))).toEqual([
      50,
      0,
      0,
      0,
      0,
      Infinity,
      0,
      0,
    ]);
  });

  it("throws what is not a number, naming the source and the value, the hint's error as the cause", () => {
    const cause = new Error("busy");
    const table: readonly (readonly [unknown, ErrorConstructor, string])[] = [
      ["100", TypeError, 'got string "100": text is not read as a number; parse it into milliseconds first'],
      [Number.NaN, RangeError, "got NaN"],
      [
        new Date(0),
        TypeError,
        "got object [object Date]: a Date is an instant; give the wait until it (date.getTime() - now)",
      ],
      [5n, TypeError, "got bigint 5n"],
      [false, TypeError, "got boolean false"],
      [{ ms: 5 }, TypeError, "got object [object Object]"],
      [Symbol("s"), TypeError, "got symbol Symbol(s)"],
    ];
    for (const [value, type, got] of table) {
      let thrown: unknown;
      try {
        readHint(value, "h's answer", cause);
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toBeInstanceOf(type);
      expect((thrown as Error).message).toBe(
        `h's answer must be a number of milliseconds (or undefined for none), ${got}`,
      );
      expect((thrown as Error).cause).toBe(cause);
    }
  });

  it("takes the default hint from what was thrown: its retryAfter, as it is", () => {
    expect(retryAfterProperty(Object.assign(new Error("x"), { retryAfter: "7" }))).toBe("7");
    expect([retryAfterProperty(new Error("x")), retryAfterProperty("text"), retryAfterProperty(null)]).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
  });
});
