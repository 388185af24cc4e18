import { reasons } from "@tideward/quota-engine";
import type {
  AtomicReport,
  BatchReport,
  ChargeKind,
  Decision,
  QuotaCharge,
  QuotaStore,
  ReserveReport,
  SettleResult,
} from "@tideward/quota-engine";
import { check } from "@tideward/time/internal";
import { Gauges, seriesOf } from "./instruments";
import type { Counts, Row } from "./instruments";
import { ATTRIBUTES, METRICS, OTHER } from "./names";
import { quietly } from "./quiet";
import { readTelemetry } from "./telemetry";
import type { Instrumentation, TelemetryOptions } from "./telemetry";

/** A quota store's decision methods, counting what they decide; `close()` stops the counting. */
export type InstrumentedQuota<S extends QuotaStore> = Pick<
  S,
  keyof QuotaStore | Extract<keyof S, "reserve" | "settle" | "cancel">
> &
  Instrumentation;

/** The most limit names one instrumentation reports; past it (or for a name the store does not know) `_OTHER`. */
const MAX_LIMITS = 256;

const REASONS: ReadonlySet<string> = new Set(reasons);

function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof value === "object" && value !== null && typeof (value as PromiseLike<T>).then === "function";
}

/**
 * Counts a quota store's decisions as `tideward.quota.decisions`, one per charge (a
 * `checkHierarchy` one per level of its chain, read from its decision's trace), by limit
 * (`tideward.quota.limit`), reason (`tideward.quota.reason`: `ok`, `exhausted`, `too_large`,
 * `unknown_limit`, `not_committed`, `key_limit`) and algorithm (`tideward.quota.algorithm`), and
 * reports the keys an in-process engine holds (`tideward.quota.keys`, from `stats().keys`).
 * A store that reserves keeps its `reserve`, `settle` and `cancel`, counting units by limit and
 * algorithm: reserved (`tideward.quota.reserved`, a reserve that reserved), and given back or
 * charged on top when settled (`tideward.quota.refunded`, `tideward.quota.topped_up`; a cancel
 * refunds all). Its decisions count as a charge set's do.
 *
 * The answer has the store's own `check*`, `peekAtomic`, `addLimit` and `addLink` (synchronous
 * for a `QuotaEngine`, promises for a Redis engine): use it where the store was used, for
 * instance as `admit`'s `quota.store`. A peek decides nothing and is not counted. Keys and user
 * ids are never attributes: a limit's name is, and only the names the store knows. An answer
 * the counting cannot read is handed back as the store gave it, and counted not at all.
 *
 * @example
 * import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
 * import { QuotaEngine, QuotaKey, perSecond } from "@tideward/quota-engine";
 * class Reader extends MetricReader { protected async onForceFlush() {} protected async onShutdown() {} }
 * const reader = new Reader();
 * const meter = new MeterProvider({ readers: [reader] }).getMeter("app");
 * const engine = new QuotaEngine();
 * engine.addLimit(perSecond("api", 1));
 * const quota = instrumentQuota(engine, { meter, name: "quota" });
 * const key = new QuotaKey("tenant", "acme", "search");
 * quota.checkTokenBucket(key, "api", 0).reason; // "ok"
 * quota.checkTokenBucket(key, "api", 0).reason; // "exhausted"
 * const { resourceMetrics } = await reader.collect();
 * const decisions = resourceMetrics.scopeMetrics[0].metrics.find((m) => m.descriptor.name === "tideward.quota.decisions");
 * decisions?.dataPoints.map((p) => [p.attributes["tideward.quota.reason"], p.value]); // [["ok", 1], ["exhausted", 1]]
 * @param store - a `QuotaEngine`, a `RedisQuotaEngine`, or any `QuotaStore`
 * @param telemetry - the meter, and the name every series carries
 * @throws TypeError when `store` is not a QuotaStore, or for bad telemetry options
 */
