// What answers while Redis cannot: an in-process engine holding each limit divided by the number
// of instances (so the fleet together admits about the limit, not N times it), or a constant.
import { QuotaEngine, limitSpec } from "@tideward/quota-engine";
import type { AtomicReport, ChargeKind, Decision, LimitSpec, QuotaCharge, QuotaKey } from "@tideward/quota-engine";
import { KIND_NAMES } from "@tideward/quota-engine/internal";
import type { Kind } from "@tideward/quota-engine/internal";
import type { RedisAtomicReport } from "./decision";
import type { Outage, Path } from "./policy";
import { fromLocal } from "./rules";
import type { Rule } from "./rules";
import type { SetCall } from "./wire";

const KINDS: readonly ChargeKind[] = ["bucket", "window", "gcra"];

/**
 * `spec` as one of `instances` instances holds it locally: a bucket's and a GCRA flow's rate
 * divided by `instances` (the window stretched, refill kept whole) and their capacity and burst
 * divided (rounded down, at least one); a fixed window's capacity divided over the same window.
 */
export function divided(spec: LimitSpec, instances: number, kind: "rate" | "window"): LimitSpec {
  const part = (n: number): number => Math.max(1, Math.floor(n / instances));
  if (kind === "window") return limitSpec({ ...spec, capacity: part(spec.capacity) });
  return limitSpec({
    ...spec,
    capacity: part(spec.capacity),
    burst: part(spec.burst),
    window: spec.window * instances,
  });
}

/** The outage mode's answers. */
export class Fallback {
  readonly path: Path;
  readonly #mode: Outage;
  // Buckets and GCRA flows in one engine, fixed windows (whose window is not stretched) in another.
  readonly #rates: QuotaEngine;
  readonly #windows: QuotaEngine;
  readonly #instances: number;
  readonly #wait: number;

  /**
   * @param wait - what a closed refusal tells the caller to wait (ms, above 0): the breaker's
   *   probe interval, the longest before a call is let through to Redis again. A `retryAfter` of
   *   0 would say the charge passed.
   */
  constructor(mode: Outage, instances: number, wait: number) {
    this.#mode = mode;
    this.path = mode;
    this.#instances = instances;
    this.#wait = wait;
    this.#rates = new QuotaEngine({ sweepStep: 2 });
    this.#windows = new QuotaEngine({ sweepStep: 2 });
  }

  add(spec: LimitSpec): void {
    if (this.#mode !== "fallback") return;
    this.#rates.addLimit(divided(spec, this.#instances, "rate"));
    this.#windows.addLimit(divided(spec, this.#instances, "window"));
  }

  /** Takes `spec` in place of the limit of its name at `now` (ms), each key's state re-based. */
  replace(spec: LimitSpec, now: number): void {
    if (this.#mode !== "fallback") return;
    this.#rates.replaceLimit(divided(spec, this.#instances, "rate"), now);
    this.#windows.replaceLimit(divided(spec, this.#instances, "window"), now);
  }

  /** Removes the limit named `name`. */
  remove(name: string): void {
    if (this.#mode !== "fallback") return;
    this.#rates.removeLimit(name);
    this.#windows.removeLimit(name);
  }

  /** Holds `key` to `spec` under its name (an override; undefined: the limit again) from `now` (ms). */
  override(key: QuotaKey, spec: LimitSpec | undefined, name: string, now: number): void {
    if (this.#mode !== "fallback") return;
    for (const [engine, kind] of [
      [this.#rates, "rate"],
      [this.#windows, "window"],
    ] as const) {
      if (spec === undefined) {
        engine.removeOverride(key, name, now);
        continue;
      }
      const { capacity, refill, window, burst, align } = divided(spec, this.#instances, kind);
      engine.setOverride(key, name, { capacity, refill, window, burst, align }, now);
    }
  }

  /** One check of `kind` (0 bucket, 1 window, 2 GCRA). */
  check(kind: number, key: QuotaKey, spec: LimitSpec, now: number, cost: number): Decision {
    if (this.#mode === "fallback") {
      if (kind === 0) return this.#rates.checkTokenBucket(key, spec.name, now, cost);
      if (kind === 1) return this.#windows.checkWindow(key, spec.name, now, cost);
      return this.#rates.checkGcra(key, spec.name, now, cost);
    }
    return this.#constant(kind, spec.name, cost, kind === 2 ? spec.burst : spec.capacity);
  }

  /** A charge set (every limit known or not). */
  atomic(charges: readonly QuotaCharge[], kinds: readonly number[], now: number, commit: boolean): AtomicReport {
    if (this.#mode === "fallback") {
      // One engine per kind cannot stage a mixed set atomically; a set is charged in the rates
      // engine, windows included (stretched like a rate), which is the stricter reading.
      const windows = kinds.every((k) => k === 1);
      const engine = windows ? this.#windows : this.#rates;
      return commit ? engine.checkAtomic(charges, now) : engine.peekAtomic(charges, now);
    }
    const decisions = charges.map((c, i) => this.#constant(kinds[i], c.limit, c.cost, 0));
    const open = this.#mode === "open";
    return {
      allowed: open,
      committed: open && commit,
      failedIndex: open ? -1 : 0,
      retryAfter: open ? 0 : this.#wait,
      decisions,
    };
  }

  #constant(kind: number, limit: string, cost: number, ceiling: number): Decision {
    const open = this.#mode === "open";
    return {
      allowed: open,
      reason: open ? "ok" : "exhausted",
      cost,
      remaining: open ? ceiling : 0,
      retryAfter: open ? 0 : this.#wait,
      resetAfter: 0,
      trace: [
        `${KINDS[kind]} ${limit}: ${open ? "ok (Redis unavailable: failing open)" : "exhausted (Redis unavailable: failing closed)"}`,
      ],
    };
  }
}

/** The outage mode's report of the set `call` (as read for a script call), as a Redis report of `path`. */
export function outageSet(fallback: Fallback, path: Path, call: SetCall): RedisAtomicReport {
  const c = call.charges;
  const charges: QuotaCharge[] = [];
  const kinds: number[] = [];
  for (let i = 0; i < call.n; i++) {
    charges.push({
      key: c[i * 5] as QuotaKey,
      limit: c[i * 5 + 1] as string,
      cost: c[i * 5 + 2] as number,
      kind: KIND_NAMES[c[i * 5 + 3] as Kind],
    });
    kinds.push(c[i * 5 + 3] as Kind);
  }
  const report = fallback.atomic(charges, kinds, call.now, call.commit);
  const decisions = report.decisions.map((d, i) =>
    fromLocal(d, (c[i * 5 + 4] as Rule | undefined)?.shadow === true, path),
  );
  return { ...report, decisions, path, replayed: false };
}
