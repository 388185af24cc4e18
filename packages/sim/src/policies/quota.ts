import { QuotaEngine, QuotaKey, limitSpec } from "@tideward/quota-engine";
import type { AtomicReport, ChargeKind, Decision, LimitFields, LimitSpec, QuotaStore } from "@tideward/quota-engine";
import { check } from "@tideward/time/internal";
import type { Random } from "@tideward/time";
import { flag } from "../flag";
import type { Adapter, Envelope, PolicyContext, PolicySpec } from "../policy";
import { resolveFaults } from "../store-faults";
import type { ResolvedFaults, StoreFaults } from "../store-faults";
import { nameOf } from "./name";

/** One dimension of a quota: a limit, and which of its keys a call is charged to. */
export interface QuotaDimension {
  /** The limit: a spec (`perSecond("user", 10)`) or its fields. */
  readonly limit: LimitSpec | LimitFields;
  /**
   * The key a call from simulated key `key` (named `name`) is charged to: the user, their
   * tenant, the model. Called once per simulated key; the answer is kept.
   * @defaultValue `new QuotaKey("sim", name, limit.name)`: one key per simulated key
   */
  readonly key?: (key: number, name: string) => QuotaKey;
  /** What a call charges: one unit, or its cost (rounded up to a whole unit, at least one). @defaultValue "calls" */
  readonly units?: "calls" | "cost";
  /** @defaultValue "bucket" */
  readonly kind?: ChargeKind;
  /** How refusals by this dimension are named, after the policy's name: `"quota/tenant"`. @defaultValue the limit's name */
  readonly label?: string;
}

/** Options of {@link quota}. */
export interface QuotaPolicyOptions {
  /** What each call is charged against, in order. */
  readonly dimensions: readonly QuotaDimension[];
  /**
   * `"atomic"` charges every dimension or none (`checkAtomic`); `"sequential"` charges them one
   * after another and stops at the first refusal, leaving the earlier ones charged: the way a
   * chain of separate limiters behaves, and what the atomic way saves. @defaultValue "atomic"
   */
  readonly mode?: "atomic" | "sequential";
  /** A fresh store for each run. It must answer synchronously (the in-process engine does). @defaultValue `() => new QuotaEngine()` */
  readonly store?: () => QuotaStore;
  /** What goes wrong on the way to the store. @defaultValue nothing */
  readonly faults?: StoreFaults;
  /**
   * What a caller does when the store does not answer in time: admit (`"open"`), refuse
   * (`"closed"`), or ask an in-process engine of its own with the same limits (`"local"`).
   * @defaultValue "closed"
   */
  readonly onError?: "open" | "closed" | "local";
  /**
   * Whether the invariant check treats a refusal with room left as a violation (a charge
   * counted twice). @defaultValue true for atomic charges without faults, false otherwise
   * (sequential charges and lost answers charge for nothing by design)
   */
  readonly exact?: boolean;
  /** @defaultValue "quota" */
  readonly name?: string;
}

interface Dim {
  readonly spec: LimitSpec;
  readonly key: (key: number, name: string) => QuotaKey;
  readonly cost: boolean;
  readonly kind: ChargeKind;
  readonly reason: string;
}

const TRUE = true;
// Keys up to this many get the one-dimension fast path's table, filled up front.
const DENSE_KEYS = 65_536;
// What a simulated key's quota keys and their state in the engine cost, bytes, a dimension.
const KEY_BYTES = 256;

/**
 * `@tideward/quota-engine` as a policy: each call charged against one or more dimensions of a
 * `QuotaStore` (the in-process `QuotaEngine` by default), atomically or one after another, with
 * the faults of a shared store modelled around it. Reports `wasted` (units charged for calls
 * then refused; `wasted:<label>` per dimension), `lost` (commits whose answer never reached the
 * caller), `errors` and `fallbacks`.
 *
 * @example
 * import { QuotaKey, perSecond } from "@tideward/quota-engine";
 * import { policy } from "@tideward/sim";
 * policy.quota({
 *   dimensions: [
 *     { limit: perSecond("user", 10) },
 *     { limit: perSecond("tenant", 50), key: (k) => new QuotaKey(`t${k % 5}`, "*", "api") },
 *   ],
 * });
 */
