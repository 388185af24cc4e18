// The formulas of the token bucket, GCRA and the fixed window, as pure functions over numbers:
// written once, called by the limiter classes here and by @tideward/quota-engine on its flat
// per-key state. Each limiter's test (does it pass at t?) is one function, and every wait ends at
// an instant where that same function passes — the mathematical instant, moved up onto the first
// double where it does — so `next` and `take` cannot disagree over a rounding.
//
// Instants are kept relative to the state's own latest reading (`at`), never as a sum of an
// absolute instant and a small span: near Date.now() such a sum rounds to 2^-12 ms, while `t - at`
// between two nearby readings is exact (Sterbenz) and a span held on its own keeps every bit.
import { above, below, firstAfter } from "./grid";

/** The share of a burst forgiven when comparing tokens: a billionth (see {@link slackOf}). */
export const SLACK = 1e-9;

/** The most tokens ever forgiven, however large the burst: 2^-10 of a token. */
export const MAX_SLACK = 2 ** -10;

/**
 * Tokens forgiven when a bucket of `burst` compares: a billionth of the burst, at most 2^-10.
 * A refill is a sum of floating-point products, so a bucket that mathematically holds exactly one
 * token may compute 0.9999999999999998; the slack lets it give that token. Capped so that a cost
 * of one is never forgiven whole, whatever the burst: from rest exactly `⌊burst⌋` pass.
 */
export function slackOf(burst: number): number {
  const slack = burst * SLACK;
  return slack < MAX_SLACK ? slack : MAX_SLACK;
}

// ── token bucket: `tokens` held at instant `at`, `perMs` tokens a millisecond, up to `burst` ──

/** Tokens held at `t` by a bucket that held `tokens` at `at`: refilled if `t` is later, never above `burst`. */
export function bucketLevel(tokens: number, at: number, t: number, perMs: number, burst: number): number {
  // Math.min, not a conditional: V8 keeps its result a raw double, where a conditional that can
  // answer `burst` (a small integer) makes the result a tagged value and boxes every level.
  return t > at ? Math.min(tokens + (t - at) * perMs, burst) : tokens;
}

/** Whether a bucket holding `level` tokens can give `n` (give or take `slack`; never more than `burst`). */
export function bucketFits(level: number, n: number, burst: number, slack: number): boolean {
  return n <= burst && level + slack >= n;
}

/** `units` rounded down, from 0 to `⌊burst⌋`: what a bucket or a GCRA flow says is left. */
function wholeUpTo(units: number, burst: number): number {
  const whole = Math.floor(units);
  const limit = Math.floor(burst);
  return whole < 0 ? 0 : whole > limit ? limit : whole;
}

/** Whole tokens in a bucket holding `level`, forgiving `slack`: from 0 to `⌊burst⌋`. */
export function bucketWhole(level: number, burst: number, slack: number): number {
  return wholeUpTo(level + slack, burst);
}

// The searches below share one shape, split so that V8 inlines the common case whole: the
// estimate — the mathematical instant, rounded — passes the limiter's own test and is the answer;
// only when rounding left it a float step short (or it fell at or before `from`) does a call go
// out of line, to move up onto the first double that passes. The closures live only in those
// out-of-line functions: a function that makes a closure allocates its variables' context on
// every call, and the common case must allocate nothing. The `+` before each out-of-line call is
// for V8 too: it makes the call's result a raw double, so the common answer is not boxed into a
// heap number to share a tagged representation with it.

/**
 * The first instant at or after `from` at which a bucket that held `tokens` at `at` can give `n`:
 * `from` when it can already, `Infinity` when `n` is above the burst. The mathematical instant
 * `at + (n − tokens) / perMs`, moved up onto the first double at which {@link bucketFits} passes.
 */
export function bucketReady(
  tokens: number,
  at: number,
  from: number,
  n: number,
  perMs: number,
  burst: number,
  slack: number,
): number {
  if (n > burst) return Infinity;
  if (bucketLevel(tokens, at, from, perMs, burst) + slack >= n) return from;
  const s = at + (n - tokens) / perMs;
  return s > from && bucketLevel(tokens, at, s, perMs, burst) + slack >= n
    ? s
    : +bucketOnwards(tokens, at, from, n, perMs, burst, slack, s);
}

/**
 * The first instant at or after `from` at which a bucket that held `tokens` at `at` is full
 * (give or take `slack`): `from` when it already is. The instant it can give a whole burst.
 */
export function bucketFull(
  tokens: number,
  at: number,
  from: number,
  perMs: number,
  burst: number,
  slack: number,
): number {
  return bucketReady(tokens, at, from, burst, perMs, burst, slack);
}

// The rare paths: the first double after max(estimate, from) at which the bucket can give `n`, or
// at which the flow is at most `reach` ahead with `cost` more (at rest: cost and reach 0).
function bucketOnwards(
  tokens: number,
  at: number,
  from: number,
  n: number,
  perMs: number,
  burst: number,
  slack: number,
  estimate: number,
): number {
  return onwards(estimate, from, (x) => bucketLevel(tokens, at, x, perMs, burst) + slack >= n);
}

