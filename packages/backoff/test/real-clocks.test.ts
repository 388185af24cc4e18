// The retry budget and the retry loop at the magnitudes clocks really read: near 0, near
// performance.now() (10^3–10^7 ms) and near Date.now() (10^12–10^13 ms, where a float step is
// 2^-12 ms or more), with fractional readings.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Backoff, Jitter, RetryBudget, isRetryError, retry } from "@tideward/backoff";
import { Deadline, ManualClock, seededRandom } from "@tideward/time";

// Well under a second each on an idle machine; the margin is for a loaded one.
const SLOW = 20_000;

const scales = [
  ["near 0", fc.double({ min: -1_000, max: 1_000, noNaN: true })],
  ["near performance.now()", fc.double({ min: 1e3, max: 1e7, noNaN: true })],
  ["near Date.now()", fc.double({ min: 1e12, max: 1e13, noNaN: true })],
] as const;

/**
 * A retry budget the slow way: every event kept, regrouped into buckets on every question. A
 * grant answers the bucket it was counted in and how many clears came before it; giving it back
 * takes one retry of that bucket and clear out of the count, if the bucket is still live.
 */
class NaiveBudget {
  events: { bucket: number; retry: boolean; clears: number }[] = [];
  #head = 0;
  #clears = 0;
  readonly width: number;
  constructor(
    readonly ratio: number,
    readonly minPerSecond: number,
    readonly window: number,
    readonly buckets: number,
    readonly origin: number,
  ) {
    this.width = window / buckets;
  }
  /** The last bucket whose start (origin + i·width, in doubles) is at or before `t`; never before the head. */
  #bucket(t: number): number {
    if (!Number.isFinite(t)) return this.#head;
    const start = (i: number): number => this.origin + i * this.width;
    let i = Math.max(0, Math.floor((t - this.origin) / this.width) - 3);
    while (i > 0 && start(i) > t) i--;
    while (start(i + 1) <= t) i++;
    return Math.max(i, this.#head);
  }
  #isLive(bucket: number): boolean {
    return bucket > this.#head - this.buckets;
  }
  #live(kind: boolean): number {
    return this.events.filter((e) => e.retry === kind && this.#isLive(e.bucket)).length;
  }
  #allowance(): number {
    return this.ratio * this.#live(false) + (this.minPerSecond * this.window) / 1_000;
  }
  recordAttempt(t: number): void {
    this.#head = this.#bucket(t);
    this.events.push({ bucket: this.#head, retry: false, clears: this.#clears });
  }
  tryRetry(t: number): boolean {
    return this.grant(t) !== undefined;
  }
  grant(t: number): { bucket: number; clears: number } | undefined {
    this.#head = this.#bucket(t);
    if (this.#live(true) + 1 > this.#allowance() + 1e-9) return undefined;
    const event = { bucket: this.#head, retry: true, clears: this.#clears };
    this.events.push(event);
    return { bucket: event.bucket, clears: event.clears };
  }
  giveBack(granted: { bucket: number; clears: number } | undefined): void {
    if (granted === undefined || granted.clears !== this.#clears || !this.#isLive(granted.bucket)) return;
    const i = this.events.findIndex((e) => e.retry && e.bucket === granted.bucket && e.clears === granted.clears);
    if (i >= 0) this.events.splice(i, 1);
  }
  available(t: number): number {
    this.#head = this.#bucket(t);
    return Math.max(0, Math.floor(this.#allowance() - this.#live(true) + 1e-9));
  }
  clear(): void {
    this.events = [];
    this.#clears++;
  }
}

describe.each(scales)("at clocks %s", (_, origin) => {
  it(
    "a retry budget grants exactly what a naive count of the live buckets allows",
    () => {
      const policy = fc.record({
        ratio: fc.oneof(fc.constantFrom(0, 0.2, 0.57, 1), fc.double({ min: 0, max: 2, noNaN: true })),
        minPerSecond: fc.oneof(fc.constant(0), fc.double({ min: 0, max: 5, noNaN: true })),
        window: fc.oneof(fc.integer({ min: 1, max: 5_000 }), fc.double({ min: 1, max: 5_000, noNaN: true })),
        buckets: fc.integer({ min: 1, max: 12 }),
      });
      const step = fc.record({
        dt: fc.oneof(
          fc.constant(0),
          fc.double({ min: 0, max: 50, noNaN: true }),
          fc.integer({ min: 0, max: 3_000 }),
          fc.constantFrom(-20, Number.NaN),
        ),
        retry: fc.boolean(),
      });
      fc.assert(
        fc.property(origin, policy, fc.array(step, { maxLength: 150 }), (t0, p, steps) => {
          const real = new RetryBudget(p, t0);
          const naive = new NaiveBudget(p.ratio, p.minPerSecond, p.window, p.buckets, t0);
          let clock = t0;
          for (const { dt, retry: isRetry } of steps) {
            const now = Number.isNaN(dt) ? dt : (clock += dt);
            if (isRetry) expect(real.tryRetry(now)).toBe(naive.tryRetry(now));
            else {
              real.recordAttempt(now);
              naive.recordAttempt(now);
            }
          }
        }),
      );
    },
    SLOW,
  );

  it(
    "a retry budget's running sums stay exact through grants, give-backs, clears and windows rotating",
    () => {
      // Policies that grant something, and steps mostly within a bucket: grants pile up in
      // buckets that then age out, and give-backs name live, stale and reused ones.
      const policy = fc.record({
        ratio: fc.oneof(fc.constantFrom(0, 0.2, 1), fc.double({ min: 0, max: 2, noNaN: true })),
        minPerSecond: fc.oneof(fc.constant(0), fc.double({ min: 1, max: 20, noNaN: true })),
        window: fc.oneof(fc.integer({ min: 100, max: 2_000 }), fc.double({ min: 1, max: 2_000, noNaN: true })),
        buckets: fc.integer({ min: 1, max: 8 }),
      });
      const step = fc.record({
        dt: fc.oneof(
          { arbitrary: fc.constant(0), weight: 2 },
          { arbitrary: fc.double({ min: 0, max: 50, noNaN: true }), weight: 4 },
          { arbitrary: fc.integer({ min: 0, max: 2_500 }), weight: 1 },
          { arbitrary: fc.constantFrom(-20, Number.NaN), weight: 1 },
        ),
        op: fc.oneof(
          { arbitrary: fc.constantFrom("attempt", "retry", "giveBack"), weight: 12 },
          { arbitrary: fc.constant("available"), weight: 2 },
          { arbitrary: fc.constant("clear"), weight: 1 },
        ),
        // Which grant a give-back names, counted back from the latest (0): often a stale one.
        back: fc.nat({ max: 20 }),
      });
      fc.assert(
        fc.property(origin, policy, fc.array(step, { minLength: 20, maxLength: 200 }), (t0, p, steps) => {
          const real = new RetryBudget(p, t0);
          const naive = new NaiveBudget(p.ratio, p.minPerSecond, p.window, p.buckets, t0);
          const grants: [number, ReturnType<NaiveBudget["grant"]>][] = [];
          let clock = t0;
          for (const { dt, op, back } of steps) {
            const now = Number.isNaN(dt) ? dt : (clock += dt);
            if (op === "attempt") {
              real.recordAttempt(now);
              naive.recordAttempt(now);
            } else if (op === "retry") {
              const receipt = real.grant(now);
              const granted = naive.grant(now);
              expect(receipt >= 0).toBe(granted !== undefined);
              if (receipt >= 0) grants.push([receipt, granted]);
            } else if (op === "giveBack" && grants.length > 0) {
              const [receipt, granted] = grants[Math.max(0, grants.length - 1 - back)];
              real.giveBack(receipt);
              naive.giveBack(granted);
            } else if (op === "clear") {
              real.clear();
              naive.clear();
            }
            // What the running sums answer is what a recount of the live events answers.
            expect(real.available(now)).toBe(naive.available(now));
          }
        }),
        { numRuns: 200 },
      );
    },
    SLOW,
  );

  it(
    "retry on a manual clock never sleeps into its deadline, and gives up only when the next wait would reach it",
    async () => {
      const policy = fc.record({
        base: fc.double({ min: 0, max: 500, noNaN: true }),
        attempts: fc.integer({ min: 1, max: 12 }),
        jitter: fc.constantFrom(Jitter.rigid, Jitter.full, Jitter.equal, Jitter.decorrelated, Jitter.spread(0.3)),
      });
      const hint = fc.oneof(
        fc.constant(undefined),
        fc.double({ min: 0, max: 2_000, noNaN: true }),
        fc.double({ min: 1e-6, max: 1e-3, noNaN: true }),
      );
      await fc.assert(
        fc.asyncProperty(
          origin,
          policy,
          fc.double({ min: 1e-3, max: 5_000, noNaN: true }),
          fc.array(hint, { minLength: 12, maxLength: 12 }),
          fc.integer(),
          async (t0, p, limit, hints, seed) => {
            const clock = new ManualClock(t0);
            const deadline = Deadline.start(limit, t0);
            const waits: [number, number][] = [];
            const sleep = (span: number): Promise<void> => {
              waits.push([clock.now(), span]);
              return clock.sleep(span);
            };
            let attempts = 0;
            const outcome = await retry(
              () => {
                const h = hints[attempts++];
                throw Object.assign(new Error("down"), h === undefined ? {} : { retryAfter: h });
              },
              {
                backoff: new Backoff({ ...p, cap: p.base + 1_000 }),
                deadline,
                clock: clock.now,
                sleep,
                random: seededRandom(seed),
              },
            ).catch((e: unknown) => e);
            expect(isRetryError(outcome)).toBe(true);
            expect(attempts).toBeLessThanOrEqual(p.attempts);
            // Every wait, as a caller adds it, ended before the deadline did.
            for (const [at, span] of waits) expect(at + span).toBeLessThan(deadline.end);
            expect(deadline.expired(clock.now())).toBe(false);
            if (isRetryError(outcome) && outcome.reason === "deadline") expect(attempts).toBeLessThan(p.attempts);
          },
        ),
        { numRuns: 60 },
      );
    },
    SLOW,
  );
});
