// Hierarchy: the links (child → parent for one limit), the chain of charges a child's check makes
// up its links, and the folding of that chain's atomic report into one decision.
import { check } from "@tideward/time/internal";
import { checkChainArgs, describeError } from "./args";
import type { AtomicReport, ChargeKind, QuotaCharge } from "./charge";
import { Verdict } from "./decision";
import type { Decision, Reason } from "./decision";
import { isQuotaKey } from "./key";
import type { QuotaKey } from "./key";
import { done, refused } from "./result";
import type { Result } from "./result";

/**
 * A child key accounted to a parent for one limit: whatever the child is charged on `limit`,
 * the parent is charged `ratio` times that on the same limit (user → tenant, job → project).
 */
export interface QuotaLink {
  readonly child: QuotaKey;
  readonly parent: QuotaKey;
  /** The limit the link applies to. */
  readonly limit: string;
  /** The parent's charge per unit of the child's: a whole number of at least 1. */
  readonly ratio: number;
}

/** Why adding a link failed. */
export type LinkCode = "unknown_limit" | "cycle" | "duplicate_link" | "invalid_link";

/**
 * The links of an engine: one parent at most per child and limit, so the links of a limit form a
 * forest and a chain always ends. A link that would close a cycle is refused when added.
 */
export class Links {
  readonly #byLimit = new Map<string, Map<string, QuotaLink>>();
  #count = 0;

  /** How many links there are. */
  get size(): number {
    return this.#count;
  }

  /**
   * Adds `link`; `known` says whether its limit exists. `walk` false leaves out the walk up the
   * parent's chain that finds a cycle, for many links added at once and checked together after
   * (see {@link Links.cycle}): one walk a link is quadratic along a chain listed top-down.
   */
  add(link: QuotaLink, known: (limit: string) => boolean, walk = true): Result<LinkCode> {
    if (link === null || typeof link !== "object")
      return refused("invalid_link", `QuotaLink must be an object, got ${check.describe(link)}`);
    let child, parent, limit, ratio;
    try {
      ({ child, parent, limit, ratio } = link);
    } catch (e) {
      return refused("invalid_link", `QuotaLink could not be read: ${describeError(e)}`);
    }
    if (!isQuotaKey(child))
      return refused("invalid_link", `QuotaLink child must be a QuotaKey, got ${check.describe(child)}`);
    if (!isQuotaKey(parent))
      return refused("invalid_link", `QuotaLink parent must be a QuotaKey, got ${check.describe(parent)}`);
    if (typeof ratio !== "number" || !Number.isSafeInteger(ratio) || ratio < 1) {
      return refused(
        "invalid_link",
        `QuotaLink ratio must be a whole number of at least 1, got ${check.describe(ratio)}`,
      );
    }
    if (typeof limit !== "string" || !known(limit))
      return refused("unknown_limit", `QuotaLink limit ${check.describe(limit)} is not a limit of this engine`);
    if (parent.id === child.id)
      return refused("cycle", `linking ${child.id} to itself for ${JSON.stringify(limit)} would close a cycle`);
    const links = this.#byLimit.get(limit);
    if (links?.has(child.id) === true)
      return refused("duplicate_link", `${child.id} already has a parent for ${JSON.stringify(limit)}`);
    for (let at: QuotaKey | undefined = walk ? parent : undefined; at !== undefined; at = links?.get(at.id)?.parent) {
      if (at.id === child.id)
        return refused("cycle", `linking ${child.id} to ${parent.id} for ${JSON.stringify(limit)} would close a cycle`);
    }
    this.put({ child, parent, limit, ratio });
    return done;
  }

  /** Adds an already validated link. */
  put(link: QuotaLink): void {
    let links = this.#byLimit.get(link.limit);
    if (links === undefined) this.#byLimit.set(link.limit, (links = new Map<string, QuotaLink>()));
    links.set(link.child.id, Object.freeze({ ...link }));
    this.#count++;
  }

  /** Removes every link for `limit` (a limit removed). */
  removeLimit(limit: string): void {
    this.#count -= this.#byLimit.get(limit)?.size ?? 0;
    this.#byLimit.delete(limit);
  }

  /** The link from `child` for `limit`, if any. */
  parentOf(limit: string, child: QuotaKey): QuotaLink | undefined {
    return this.#byLimit.get(limit)?.get(child.id);
  }

