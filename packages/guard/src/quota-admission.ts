// The quota side of admission: its options checked once, and a store's report turned into the
// policies a response's fields carry and the wait a refusal answers.
import type { AtomicReport, Decision, LimitSpec, QuotaCharge, QuotaStore } from "@tideward/quota-engine";
import { check } from "@tideward/time/internal";
import { MAX_LIMITS } from "./limits";
import { policyName } from "./ratelimit-fields";
import type { PolicyState } from "./ratelimit-fields";
import type { ReserveOption } from "./quota-reservation";

/** A quota-engine charge set for each request, in process or on any {@link QuotaStore}. */
export interface QuotaAdmission {
  /**
   * The engine: a `QuotaEngine` (synchronous) or a store over Redis (answering promises). Its
   * `limit(name)` gives the spec of each limit the charges name, advertised in `RateLimit-Policy`
   * as the store enforces it (a limit the store replaces is advertised as replaced).
   */
  readonly store: QuotaStore;
  /**
   * The limits the charges may name, as specs (or their names): only the names are read, and
   * the store must have each, with the same figures where a spec gives them. Left out, the
   * charges may name any limit the store has. @defaultValue every limit of the store
   */
  readonly limits?: readonly (LimitSpec | string)[];
  /** The charges one request of `cost` units from `key` makes, all or none. */
  readonly charges: (key: string, cost: number) => readonly QuotaCharge[];
  /**
   * Reserve the charges (their costs the estimate) and settle them when the response is done
   * (`Verdict.settle`, the adapters' `actual`): `true`, or `{ ttl }` in ms. Needs a store with
   * `reserve`, `settle` and `cancel`. @defaultValue false
   */
  readonly reserve?: boolean | ReserveOption;
}

/** The figures of a spec the response's fields are written from, which a given spec must agree on. */
const FIGURES = ["capacity", "refill", "window", "burst"] as const;

/**
 * The specs a charge's limit is advertised by: the store's own, asked by name (the one it
 * enforces), among `names` when `quota.limits` restricts them.
 */
export class QuotaSpecs {
  readonly #store: QuotaStore;
  readonly #names: ReadonlySet<string> | undefined;
  /** The option's path, as errors name it: `"admit quota"`. */
  readonly path: string;

  constructor(store: QuotaStore, names: ReadonlySet<string> | undefined, path: string) {
    this.#store = store;
    this.#names = names;
    this.path = path;
  }

  /** Whether `quota.limits` restricts the names. */
  get restricted(): boolean {
    return this.#names !== undefined;
  }

