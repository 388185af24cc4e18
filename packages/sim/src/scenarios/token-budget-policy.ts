// The token-budget scenario's four ways of charging a request whose token cost is known only
// when its response comes, each as a policy on the in-process quota engine: every request is
// charged to its tenant's token budget and the model's as one atomic charge set. Beside the
// engine, a ledger per budget (debt allowed) measures how far each way overran it, and a shadow
// bucket per tenant fed the actual cost of everything the tenant asked says which tenants stayed
// under their quota by the actual count.
import { QuotaEngine, QuotaKey, charge, limitSpec } from "@tideward/quota-engine";
import type { QuotaCharge, ReserveReport } from "@tideward/quota-engine";
import type { Adapter, PolicySpec } from "../policy";

/** How a way charges: the bound at admission; the actual after the response; an estimate (the bound, or less) reserved, then settled; the actual at admission (the oracle). */
export type TokenWay = "bound" | "after" | "reserve" | "oracle";

/** The budgets and the bound, as the scenario sets them. */
export interface TokenBudgets {
  readonly tenants: number;
  /** A request's bound (its `max_tokens`), tokens. */
  readonly bound: number;
  /** What reserving reserves, tokens: the bound, or an estimate below it (a response past it tops up). */
  readonly reserved: number;
  /** Tokens a second each tenant's bucket refills, and the model's. */
  readonly tenantRate: number;
  readonly modelRate: number;
  /** Seconds of refill a bucket holds. */
  readonly burst: number;
  /** How long a reservation stays open, ms: past any response's time but once in a billion. */
  readonly ttl: number;
}

const TENANT = "tenant-tokens";
const MODEL = "model-tokens";

