import { check } from "@tideward/time/internal";
import type { ConcurrencyEnvelope, Envelope, RateEnvelope, WindowEnvelope } from "./policy";

/**
 * Checks one policy's admissions against one envelope, kept apart from the policy's own code:
 * a shadow of the bound, per scope. Each method returns `undefined` while the bound holds, or
 * a sentence saying how it broke.
 */
export interface Monitor {
  readonly label: string;
  /** Whether a refusal by this envelope's policy with room left here is a violation. */
  readonly exact: boolean;
  /** The refusal reason it answers for, if its policy names one per envelope. */
  readonly reason: string | undefined;
  admit(now: number, key: number, cost: number): string | undefined;
  /** Whether the envelope had room for the call just refused: a sentence if so. */
  refuse(now: number, key: number, cost: number): string | undefined;
  /** An admitted call left (settled or released). */
  leave(key: number): void;
}

/** Floating-point slack of a bound at `now` (ms): a billionth of its size plus a few clock ulps' worth of refill. */
function slack(size: number, perMs: number, now: number): number {
  return size * 4e-9 + perMs * Math.abs(now) * 2 ** -49 + 1e-12;
}

class RateMonitor implements Monitor {
  readonly label: string;
  readonly exact: boolean;
  readonly reason: string | undefined;
  readonly #e: RateEnvelope;
  readonly #perMs: number;
  readonly #over: number;
  readonly #level = new Map<number, number>();
  readonly #at = new Map<number, number>();

  constructor(e: RateEnvelope) {
    this.#e = e;
    this.label = e.label;
    this.exact = e.exact ?? false;
    this.reason = e.reason;
    this.#perMs = e.rate / 1_000;
    this.#over = e.overshoot ?? 0;
  }

  #fill(now: number, scope: number): number {
    const at = this.#at.get(scope);
    const burst = this.#e.burst;
    let level = this.#level.get(scope) ?? burst;
    if (at === undefined) {
      this.#at.set(scope, now);
      return level;
    }
    if (now > at) {
      level = Math.min(burst, level + (now - at) * this.#perMs);
      this.#at.set(scope, now);
    }
    return level;
  }