export function instrumentQuota<S extends QuotaStore>(store: S, telemetry: TelemetryOptions): InstrumentedQuota<S> {
  const t = readTelemetry(telemetry, "instrumentQuota", false);
  if (typeof store !== "object" || store === null || typeof store.checkAtomic !== "function")
    throw new TypeError(
      `instrumentQuota expects a QuotaStore (a QuotaEngine, or a Redis engine), got ${check.describe(store)}`,
    );
  const series = seriesOf(t.meter!, t.name);
  const counts: Counts = series.counts(METRICS.decisions);
  const name = t.name;
  const limits = new Set<string>();
  let closed = false;

  const limitOf = (limit: unknown, reason: string): string => {
    if (typeof limit !== "string" || reason === "unknown_limit") return OTHER;
    if (limits.has(limit)) return limit;
    if (limits.size >= MAX_LIMITS) return OTHER;
    limits.add(limit);
    return limit;
  };
  const row = (limit: unknown, kind: unknown, reason: string): Row => {
    const l = limitOf(limit, reason);
    const k = kind === "window" || kind === "gcra" ? kind : "bucket";
    return counts.row(`${l}|${k}|${reason}`, () => ({
      [ATTRIBUTES.name]: name,
      [ATTRIBUTES.limit]: l,
      [ATTRIBUTES.algorithm]: k,
      [ATTRIBUTES.reason]: reason,
    }));
  };
  const reasonOf = (reason: unknown): string => (typeof reason === "string" && REASONS.has(reason) ? reason : OTHER);
  const one = (rows: Row[], limit: unknown, kind: unknown, d: Decision | undefined): void => {
    if (typeof d === "object" && d !== null) rows.push(row(limit, kind, reasonOf(d.reason)));
  };
  // Counts what a call decided, at once or when its promise settles; the answer is the store's
  // own. A report that cannot be read (a getter that throws, decisions that are no list) counts
  // nothing: its rows are all found before any is counted.
  const counted = <T>(answer: T | PromiseLike<T>, decided: (rows: Row[], value: T) => void): T | PromiseLike<T> => {
    const count = (value: T) => {
      const rows: Row[] = [];
      decided(rows, value);
      if (!closed) for (const r of rows) r.value++;
    };
    if (!isThenable(answer)) {
      quietly(count, answer);
      return answer;
    }
    return Promise.resolve(answer).then((value) => {
      quietly(count, value);
      return value;
    });
  };
  const s = store as unknown as Record<string, (...args: unknown[]) => unknown>;
  const single =
    (method: string, kindAt: number | ChargeKind) =>
    (...args: unknown[]) => {
      const kind = typeof kindAt === "number" ? args[kindAt] : kindAt;
      return counted(s[method].apply(store, args) as Decision, (rows, d) => one(rows, args[1], kind, d));
    };

  // Units, by limit and algorithm: one row a pair, as the decisions' are by reason.
  const units = (metric: string) => {
    const c = series.counts(metric);
    return (limit: unknown, kind: unknown): Row => {
      const l = limitOf(limit, "ok");
      const k = kind === "window" || kind === "gcra" ? kind : "bucket";
      return c.row(`${l}|${k}`, () => ({ [ATTRIBUTES.name]: name, [ATTRIBUTES.limit]: l, [ATTRIBUTES.algorithm]: k }));
    };
  };
  const reserves = typeof s.reserve === "function";
  const reserved = reserves ? units(METRICS.reserved) : undefined;
  const refunded = reserves ? units(METRICS.refunded) : undefined;
  const toppedUp = reserves ? units(METRICS.toppedUp) : undefined;
  // Rows and the units to add to each, all found before any is added (a report that cannot be
  // read adds nothing).
  const add = (pending: [Row, number][]): void => {
    if (!closed) for (const [r, n] of pending) r.value += n;
  };
  const settledUnits = (result: SettleResult): void => {
    const pending: [Row, number][] = [];
    if (result?.ok === true)
      for (const c of result.charges) {
        if (c.refunded > 0) pending.push([(refunded as (l: unknown, k: unknown) => Row)(c.limit, c.kind), c.refunded]);
        if (c.toppedUp > 0) pending.push([(toppedUp as (l: unknown, k: unknown) => Row)(c.limit, c.kind), c.toppedUp]);
      }
    add(pending);
  };
  const later = <T>(answer: T | PromiseLike<T>, seen: (value: T) => void): T | PromiseLike<T> => {
    if (!isThenable(answer)) {
      quietly(seen, answer);
      return answer;
    }
    return Promise.resolve(answer).then((value) => {
      quietly(seen, value);
      return value;
    });
  };
  const reservation = reserves
    ? {
        reserve: (...args: unknown[]) => {
          const charges = args[0] as readonly QuotaCharge[];
          return counted(s.reserve.apply(store, args) as ReserveReport, (rows, report) => {
            const decisions = report?.decisions ?? [];
            for (let i = 0; i < decisions.length && i < charges.length; i++)
              one(rows, charges[i]?.limit, charges[i]?.kind, decisions[i]);
            if (report?.code !== "reserved") return;
            const pending: [Row, number][] = [];
            for (const c of charges)
              if (typeof c?.cost === "number")
                pending.push([(reserved as (l: unknown, k: unknown) => Row)(c.limit, c.kind), c.cost]);
            add(pending);
          });
        },
        settle: (...args: unknown[]) => later(s.settle.apply(store, args) as SettleResult, settledUnits),
        cancel: (...args: unknown[]) => later(s.cancel.apply(store, args) as SettleResult, settledUnits),
      }
    : {};

  const gauges = new Gauges();
  const stats = (store as unknown as { stats?: unknown }).stats;
  if (typeof stats === "function") {
    const attributes = Object.freeze({ [ATTRIBUTES.name]: name });
    gauges.add(series.observable(METRICS.quotaKeys), (r) => {
      let keys: unknown;
      try {
        keys = (stats.call(store) as { keys?: unknown } | undefined)?.keys;
      } catch {
        return;
      }
      // A store whose stats answer a promise (or nothing) has no keys to report here.
      if (typeof keys === "number" && Number.isFinite(keys)) r.observe(keys, attributes);
    });
  }

  const wrapped = {
    checkTokenBucket: single("checkTokenBucket", "bucket"),
    checkWindow: single("checkWindow", "window"),
    checkGcra: single("checkGcra", "gcra"),
    checkHierarchy: (...args: unknown[]) =>
      counted(s.checkHierarchy.apply(store, args) as Decision, (rows, d) => {
        // One decision folded from the chain's charges, whose trace has a line per level as the
        // engines write it ("bucket api @ <key>: ok"): each level's charge is counted by the
        // reason after its last ": ". A trace without such lines counts the one decision.
        const [, limit, , , kind = "bucket"] = args;
        const level = `${String(kind)} ${String(limit)} @ `;
        const trace: unknown = typeof d === "object" && d !== null ? d.trace : undefined;
        // Arguments the store took are strings (it throws on others, and nothing is counted).
        if (typeof kind === "string" && typeof limit === "string" && Array.isArray(trace))
          for (const line of trace)
            if (typeof line === "string" && line.startsWith(level))
              rows.push(row(limit, kind, reasonOf(line.slice(line.lastIndexOf(": ") + 2))));
        if (rows.length === 0) one(rows, limit, kind, d);
      }),
    checkAtomic: (...args: unknown[]) => {
      const charges = args[0] as readonly QuotaCharge[];
      return counted(s.checkAtomic.apply(store, args) as AtomicReport, (rows, report) => {
        const decisions = report?.decisions ?? [];
        for (let i = 0; i < decisions.length && i < charges.length; i++)
          one(rows, charges[i]?.limit, charges[i]?.kind, decisions[i]);
      });
    },
    checkMany: (...args: unknown[]) =>
      counted(s.checkMany.apply(store, args) as BatchReport, (rows, report) => {
        for (const d of report?.decisions ?? []) one(rows, args[0], args[2], d);
      }),
    peekAtomic: (...args: unknown[]) => s.peekAtomic.apply(store, args),
    addLimit: (...args: unknown[]) => s.addLimit.apply(store, args),
    // Only a store that has it: admit tells a QuotaStore by it.
    ...(typeof s.limit === "function" ? { limit: (...args: unknown[]) => s.limit.apply(store, args) } : {}),
    addLink: (...args: unknown[]) => s.addLink.apply(store, args),
    ...reservation,
    close: () => {
      closed = true;
      gauges.close();
    },
  };
  return wrapped as unknown as InstrumentedQuota<S>;
}