function gcraOnwards(at: number, ahead: number, from: number, cost: number, reach: number, estimate: number): number {
  return onwards(estimate, from, (x) => gcraLead(at, ahead, x) + cost <= reach);
}

function onwards(estimate: number, from: number, ok: (s: number) => boolean): number {
  let s = estimate > from ? estimate : above(from);
  if (ok(s)) return s;
  s = above(s);
  return ok(s) ? s : firstAfter(s, ok);
}

// ── GCRA: the theoretical arrival time kept as `at + ahead` — the instant of the latest
// admission and how far the flow had then run ahead of it (ms) — with an emission interval of
// `interval` ms, admitting while it stays at most `reach` = burst · interval (+ slack) ahead ──

/** How far ahead of `t` the flow's theoretical arrival time `at + ahead` is, in ms: 0 when it is at rest. */
export function gcraLead(at: number, ahead: number, t: number): number {
  // Math.max, for the reason bucketLevel uses Math.min: the result stays a raw double.
  return Math.max(ahead - (t - at), 0);
}

/** Whether a cost of `n` conforms with the flow `lead` ms ahead: `lead + n · interval ≤ reach`. */
export function gcraFits(lead: number, n: number, interval: number, reach: number): boolean {
  return lead + n * interval <= reach;
}

/**
 * The lead after a cost of `cost` ms is charged to a flow `lead` ms ahead: their sum, and at
 * least one float step more than `lead` for a cost above 0. Against a lead as long as a huge
 * burst's (2^47 requests, say) a small cost rounds away whole, and would then pass for free,
 * without limit, with the flow nearly spent.
 */
export function gcraCharge(lead: number, cost: number): number {
  const ahead = lead + cost;
  return ahead === lead && cost > 0 ? above(lead) : ahead;
}

/** Whole requests of cost one that would conform back to back with the flow `lead` ms ahead: from 0 to `⌊burst⌋`. */
export function gcraWhole(lead: number, interval: number, burst: number, slack: number): number {
  return wholeUpTo(burst - (lead - slack) / interval, burst);
}

/**
 * The first instant at or after `from` at which a cost of `n` conforms: `from` when it does
 * already. The caller refuses costs above the burst (they never conform). `tau` is
 * `burst · interval` and `reach` is `tau` plus the slack.
 */
export function gcraReady(
  at: number,
  ahead: number,
  from: number,
  n: number,
  interval: number,
  tau: number,
  reach: number,
): number {
  const cost = n * interval;
  if (gcraLead(at, ahead, from) + cost <= reach) return from;
  const s = at + (ahead + cost - tau);
  return s > from && gcraLead(at, ahead, s) + cost <= reach ? s : +gcraOnwards(at, ahead, from, cost, reach, s);
}

/**
 * The first instant at or after `from` at which the flow is at rest (its theoretical arrival time
 * reached): the instant a cost of nothing conforms with no room ahead.
 */
export function gcraRest(at: number, ahead: number, from: number): number {
  return gcraReady(at, ahead, from, 0, 0, 0, 0);
}

// ── fixed window: half-open periods [end − span, end), `used` units counted in the open one ──

/** Units counted at `t` by a window that has counted `used` and ends at `end`: none once it has ended. */
export function windowCount(used: number, end: number, t: number): number {
  return t < end ? used : 0;
}

/** Whether `n` more units fit a window that has counted `count` of its `quota`. */
export function windowFits(count: number, n: number, quota: number): boolean {
  return count + n <= quota;
}

/**
 * The end (exclusive) of the window a first event at `t` opens, in ms: `t + span`, or with `align`
 * the multiple of `span` after the one `t` falls in — so that `start ≤ t < end` holds for the
 * rounded multiples `k · span` themselves, not just for the real numbers.
 */
export function windowEnd(t: number, span: number, align: boolean): number {
  if (!align) return t + span;
  let k = Math.floor(t / span);
  // The division can round onto the next multiple or short of it; the window must contain `t`.
  while ((k + 1) * span <= t) k++;
  while (k * span > t) k--;
  return (k + 1) * span;
}

/**
 * The first instant at or after `from` at which a sliding window's stamp `since` has fallen out of
 * a window of `window` ms: the mathematical `since + window`, moved up onto the first double at
 * which the window's own test `s − since ≥ window` passes.
 */
export function slidingFallenOut(since: number, window: number, from: number): number {
  if (from - since >= window) return from;
  let s = since + window;
  if (!(s > from)) s = above(from);
  if (s - since < window) {
    s = above(s);
    if (s - since < window) return +fallingOut(since, window, s);
  }
  // No slack here, so the first instant is the exact answer: the sum may have rounded past it.
  for (let i = 0; i < 4; i++) {
    const sooner = below(s);
    if (!(sooner > from) || sooner - since < window) break;
    s = sooner;
  }
  return s;
}

function fallingOut(since: number, window: number, s: number): number {
  return firstAfter(s, (x) => x - since >= window);
}
