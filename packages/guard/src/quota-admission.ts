// The quota side of admission: its options checked once, and a store's report turned into the
// policies a response's fields carry and the wait a refusal answers.
import { limitSpec } from "@tideward/quota-engine";
import type { AtomicReport, Decision, LimitSpec, QuotaCharge, QuotaStore } from "@tideward/quota-engine";
import { check } from "@tideward/time/internal";
import { MAX_LIMITS } from "./limits";
import { policyName } from "./ratelimit-fields";
import type { PolicyState } from "./ratelimit-fields";

/** A quota-engine charge set for each request, in process or on any {@link QuotaStore}. */
export interface QuotaAdmission {
  /** The engine: a `QuotaEngine` (synchronous) or a store over Redis (answering promises). */
  readonly store: QuotaStore;
  /** The specs of the limits the charges name, for `RateLimit-Policy` (add them to the store yourself). */
  readonly limits: readonly LimitSpec[];
  /** The charges one request of `cost` units from `key` makes, all or none. */
  readonly charges: (key: string, cost: number) => readonly QuotaCharge[];
}

/** Whether `value` is an object with a method of that name (a policy or a store given as itself). */
export function has(value: unknown, method: string): boolean {
  return (
    typeof value === "object" && value !== null && typeof (value as Record<string, unknown>)[method] === "function"
  );
}

/**
 * The specs of `admit`'s `quota` option by name, each checked as the quota engine checks it.
 * @throws TypeError/RangeError naming the path under `admit quota` and the value
 */
export function quotaSpecs(quota: QuotaAdmission): Map<string, LimitSpec> {
  const q = check.options(quota, ["store", "limits", "charges"], "admit quota");
  if (!has(q.store, "checkAtomic"))
    throw new TypeError(
      `admit quota.store must be a QuotaStore (a QuotaEngine, or a Redis engine), got ${check.describe(q.store)}`,
    );
  if (typeof q.charges !== "function")
    throw new TypeError(
      `admit quota.charges must be a function (key, cost) => charges, got ${check.describe(q.charges)}`,
    );
  if (!Array.isArray(q.limits))
    throw new TypeError(`admit quota.limits must be the LimitSpecs the charges name, got ${check.describe(q.limits)}`);
  if (q.limits.length > MAX_LIMITS)
    throw new RangeError(
      `admit quota.limits must be at most ${MAX_LIMITS} (every response carries a member of each), got ${q.limits.length}`,
    );
  const specs = new Map<string, LimitSpec>();
  for (const [i, given] of (q.limits as LimitSpec[]).entries()) {
    const path = `admit quota.limits[${i}]`;
    policyName((given as Partial<LimitSpec> | undefined)?.name, `${path}.name`);
    let spec: LimitSpec;
    try {
      spec = limitSpec(given);
    } catch (e) {
      const m = (e as Error).message.replace(/^(?:LimitSpec|limitSpec) /, "");
      throw e instanceof TypeError
        ? new TypeError(`${path}: ${m}`, { cause: e })
        : new RangeError(`${path}: ${m}`, { cause: e });
    }
    if (specs.has(spec.name)) throw new RangeError(`${path}.name ${JSON.stringify(spec.name)} is used twice`);
    specs.set(spec.name, spec);
  }
  return specs;
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
export function checkNames(charges: readonly QuotaCharge[], specs: ReadonlyMap<string, LimitSpec>): void {
  for (const c of charges) {
    const name = (c as Partial<QuotaCharge> | null | undefined)?.limit;
    if (typeof name === "string" && !specs.has(name))
      throw new TypeError(
        `admit quota.charges named the limit ${JSON.stringify(name)}, which is not in quota.limits (${[...specs.keys()].map((n) => JSON.stringify(n)).join(", ")})`,
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
  specs: ReadonlyMap<string, LimitSpec>,
  busy: number,
): {
  readonly allowed: boolean;
  readonly states: readonly PolicyState[];
  readonly violated: readonly string[];
  readonly wait: number;
} {
  if (!isReport(report, charges.length))
    throw new TypeError(
      `admit quota.store.checkAtomic answered ${check.describe(report)}, not an AtomicReport for ${charges.length} charges`,
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