export function quota(options: QuotaPolicyOptions): PolicySpec {
  const o = check.options(
    options,
    ["dimensions", "mode", "store", "faults", "onError", "exact", "name"],
    "policy.quota",
  );
  const name = nameOf(o.name, "quota", "policy.quota name");
  const list = o.dimensions;
  if (!Array.isArray(list) || list.length === 0)
    throw new TypeError(`policy.quota dimensions must be a non-empty array, got ${check.describe(list)}`);
  // Every index, holes included: a hole is refused as the dimension it is not.
  const dims: Dim[] = Array.from(list as readonly unknown[], (d, i) => {
    if (d === undefined)
      throw new TypeError(`policy.quota dimensions[${i}] must be a dimension ({ limit, key }), got undefined`);
    const x = check.options(
      d as QuotaDimension,
      ["limit", "key", "units", "kind", "label"],
      `policy.quota dimensions[${i}]`,
    );
    const spec = limitSpec(x.limit as LimitFields);
    const kind = check.or(x.kind, "bucket");
    if (kind !== "bucket" && kind !== "window" && kind !== "gcra")
      throw new TypeError(
        `policy.quota dimensions[${i}] kind must be "bucket", "window" or "gcra", got ${check.describe(kind)}`,
      );
    const units = check.or(x.units, "calls");
    if (units !== "calls" && units !== "cost")
      throw new TypeError(
        `policy.quota dimensions[${i}] units must be "calls" or "cost", got ${check.describe(units)}`,
      );
    if (x.key !== undefined && typeof x.key !== "function")
      throw new TypeError(
        `policy.quota dimensions[${i}] key must be a function of the simulated key, got ${check.describe(x.key)}`,
      );
    return {
      spec,
      key: x.key ?? ((_k: number, n: string) => new QuotaKey("sim", n, spec.name)),
      cost: units === "cost",
      kind,
      reason: `${name}/${labelOf(x.label, spec.name, `policy.quota dimensions[${i}] label`)}`,
    };
  });
  const mode = check.or(o.mode, "atomic");
  if (mode !== "atomic" && mode !== "sequential")
    throw new TypeError(`policy.quota mode must be "atomic" or "sequential", got ${check.describe(mode)}`);
  const onError = check.or(o.onError, "closed");
  if (onError !== "open" && onError !== "closed" && onError !== "local")
    throw new TypeError(`policy.quota onError must be "open", "closed" or "local", got ${check.describe(onError)}`);
  const faults = o.faults === undefined ? undefined : resolveFaults(o.faults, "policy.quota faults");
  const store: unknown = check.or<unknown>(o.store, () => new QuotaEngine());
  if (typeof store !== "function")
    throw new TypeError(`policy.quota store must be a function making a fresh store, got ${check.describe(store)}`);
  const makeStore = store as () => QuotaStore;
  const exact = flag(o.exact, "policy.quota exact", mode === "atomic" && faults === undefined);
  return { name, create: (context) => new QuotaAdapter(name, dims, mode, makeStore, faults, onError, exact, context) };
}

/** A dimension's label, `fallback` when left out: text, or a TypeError naming `what`. */
function labelOf(label: unknown, fallback: string, what: string): string {
  if (label === undefined) return fallback;
  if (typeof label !== "string") throw new TypeError(`${what} must be text, got ${check.describe(label)}`);
  return label;
}

class QuotaAdapter implements Adapter {
  readonly name: string;
  readonly side = "client";
  reason: string;
  delay = 0;
  readonly envelopes: readonly Envelope[];
  readonly #dims: readonly Dim[];
  readonly #atomic: boolean;
  readonly #store: QuotaStore;
  readonly #locals: QuotaStore[];
  readonly #faults: ResolvedFaults | undefined;
  readonly #onError: "open" | "closed" | "local";
  readonly #random: Random;
  readonly #start: number;
  readonly #keyName: (i: number) => string;
  // Per simulated key: its quota keys, one per dimension, and (for several dimensions) the
  // charge records handed to checkAtomic, reused with the cost set for each call.
  readonly #keys = new Map<number, QuotaKey[]>();
  readonly #charges = new Map<number, { key: QuotaKey; limit: string; cost: number; kind: ChargeKind }[]>();
  readonly #reserve: ((bytes: number, what: string) => void) | undefined;
  // The fast path of one dimension on the in-process engine: its keys by simulated key, and its check.
  readonly #single: (QuotaKey | undefined)[] | undefined;
  readonly #one: (key: QuotaKey, t: number, units: number) => boolean = () => false;
  #wasted = 0;
  readonly #wastedBy: Float64Array;
  #lost = 0;
  #errors = 0;
  #fallbacks = 0;

