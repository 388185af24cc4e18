// Shared by the tests: the two clock scales every property runs at, and a way to read a
// traffic model's arrivals directly.
import { QuotaKey, perSecond } from "@tideward/quota-engine";
import { isCallbackError, stream } from "@tideward/sim";
import type { CallbackError, PolicySpec, QuotaDimension, Traffic } from "@tideward/sim";

/** Run starts near 0 and at `Date.now()` scale (fractional, as a real clock reads). */
export const STARTS = [0, 1_723_456_789_012.375] as const;

/** A quota of 50 calls a second on "api", every call one key's: what policy.quota's option tests limit by. */
export const apiLimit: QuotaDimension[] = [{ limit: perSecond("api", 50), key: () => new QuotaKey("t", "*", "api") }];

/** Every arrival of `traffic` over `[start, start + duration)`: times, keys and costs. */
export function collect(
  traffic: Traffic,
  duration: number,
  start = 0,
  seed = 1,
): { t: number[]; key: number[]; cost: number[] } {
  const a = traffic.open({ start, end: start + duration, random: stream(seed, "traffic") });
  const t: number[] = [];
  const key: number[] = [];
  const cost: number[] = [];
  for (let x = a.next(); x !== Infinity; x = a.next()) {
    t.push(x);
    key.push(a.key);
    cost.push(a.cost);
    if (t.length > 5_000_000) throw new Error("runaway traffic");
  }
  return { t, key, cost };
}

/** Mean and (sample) variance. */
export function moments(xs: readonly number[]): { mean: number; variance: number } {
  const n = xs.length;
  const mean = xs.reduce((a, b) => a + b, 0) / n;
  const variance = xs.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1);
  return { mean, variance };
}

/** Counts of `times` (ms) in consecutive buckets of `width` ms from `start`. */
export function counts(times: readonly number[], start: number, width: number, buckets: number): number[] {
  const out = new Array<number>(buckets).fill(0);
  for (const t of times) {
    const b = Math.floor((t - start) / width);
    if (b >= 0 && b < buckets) out[b]++;
  }
  return out;
}

/** What a {@link spy} saw of each attempt: when it was admitted, and when and how it ended. */
export interface Seen {
  readonly key: number;
  readonly admitted: number;
  ended: number;
  /** "ok", "failed", or "released" (the attempt never ran). */
  how: "ok" | "failed" | "released" | "open";
}

/** A policy on `side` that admits everything (or refuses what `refuse` says) and notes every attempt. */
export function spy(
  side: "client" | "server",
  refuse: (now: number) => boolean = () => false,
): { spec: PolicySpec; seen: Seen[]; refusedAt: number[] } {
  const seen: Seen[] = [];
  const refusedAt: number[] = [];
  const spec: PolicySpec = {
    name: `${side} spy`,
    create: () => ({
      name: `${side} spy`,
      side,
      reason: `${side} spy`,
      admit: (now, key) => {
        if (refuse(now)) {
          refusedAt.push(now);
          return undefined;
        }
        const s: Seen = { key, admitted: now, ended: NaN, how: "open" };
        seen.push(s);
        return s;
      },
      settle: (token, now, ok) => {
        const s = token as Seen;
        s.ended = now;
        s.how = ok ? "ok" : "failed";
      },
      release: (token, now) => {
        const s = token as Seen;
        s.ended = now;
        s.how = "released";
      },
    }),
  };
  return { spec, seen, refusedAt };
}

/** The CallbackError `act` stops with; anything else it throws is rethrown. */
export function caught(act: () => unknown): CallbackError {
  try {
    act();
  } catch (e) {
    if (isCallbackError(e)) return e;
    throw e;
  }
  throw new Error("the run did not stop");
}