  /** Every link, grouped by limit in the order limits were first linked, then in the order added. */
  list(): QuotaLink[] {
    const out: QuotaLink[] = [];
    for (const links of this.#byLimit.values()) out.push(...links.values());
    return out;
  }

  /** The number of links in the longest chain (the links are acyclic). */
  depth(): number {
    let deepest = 0;
    for (const links of this.#byLimit.values()) {
      // Each key's depth once: walk up to a key whose depth is known, then fill in on the way back.
      const known = new Map<string, number>();
      const path: string[] = [];
      for (const id of links.keys()) {
        let at: string | undefined = id;
        while (at !== undefined && !known.has(at)) {
          path.push(at);
          at = links.get(at)?.parent.id;
        }
        let depth = at === undefined ? 0 : (known.get(at) ?? 0);
        for (let i = path.length - 1; i >= 0; i--) {
          depth += links.has(path[i]) ? 1 : 0;
          known.set(path[i], depth);
        }
        path.length = 0;
        const mine = known.get(id) ?? 0;
        if (mine > deepest) deepest = mine;
      }
    }
    return deepest;
  }

  /** The links of a cycle, if the links hold one (else none): each key is visited once. */
  cycle(): QuotaLink[] {
    for (const links of this.#byLimit.values()) {
      // 1: on the walk in progress; 2: known to lead to a root.
      const state = new Map<string, 1 | 2>();
      for (const id of links.keys()) {
        const walked: string[] = [];
        let at: string | undefined = id;
        while (at !== undefined && state.get(at) === undefined) {
          state.set(at, 1);
          walked.push(at);
          at = links.get(at)?.parent.id;
        }
        if (at !== undefined && state.get(at) === 1) {
          const loop: QuotaLink[] = [];
          let link = links.get(at) as QuotaLink;
          do {
            loop.push(link);
            link = links.get(link.parent.id) as QuotaLink;
          } while (link.child.id !== at);
          return loop;
        }
        for (const w of walked) state.set(w, 2);
      }
    }
    return [];
  }
}

/**
 * The charges a hierarchical check of `key` makes: `cost` to the key, then up its chain of links
 * for `limit`, each parent charged its link's ratio times its child's charge.
 *
 * @throws TypeError or RangeError when an argument is malformed or a chained cost passes 2^53
 */
export function chain(links: Links, key: QuotaKey, limit: string, cost: number, kind: ChargeKind): QuotaCharge[] {
  checkChainArgs(key, limit, cost, kind);
  const out: QuotaCharge[] = [{ key, limit, cost, kind }];
  let at = key;
  let units = cost;
  for (let link = links.parentOf(limit, at); link !== undefined; link = links.parentOf(limit, at)) {
    units *= link.ratio;
    if (!Number.isSafeInteger(units))
      throw new RangeError(`the chained cost for ${link.parent.id} on ${JSON.stringify(limit)} passes 2^53`);
    at = link.parent;
    out.push({ key: at, limit, cost: units, kind });
  }
  return out;
}

/**
 * One decision for a chain's atomic report: `remaining` is how many more units of the child's the
 * tightest level admits, `retryAfter` when the whole chain would fit, `resetAfter` the latest
 * level's, and `trace` one entry per level, naming its key and what it answered.
 */
export function foldChain<D = Decision>(
  charges: readonly QuotaCharge[],
  report: AtomicReport,
  limit: string,
  cost: number,
  make: MakeDecision<D> = verdict as MakeDecision<D>,
): D {
  let remaining = Infinity;
  let resetAfter = 0;
  const trace: string[] = [];
  for (let i = 0; i < charges.length; i++) {
    const c = charges[i];
    const d = report.decisions[i];
    const scale = c.cost / cost;
    // Whole units this level holds now: after the charge if it was made, else as it stands.
    const held = d.reason === "not_committed" || d.reason === "key_limit" ? d.remaining + c.cost : d.remaining;
    remaining = Math.min(remaining, Math.floor(held / scale));
    if (d.resetAfter > resetAfter) resetAfter = d.resetAfter;
    trace.push(`${c.kind ?? "bucket"} ${limit} @ ${c.key.id}: ${d.reason}`);
  }
  const reason = report.allowed ? "ok" : report.decisions[report.failedIndex].reason;
  return make(
    report.allowed,
    reason,
    cost,
    remaining === Infinity ? 0 : remaining,
    report.retryAfter,
    resetAfter,
    trace,
  );
}

/** Makes a decision from its fields (a store's engine makes its own kind, with a path). */
export type MakeDecision<D> = (
  allowed: boolean,
  reason: Reason,
  cost: number,
  remaining: number,
  retryAfter: number,
  resetAfter: number,
  trace: readonly string[],
) => D;

const verdict: MakeDecision<Decision> = (allowed, reason, cost, remaining, retryAfter, resetAfter, trace) =>
  new Verdict(allowed, reason, cost, remaining, retryAfter, resetAfter, trace);