  constructor(
    name: string,
    dims: readonly Dim[],
    mode: "atomic" | "sequential",
    makeStore: () => QuotaStore,
    faults: ResolvedFaults | undefined,
    onError: "open" | "closed" | "local",
    exact: boolean,
    context: PolicyContext,
  ) {
    this.name = name;
    this.reason = name;
    this.#dims = dims;
    this.#wastedBy = new Float64Array(dims.length);
    this.#atomic = mode === "atomic" || dims.length === 1;
    this.#faults = faults;
    this.#onError = onError;
    this.#random = context.random;
    this.#start = context.start;
    this.#keyName = (i) => context.keyName(i);
    this.#store = withLimits(makeStore(), dims);
    const store = this.#store;
    this.#reserve = context.reserve;
    if (dims.length === 1 && faults === undefined && store instanceof QuotaEngine && context.keys <= DENSE_KEYS) {
      // The engine answers synchronously by its type: no promise to look for.
      const d = dims[0];
      const limit = d.spec.name;
      const unit = d.cost;
      // Filled up front: writing keys in random order into an empty array would turn it into a dictionary.
      context.reserve?.(context.keys * 8, `policy ${name}: a table of ${context.keys} keys`);
      this.#single = new Array<QuotaKey | undefined>(context.keys).fill(undefined);
      this.#one =
        d.kind === "bucket"
          ? (k, t, units) => store.checkTokenBucket(k, limit, t, unit ? units : 1).allowed
          : d.kind === "window"
            ? (k, t, units) => store.checkWindow(k, limit, t, unit ? units : 1).allowed
            : (k, t, units) => store.checkGcra(k, limit, t, unit ? units : 1).allowed;
    }
    this.#locals =
      onError === "local" && faults !== undefined ? faults.skew.map(() => withLimits(new QuotaEngine(), dims)) : [];
    this.envelopes = envelopes(dims, this.#scopes(), exact, faults, onError);
  }

  // The envelope scopes: per dimension, each distinct quota key numbered on first sight.
  #scopes(): ((key: number) => number)[] {
    return this.#dims.map((_, d) => {
      const ids = new Map<string, number>();
      return (key: number) => {
        const id = this.#keysOf(key)[d].id;
        let n = ids.get(id);
        if (n === undefined) ids.set(id, (n = ids.size));
        return n;
      };
    });
  }

  #keysOf(key: number): QuotaKey[] {
    let keys = this.#keys.get(key);
    if (keys === undefined) {
      this.#reserve?.(KEY_BYTES * this.#dims.length, `policy ${this.name}: the quota keys of key ${key}`);
      const name = this.#keyName(key);
      keys = this.#dims.map((d) => d.key(key, name));
      keys.forEach((k, i) => {
        if (!(k instanceof QuotaKey))
          throw new TypeError(`policy.quota dimensions[${i}] key must return a QuotaKey, got ${check.describe(k)}`);
      });
      this.#keys.set(key, keys);
    }
    return keys;
  }

  admit(now: number, key: number, cost: number): unknown {
    const units = cost > 1 ? Math.ceil(cost) : 1;
    const faults = this.#faults;
    if (faults === undefined) {
      const single = this.#single;
      if (single !== undefined) {
        // One dimension on the in-process engine: straight to the check, no indirection.
        const k = single[key] ?? this.#keysOf(key)[0];
        single[key] = k;
        if (this.#one(k, now, units)) return TRUE;
        this.reason = this.#dims[0].reason;
        return undefined;
      }
      return this.#charge(this.#store, this.#keysOf(key), key, now, units) ? TRUE : undefined;
    }
    const keys = this.#keysOf(key);
    const offset = now - this.#start;
    const instance =
      faults.skew.length === 1 ? 0 : Math.min(faults.skew.length - 1, Math.floor(this.#random() * faults.skew.length));
    const t = now + faults.skew[instance];
    if (faults.down(offset)) {
      this.delay = faults.timeout;
      return this.#error(instance, keys, key, t, units, "store-down");
    }
    const latency = faults.slow(offset);
    const lost = this.#random() < faults.lost(offset);
    const admitted = this.#charge(this.#store, keys, key, t, units);
    if (latency > faults.timeout || lost) {
      // The store did its work; the caller never heard.
      if (admitted) this.#lost++;
      this.delay = faults.timeout;
      const answer = this.#error(instance, keys, key, t, units, "store-timeout");
      if (admitted && answer === undefined) this.#waste(this.#dims.length, units);
      return answer;
    }
    this.delay = latency;
    return admitted ? TRUE : undefined;
  }

  #error(instance: number, keys: QuotaKey[], key: number, t: number, units: number, reason: string): unknown {
    this.#errors++;
    if (this.#onError === "open") return TRUE;
    if (this.#onError === "local") {
      this.#fallbacks++;
      return this.#charge(this.#locals[instance], keys, key, t, units) ? TRUE : undefined;
    }
    this.reason = `${this.name}/${reason}`;
    return undefined;
  }

  /** Counts the charges of the first `n` dimensions as made for a call that was then refused. */
  #waste(n: number, units: number): void {
    for (let i = 0; i < n; i++) {
      const c = this.#dims[i].cost ? units : 1;
      this.#wastedBy[i] += c;
      this.#wasted += c;
    }
  }

  /** Charges `keys` at `t` on `store`; sets `reason` on a refusal. */
  #charge(store: QuotaStore, keys: QuotaKey[], key: number, t: number, units: number): boolean {
    const dims = this.#dims;
    if (dims.length === 1) {
      const d = dims[0];
      const decision = sync(check1(store, d.kind, keys[0], d.spec.name, t, d.cost ? units : 1));
      if (decision.allowed) return true;
      this.reason = d.reason;
      return false;
    }
    if (this.#atomic) {
      let charges = this.#charges.get(key);
      if (charges === undefined) {
        charges = dims.map((d, i) => ({ key: keys[i], limit: d.spec.name, cost: 1, kind: d.kind }));
        this.#charges.set(key, charges);
      }
      for (let i = 0; i < dims.length; i++) charges[i].cost = dims[i].cost ? units : 1;
      const report = sync<AtomicReport>(store.checkAtomic(charges, t));
      if (report.committed) return true;
      this.reason = dims[report.failedIndex >= 0 ? report.failedIndex : 0].reason;
      return false;
    }
    for (let i = 0; i < dims.length; i++) {
      const d = dims[i];
      const decision = sync(check1(store, d.kind, keys[i], d.spec.name, t, d.cost ? units : 1));
      if (!decision.allowed) {
        this.#waste(i, units);
        this.reason = d.reason;
        return false;
      }
    }
    return true;
  }

  settle(): void {}

  stats(): Record<string, number> {
    const out: Record<string, number> = {
      wasted: this.#wasted,
      lost: this.#lost,
      errors: this.#errors,
      fallbacks: this.#fallbacks,
    };
    this.#dims.forEach((d, i) => (out[`wasted:${d.reason.slice(this.name.length + 1)}`] = this.#wastedBy[i]));
    return out;
  }
}