  /**
   * The spec of `name`, or undefined when the charges may not name it.
   * @throws TypeError when the store answers something other than a spec (a store of one's own)
   */
  get(name: string): LimitSpec | undefined {
    if (this.#names !== undefined && !this.#names.has(name)) return undefined;
    const spec: unknown = this.#store.limit(name);
    if (spec === undefined) return undefined;
    if (
      typeof spec !== "object" ||
      spec === null ||
      FIGURES.some((f) => typeof (spec as Partial<LimitSpec>)[f] !== "number")
    )
      throw new TypeError(
        `${this.path}.store.limit(${JSON.stringify(name)}) answered ${check.describe(spec)}, not a LimitSpec`,
      );
    return spec as LimitSpec;
  }

  /** The names the charges may use, for an error: the restriction's, or the store's when it lists them. */
  known(): string[] {
    if (this.#names !== undefined) return [...this.#names];
    const all = (this.#store as { limits?: () => readonly LimitSpec[] }).limits;
    try {
      return typeof all === "function" ? all.call(this.#store).map((l) => l.name) : [];
    } catch {
      return [];
    }
  }
}

/**
 * A `quota` option at `path` (`"admit quota"`), checked: the store, and the names its charges may use.
 * @throws TypeError/RangeError naming the path under `path` and the value
 */
export function quotaSpecs(quota: QuotaAdmission, path: string): QuotaSpecs {
  const q = check.options(quota, ["store", "limits", "charges", "reserve"], path);
  if (!check.has(q.store, "checkAtomic") || !check.has(q.store, "limit"))
    throw new TypeError(
      `${path}.store must be a QuotaStore with checkAtomic and limit (a QuotaEngine, or a Redis engine), got ${check.describe(q.store)}`,
    );
  const store = q.store as QuotaStore;
  if (typeof q.charges !== "function")
    throw new TypeError(`${path}.charges must be a function (key, cost) => charges, got ${check.describe(q.charges)}`);
  if (q.limits === undefined) return new QuotaSpecs(store, undefined, path);
  if (!Array.isArray(q.limits))
    throw new TypeError(
      `${path}.limits must be the limits (specs or names) the charges name, got ${check.describe(q.limits)}`,
    );
  if (q.limits.length > MAX_LIMITS)
    throw new RangeError(
      `${path}.limits must be at most ${MAX_LIMITS} (every response carries a member of each), got ${q.limits.length}`,
    );
  const names = new Set<string>();
  const all = new QuotaSpecs(store, undefined, path);
  for (let i = 0; i < q.limits.length; i++) {
    if (!(i in q.limits)) throw new TypeError(`${path}.limits[${i}] is missing (a hole in the array)`);
    const given = (q.limits as unknown[])[i];
    const at = `${path}.limits[${i}]`;
    const isName = typeof given === "string";
    if (!isName && (typeof given !== "object" || given === null))
      throw new TypeError(`${at} must be a LimitSpec or a limit's name, got ${check.describe(given)}`);
    const name = policyName(isName ? given : (given as Partial<LimitSpec>).name, isName ? at : `${at}.name`);
    const spec = all.get(name);
    if (spec === undefined)
      throw new RangeError(
        `${at} names the limit ${JSON.stringify(name)}, which quota.store does not have: add it with store.addLimit(spec) first`,
      );
    if (!isName)
      for (const f of FIGURES) {
        const v = (given as Partial<LimitSpec>)[f];
        if (v !== undefined && v !== spec[f])
          throw new RangeError(
            `${at}.${f} is ${check.describe(v)} where quota.store's limit ${JSON.stringify(name)} has ${spec[f]}: the store's is the one enforced and advertised`,
          );
      }
    if (names.has(name)) throw new RangeError(`${at}.name ${JSON.stringify(name)} is used twice`);
    names.add(name);
  }
  return new QuotaSpecs(store, names, path);
}

/**
 * Milliseconds until a quota-engine charge's limit has one unit more than `remaining` (the
 * units it has, the request not charged), 0 when it is whole, from the charge's decision. For a
 * fixed window that is its end; a bucket and a GCRA flow regain a unit each `window / refill` ms,
 * so it is the time until whole (`resetAfter`) less the units still missing after that one.
 * The decision of a charge in a set that did not commit describes the state after its cost, and
 * the same difference holds there: both readings move by the cost's time together.
 */
function nextUnit(spec: LimitSpec, kind: QuotaCharge["kind"], d: Decision, remaining: number): number {
  if (kind === "window") return remaining < spec.capacity ? d.resetAfter : 0;
  const whole = kind === "gcra" ? spec.burst : spec.capacity;
  if (remaining >= whole) return 0;
  const wait = d.resetAfter - ((whole - d.remaining - 1) * spec.window) / spec.refill;
  return wait > 0 ? wait : 0;
}

/** Whether a store's answer has the shape of an {@link AtomicReport} for `n` charges. */
function isReport(r: unknown, n: number): r is AtomicReport {
  if (typeof r !== "object" || r === null) return false;
  const report = r as AtomicReport;
  return (
    typeof report.allowed === "boolean" &&
    typeof report.retryAfter === "number" &&
    Array.isArray(report.decisions) &&
    report.decisions.length === n &&
    (report.decisions as unknown[]).every(
      (d: unknown): d is Decision =>
        typeof d === "object" &&
        d !== null &&
        typeof (d as Decision).allowed === "boolean" &&
        typeof (d as Decision).remaining === "number" &&
        typeof (d as Decision).retryAfter === "number" &&
        typeof (d as Decision).resetAfter === "number",
    )
  );
}

/** The `q` and `w` a quota-engine limit advertises, by the algorithm its charge runs. */
function quotaFigures(spec: LimitSpec, kind: QuotaCharge["kind"]): { quota: number; window: number } {
  if (kind === "window") return { quota: spec.capacity, window: spec.window };
  if (kind === "gcra") return { quota: spec.burst, window: (spec.burst * spec.window) / spec.refill };
  return { quota: spec.capacity, window: (spec.capacity * spec.window) / spec.refill };
}

/**
 * Refuses charges that name a limit `specs` lacks, before the store is asked: a typo there would
 * otherwise refuse every request for ever, with no policy to name. Entries that are not charges
 * are left to the store, which names them.
 * @throws TypeError naming the limit and the ones there are
 */
export function checkNames(charges: readonly QuotaCharge[], specs: QuotaSpecs): void {
  for (const c of charges) {
    const name = (c as Partial<QuotaCharge> | null | undefined)?.limit;
    if (typeof name === "string" && specs.get(name) === undefined)
      throw new TypeError(
        `${specs.path}.charges named the limit ${JSON.stringify(name)}, which is not in ${specs.restricted ? "quota.limits" : "quota.store"} (${specs
          .known()
          .map((n) => JSON.stringify(n))
          .join(", ")})`,
      );
  }
}

/** A policy a response's fields carry, and whether its charge refused. */
type Member = PolicyState & { refused: boolean };

/**
 * Whether the set committed, the policies a store's report comes to, one per limit name (the most restrictive of its
 * charges, a refusing one first), the names that refused, and a refusal's wait in ms.
 * @param busy - the wait (ms) for a refusal whose wait the store does not know
 * @throws TypeError when the store answered anything but an {@link AtomicReport} for `charges`
 */
export function quotaStates(
  report: unknown,
  charges: readonly QuotaCharge[],
  specs: QuotaSpecs,
  busy: number,
): {
  readonly allowed: boolean;
  readonly states: readonly PolicyState[];
  readonly violated: readonly string[];
  readonly wait: number;
} {
  if (!isReport(report, charges.length))
    throw new TypeError(
      `${specs.path}.store.checkAtomic answered ${check.describe(report)}, not an AtomicReport for ${charges.length} charges`,
    );
  // One member per limit name: the most restrictive of its charges, a refusing one first.
  const byName = new Map<string, Member>();
  const violated: string[] = [];
  for (const [i, c] of charges.entries()) {
    const d = report.decisions[i];
    const spec = specs.get(c.limit);
    if (spec === undefined) continue; // refused by checkNames before the store was asked
    const { quota: q, window: w } = quotaFigures(spec, c.kind);
    const refused = !d.allowed && d.reason !== "not_committed";
    // A charge that fit in a set that did not commit reports what would have remained; what
    // remains is that plus its cost, since nothing was charged.
    const remaining = d.reason === "not_committed" ? d.remaining + c.cost : Math.max(0, d.remaining);
    // Until more quota: for a refusing charge, until its cost fits; else one unit more.
    const reset = refused ? d.retryAfter : nextUnit(spec, c.kind, d, remaining);
    const prev = byName.get(c.limit);
    if (
      prev === undefined ||
      (refused && (!prev.refused || reset > prev.reset)) ||
      (!prev.refused && !refused && remaining < prev.remaining)
    )
      byName.set(c.limit, { name: c.limit, quota: q, window: w, remaining, reset, refused });
    if (refused && !violated.includes(c.limit)) violated.push(c.limit);
  }
  let wait = 0;
  if (!report.allowed) {
    // A refusal whose wait the store does not know (0) is told to come back after busyRetryAfter.
    wait = report.retryAfter > 0 ? report.retryAfter : busy;
    let longest: Member | undefined;
    for (const m of byName.values()) if (m.refused && (longest === undefined || m.reset > longest.reset)) longest = m;
    // Retry-After is the t of the policy that refused longest: the set's own wait when that is later.
    if (longest !== undefined && !(longest.reset >= wait)) byName.set(longest.name, { ...longest, reset: wait });
    else if (longest !== undefined) wait = longest.reset;
  }
  return { allowed: report.allowed, states: [...byName.values()], violated, wait };
}
