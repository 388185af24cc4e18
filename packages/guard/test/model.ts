// Independent models of admit's four per-key limits, in exact integer arithmetic on whole
// milliseconds since the first request: what each admits, the units it has left (`r`), and the
// milliseconds until more quota is available (`t`): until one unit more for a policy that admits
// (the draft's "additional quota"), until the request's cost fits for one that refuses.
import type { LimitKind } from "@tideward/guard";

/** A wait, exact: `num / den` milliseconds, or never. */
export interface Wait {
  readonly num: number;
  readonly den: number;
}

/** Whole seconds rounded up; and whether the exact wait is a whole second (where a float may round either way). */
export function secondsOf(w: Wait | undefined): { readonly s: number; readonly edge: boolean } {
  if (w === undefined) return { s: Infinity, edge: false };
  if (w.num <= 0) return { s: 0, edge: false };
  const per = 1_000 * w.den;
  return { s: Math.floor((w.num + per - 1) / per), edge: w.num % per === 0 };
}

export interface Model {
  /** Units left at `t`. */
  left(t: number): number;
  /** Until `n` units are there at `t` (0 when they are); undefined when never. */
  wait(t: number, n: number): Wait | undefined;
  take(t: number, n: number): void;
}

/** A token bucket of `quota` per `window` ms, starting full; GCRA admits the same. Tokens are kept times `window`. */
function bucket(quota: number, window: number): Model {
  let level = quota * window;
  let at = 0;
  const now = (t: number) => Math.min(quota * window, level + (t - at) * quota);
  return {
    left: (t) => Math.floor(now(t) / window),
    wait: (t, n) => (n > quota ? undefined : { num: Math.max(0, n * window - now(t)), den: quota }),
    take: (t, n) => {
      level = now(t) - n * window;
      at = t;
    },
  };
}

/** At most `quota` stamps in any half-open stretch of `window` ms. */
function sliding(quota: number, window: number): Model {
  const stamps: number[] = [];
  const live = (t: number) => stamps.filter((s) => t - s < window);
  return {
    left: (t) => quota - live(t).length,
    wait: (t, n) => {
      if (n > quota) return undefined;
      const inside = live(t);
      const missing = n - (quota - inside.length);
      return { num: missing <= 0 ? 0 : inside[missing - 1] + window - t, den: 1 };
    },
    take: (t, n) => {
      for (let i = 0; i < n; i++) stamps.push(t);
    },
  };
}

/** At most `quota` per fixed window of `window` ms, opened by the first request after the last closed. */
function period(quota: number, window: number): Model {
  let end = -Infinity;
  let used = 0;
  const count = (t: number) => (t < end ? used : 0);
  return {
    left: (t) => quota - count(t),
    wait: (t, n) => (n > quota ? undefined : { num: quota - count(t) >= n ? 0 : end - t, den: 1 }),
    take: (t, n) => {
      if (t >= end) {
        end = t + window;
        used = 0;
      }
      used += n;
    },
  };
}

export function model(kind: LimitKind, quota: number, window: number): Model {
  if (kind === "sliding") return sliding(quota, window);
  if (kind === "period") return period(quota, window);
  return bucket(quota, window);
}

/** What one policy's member and the response say, by the model, for a request of `cost` at `t`. */
export interface Expected {
  readonly r: number;
  readonly t: { readonly s: number; readonly edge: boolean };
  readonly refused: boolean;
}

/**
 * Decides a request of `cost` at `t` against several policies all or none, as admit does, and
 * says what each member must read: `r` after the request, and `t`.
 */
export function decide(
  models: readonly Model[],
  quotas: readonly number[],
  t: number,
  cost: number,
): {
  readonly allowed: boolean;
  readonly members: Expected[];
  readonly retry: { s: number; edge: boolean } | undefined;
} {
  const refusing = models.map((m) => m.left(t) < cost);
  const allowed = !refusing.some(Boolean);
  if (allowed) for (const m of models) m.take(t, cost);
  const members = models.map((m, i) => {
    const r = m.left(t);
    const wait = refusing[i] ? m.wait(t, cost) : r < quotas[i] ? m.wait(t, r + 1) : { num: 0, den: 1 };
    return { r, t: secondsOf(wait), refused: refusing[i] };
  });
  let retry: { s: number; edge: boolean } | undefined;
  for (const m of members) if (m.refused && (retry === undefined || m.t.s > retry.s)) retry = m.t;
  return { allowed, members, retry };
}