function check1(
  store: QuotaStore,
  kind: ChargeKind,
  key: QuotaKey,
  limit: string,
  t: number,
  cost: number,
): Decision | PromiseLike<Decision> {
  return kind === "bucket"
    ? store.checkTokenBucket(key, limit, t, cost)
    : kind === "window"
      ? store.checkWindow(key, limit, t, cost)
      : store.checkGcra(key, limit, t, cost);
}

function sync<T>(answer: T | PromiseLike<T>): T {
  if (typeof (answer as PromiseLike<T>)?.then === "function") {
    throw new TypeError(
      "policy.quota: the store answered with a promise; the simulator drives a synchronous store (such as QuotaEngine) and models the network around it with `faults`",
    );
  }
  return answer as T;
}

function withLimits(store: QuotaStore, dims: readonly Dim[]): QuotaStore {
  const added = new Set<string>();
  for (const d of dims) {
    if (added.has(d.spec.name)) continue;
    const r = sync(store.addLimit(d.spec));
    if (!r.ok)
      throw new RangeError(`policy.quota: the store refused limit ${JSON.stringify(d.spec.name)}: ${r.reason}`);
    added.add(d.spec.name);
  }
  return store;
}

function envelopes(
  dims: readonly Dim[],
  scopes: ((key: number) => number)[],
  exact: boolean,
  faults: ResolvedFaults | undefined,
  onError: string,
): Envelope[] {
  // Failing open (or to a local engine per instance) admits without the shared bound: none to check.
  if (faults !== undefined && onError !== "closed") return [];
  return dims.map((d, i): Envelope => {
    const units = d.cost ? "cost" : "calls";
    const rate = (d.spec.refill * 1_000) / d.spec.window;
    const label = `${d.reason} (${d.kind})`;
    if (d.kind === "window")
      return {
        kind: "window",
        label,
        quota: 2 * d.spec.capacity,
        window: d.spec.window,
        units,
        scope: scopes[i],
        reason: d.reason,
      };
    const burst = d.kind === "bucket" ? d.spec.capacity : d.spec.burst;
    // A caller whose clock runs ahead refills the store early by that much.
    const overshoot = faults === undefined ? 0 : (rate * Math.max(0, ...faults.skew)) / 1_000;
    return { kind: "rate", label, rate, burst, units, scope: scopes[i], overshoot, exact, reason: d.reason };
  });
}