/** A budget's level as charged, in debt when it goes below 0: how far a way overran it. */
class Ledger {
  level: number;
  worst = 0;
  #at: number;
  // With `lows`, the buckets before `#reached` have had this budget's level at their start noted.
  #reached = 0;
  constructor(
    readonly capacity: number,
    readonly perMs: number,
    start: number,
    readonly lows?: Lows,
  ) {
    this.level = capacity;
    this.#at = start;
    lows?.ledgers.push(this);
  }
  /** The level at `t` (ms), no earlier than the last take, refilled up to the capacity. */
  at(t: number): number {
    return Math.min(this.capacity, this.level + (t - this.#at) * this.perMs);
  }
  /** Notes in `lows` the level at the start of each bucket up to `now`'s not noted yet: in a bucket with no take, its lowest. */
  reach(now: number): void {
    const lows = this.lows;
    if (lows === undefined) return;
    const to = Math.min(lows.values.length - 1, lows.bucket(now));
    for (; this.#reached <= to; this.#reached++)
      lows.note(this.#reached, this.at(lows.start + this.#reached * lows.step));
  }
  /** Takes `units` at `now` (a negative `units` gives them back, up to the capacity). */
  take(now: number, units: number): void {
    this.reach(now);
    this.level = this.at(now) - units;
    this.#at = now;
    if (this.level > this.capacity) this.level = this.capacity;
    if (-this.level > this.worst) this.worst = -this.level;
    this.lows?.note(this.lows.bucket(now), this.level);
  }
}

/**
 * The lowest level any of a set of budgets reached in each bucket of a run, below 0 where one was
 * overrun. Past the run's last bucket (the responses after the traffic stops) it notes nothing,
 * as the run's own series do not.
 */
class Lows {
  readonly values: Float64Array;
  readonly ledgers: Ledger[] = [];
  constructor(
    readonly start: number,
    readonly step: number,
    buckets: number,
  ) {
    this.values = new Float64Array(buckets).fill(Infinity);
  }
  bucket(now: number): number {
    return Math.floor((now - this.start) / this.step);
  }
  note(i: number, level: number): void {
    if (i >= 0 && i < this.values.length && level < this.values[i]) this.values[i] = level;
  }
  /** Each bucket's lowest, the run over. */
  read(): number[] {
    for (const l of this.ledgers) l.reach(this.start + this.values.length * this.step);
    return Array.from(this.values);
  }
}

/** One way's run, a bucket of `step` ms at a time, for the scenario's plots. */
export class TokenTrace {
  /** Tokens served, a bucket: counted when admitted, as the run's tokens served are. */
  readonly served: Float64Array;
  readonly model: Lows;
  readonly tenants: Lows;
  constructor(
    readonly start: number,
    readonly step: number,
    buckets: number,
  ) {
    this.served = new Float64Array(buckets);
    this.model = new Lows(start, step, buckets);
    this.tenants = new Lows(start, step, buckets);
  }
  serve(now: number, tokens: number): void {
    const i = this.model.bucket(now);
    if (i >= 0 && i < this.served.length) this.served[i] += tokens;
  }
}

interface Held {
  readonly tenant: number;
  readonly actual: number;
  readonly id: string;
}

class TokenAdapter implements Adapter {
  readonly name = "tokens";
  readonly side = "client";
  reason = "tokens";
  readonly #way: TokenWay;
  readonly #b: TokenBudgets;
  readonly #engine = new QuotaEngine();
  readonly #shadow = new QuotaEngine();
  readonly #keys: QuotaKey[];
  readonly #model = new QuotaKey("*", "*", "model");
  readonly #tenants: Ledger[];
  readonly #modelLedger: Ledger;
  /** Per tenant: 1 once its shadow refused it (over its quota by the actual count); its refusals, by either budget. */
  readonly #over: Uint8Array;
  readonly #refused: Float64Array;
  #served = 0;

  readonly #trace: TokenTrace | undefined;

  constructor(way: TokenWay, b: TokenBudgets, start: number, trace?: TokenTrace) {
    this.#way = way;
    this.#b = b;
    const tenant = limitSpec({ name: TENANT, capacity: b.tenantRate * b.burst, refill: b.tenantRate, window: 1_000 });
    const model = limitSpec({ name: MODEL, capacity: b.modelRate * b.burst, refill: b.modelRate, window: 1_000 });
    this.#engine.addLimit(tenant);
    this.#engine.addLimit(model);
    this.#shadow.addLimit(tenant);
    this.#keys = Array.from({ length: b.tenants }, (_, i) => new QuotaKey(`tenant-${i}`, "*", "llm"));
    this.#tenants = this.#keys.map(() => new Ledger(tenant.capacity, b.tenantRate / 1_000, start, trace?.tenants));
    this.#modelLedger = new Ledger(model.capacity, b.modelRate / 1_000, start, trace?.model);
    this.#trace = trace;
    this.#over = new Uint8Array(b.tenants);
    this.#refused = new Float64Array(b.tenants);
  }

  #set(tenant: number, units: number): QuotaCharge[] {
    return [charge(this.#keys[tenant], TENANT, units), charge(this.#model, MODEL, units)];
  }

  #take(now: number, tenant: number, units: number): void {
    this.#tenants[tenant].take(now, units);
    this.#modelLedger.take(now, units);
  }

  admit(now: number, tenant: number, cost: number): unknown {
    // The traffic's cost is the actual: only the oracle reads it before the response.
    const actual = cost;
    if (!this.#shadow.checkTokenBucket(this.#keys[tenant], TENANT, now, actual).allowed) this.#over[tenant] = 1;
    const way = this.#way;
    // What is charged now: the bound, the reservation, the actual (oracle), or one token to see the budgets have any left.
    const units =
      way === "oracle" ? actual : way === "after" ? 1 : way === "reserve" ? this.#b.reserved : this.#b.bound;
    const set = this.#set(tenant, units);
    const held = way === "reserve" || way === "after";
    const r = held ? this.#engine.reserve(set, now, { ttl: this.#b.ttl }) : this.#engine.checkAtomic(set, now);
    if (!r.committed) {
      // A reserve may also be refused with every budget's room, at the engine's most open reservations.
      this.reason =
        r.failedIndex === 0 ? "tokens/tenant" : r.failedIndex === 1 ? "tokens/model" : "tokens/reservations";
      this.#refused[tenant]++;
      return undefined;
    }
    this.#take(now, tenant, units);
    this.#served += actual;
    this.#trace?.serve(now, actual);
    return { tenant, actual, id: held ? (r as ReserveReport).id : "" } satisfies Held;
  }

  settle(token: unknown, now: number): void {
    const h = token as Held;
    if (this.#way !== "reserve" && this.#way !== "after") return;
    // The response's count: a refund of what was reserved beyond it, or a top-up never refused.
    this.#engine.settle(h.id, { [TENANT]: h.actual, [MODEL]: h.actual }, now);
    this.#take(now, h.tenant, h.actual - (this.#way === "after" ? 1 : this.#b.reserved));
  }

  stats(): Record<string, number> {
    // A tenant under its quota by the actual count: its shadow never refused it, the whole run.
    let under = 0;
    let underRefused = 0;
    let underRefusals = 0;
    for (let i = 0; i < this.#b.tenants; i++)
      if (this.#over[i] === 0) {
        under++;
        if (this.#refused[i] > 0) underRefused++;
        underRefusals += this.#refused[i];
      }
    const worstTenant = Math.max(0, ...this.#tenants.map((l) => l.worst));
    return {
      served: this.#served,
      underTenants: under,
      underRefused,
      underRefusals,
      worstTenant,
      worstModel: this.#modelLedger.worst,
    };
  }
}

/** The policy charging each request's tokens `way`, noting its run in `trace` when given one. */
export function tokenPolicy(way: TokenWay, budgets: TokenBudgets, trace?: TokenTrace): PolicySpec {
  return { name: "tokens", create: (context) => new TokenAdapter(way, budgets, context.start, trace) };
}