  admit(now: number, key: number, cost: number): string | undefined {
    const scope = this.#e.scope?.(key) ?? 0;
    const w = this.#e.units === "calls" ? 1 : cost;
    const level = this.#fill(now, scope) - w;
    this.#level.set(scope, level);
    if (level < -this.#over - slack(this.#e.burst, this.#perMs, now)) {
      return `admitted ${fmt(-level - this.#over)} past its bound (burst ${this.#e.burst}, ${this.#e.rate}/s${this.#over > 0 ? `, overshoot ${this.#over}` : ""}) for scope ${scope}`;
    }
    return undefined;
  }

  refuse(now: number, key: number, cost: number): string | undefined {
    const scope = this.#e.scope?.(key) ?? 0;
    const w = this.#e.units === "calls" ? 1 : cost;
    const level = this.#fill(now, scope);
    this.#level.set(scope, level);
    if (level - w > slack(this.#e.burst, this.#perMs, now))
      return `refused a call of ${fmt(w)} with ${fmt(level)} left for scope ${scope}: a charge counted twice?`;
    return undefined;
  }

  leave(): void {}
}

class WindowMonitor implements Monitor {
  readonly label: string;
  readonly exact: boolean;
  readonly reason: string | undefined;
  readonly #e: WindowEnvelope;
  readonly #over: number;
  // Per scope: admitted stamps and weights in time order, and their sum.
  readonly #stamps = new Map<number, { t: number[]; w: number[]; head: number; sum: number }>();

  constructor(e: WindowEnvelope) {
    this.#e = e;
    this.label = e.label;
    this.exact = e.exact ?? false;
    this.reason = e.reason;
    this.#over = e.overshoot ?? 0;
  }

  #live(now: number, scope: number): { t: number[]; w: number[]; head: number; sum: number } {
    let s = this.#stamps.get(scope);
    if (s === undefined) this.#stamps.set(scope, (s = { t: [], w: [], head: 0, sum: 0 }));
    // A stamp exactly a window old has fallen out, as in Sliding.
    while (s.head < s.t.length && now - s.t[s.head] >= this.#e.window) s.sum -= s.w[s.head++];
    if (s.head > 1024 && s.head * 2 > s.t.length) {
      s.t = s.t.slice(s.head);
      s.w = s.w.slice(s.head);
      s.head = 0;
    }
    return s;
  }

  admit(now: number, key: number, cost: number): string | undefined {
    const scope = this.#e.scope?.(key) ?? 0;
    const w = this.#e.units === "calls" ? 1 : cost;
    const s = this.#live(now, scope);
    s.t.push(now);
    s.w.push(w);
    s.sum += w;
    if (s.sum > this.#e.quota + this.#over + this.#e.quota * 4e-9) {
      return `admitted ${fmt(s.sum)} within ${this.#e.window} ms, past its bound of ${this.#e.quota}${this.#over > 0 ? ` + ${this.#over}` : ""} for scope ${scope}`;
    }
    return undefined;
  }

  refuse(now: number, key: number, cost: number): string | undefined {
    const scope = this.#e.scope?.(key) ?? 0;
    const w = this.#e.units === "calls" ? 1 : cost;
    const s = this.#live(now, scope);
    if (s.sum + w <= this.#e.quota - this.#e.quota * 4e-9)
      return `refused a call of ${fmt(w)} with ${fmt(this.#e.quota - s.sum)} of ${this.#e.quota} left in the window for scope ${scope}: a charge counted twice?`;
    return undefined;
  }

  leave(): void {}
}

class ConcurrencyMonitor implements Monitor {
  readonly label: string;
  readonly exact: boolean;
  readonly reason: string | undefined;
  readonly #e: ConcurrencyEnvelope;
  readonly #inside = new Map<number, number>();

  constructor(e: ConcurrencyEnvelope) {
    this.#e = e;
    this.label = e.label;
    this.exact = e.exact ?? false;
    this.reason = e.reason;
  }

  admit(_now: number, key: number): string | undefined {
    const scope = this.#e.scope?.(key) ?? 0;
    const n = (this.#inside.get(scope) ?? 0) + 1;
    this.#inside.set(scope, n);
    const over = this.#e.overshoot ?? 0;
    if (n > this.#e.limit + over)
      return `${n} admitted calls unsettled at once, past its limit of ${this.#e.limit}${over > 0 ? ` + ${over}` : ""}`;
    return undefined;
  }

  refuse(_now: number, key: number): string | undefined {
    const n = this.#inside.get(this.#e.scope?.(key) ?? 0) ?? 0;
    if (n < this.#e.limit) return `refused with ${n} of ${this.#e.limit} places taken: a place never given back?`;
    return undefined;
  }

  leave(key: number): void {
    const scope = this.#e.scope?.(key) ?? 0;
    this.#inside.set(scope, (this.#inside.get(scope) ?? 0) - 1);
  }
}

function fmt(n: number): string {
  return String(Math.round(n * 1e6) / 1e6);
}

/**
 * The monitors of policy `policy`'s `envelopes`, each checked first: a field that is missing or
 * of the wrong kind is refused naming it (`policy quota envelopes[1] quota`), so a broken
 * envelope never surfaces as a raw error mid-run.
 */
export function monitors(envelopes: unknown, policy: string): Monitor[] {
  const list = envelopes ?? [];
  if (!Array.isArray(list))
    throw new TypeError(`policy ${policy} envelopes must be an array, got ${check.describe(list)}`);
  // Every index: a hole is an envelope of undefined, refused as such.
  return Array.from(list as readonly unknown[], (e, j) =>
    monitor(checkEnvelope(e, `policy ${policy} envelopes[${j}]`)),
  );
}

function checkEnvelope(e: unknown, what: string): Envelope {
  if (e === null || typeof e !== "object" || Array.isArray(e))
    throw new TypeError(`${what} must be an object, got ${check.describe(e)}`);
  const o = e as Record<string, unknown>;
  if (typeof o.label !== "string") throw new TypeError(`${what} label must be text, got ${check.describe(o.label)}`);
  if (o.scope !== undefined && typeof o.scope !== "function")
    throw new TypeError(`${what} scope must be a function, got ${check.describe(o.scope)}`);
  if (o.units !== undefined && o.units !== "cost" && o.units !== "calls")
    throw new TypeError(`${what} units must be "cost" or "calls", got ${check.describe(o.units)}`);
  if (o.exact !== undefined && typeof o.exact !== "boolean")
    throw new TypeError(`${what} exact must be true or false, got ${check.describe(o.exact)}`);
  if (o.reason !== undefined && typeof o.reason !== "string")
    throw new TypeError(`${what} reason must be text, got ${check.describe(o.reason)}`);
  if (o.overshoot !== undefined) amount(o.overshoot, `${what} overshoot`, false);
  switch (o.kind) {
    case "rate":
      amount(o.rate, `${what} rate`, true);
      amount(o.burst, `${what} burst`, true);
      break;
    case "window":
      amount(o.quota, `${what} quota`, false);
      amount(o.window, `${what} window`, true);
      break;
    case "concurrency":
      amount(o.limit, `${what} limit`, false);
      break;
    default:
      throw new TypeError(`${what} kind must be "rate", "window" or "concurrency", got ${check.describe(o.kind)}`);
  }
  return e as Envelope;
}

/** A bound's number: 0 or more (above 0 if `positive`); a bound may be Infinity, never NaN. */
function amount(v: unknown, what: string, positive: boolean): void {
  if (typeof v !== "number") throw new TypeError(`${what} must be a number, got ${check.describe(v)}`);
  if (Number.isNaN(v) || v < 0 || (positive && v === 0))
    throw new RangeError(`${what} must be ${positive ? "above 0" : "0 or more"}, got ${v}`);
}

/** The monitor that checks `envelope`, already checked. */
function monitor(envelope: Envelope): Monitor {
  switch (envelope.kind) {
    case "rate":
      return new RateMonitor(envelope);
    case "window":
      return new WindowMonitor(envelope);
    default:
      return new ConcurrencyMonitor(envelope);
  }
}
