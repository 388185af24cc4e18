import { reasons } from "@tideward/quota-engine";
import type { AtomicReport, BatchReport, ChargeKind, Decision, QuotaCharge, QuotaStore } from "@tideward/quota-engine";
import { check } from "@tideward/time/internal";
import { Gauges, seriesOf } from "./instruments";
import type { Counts, Row } from "./instruments";
import { ATTRIBUTES, METRICS, OTHER } from "./names";
import { readTelemetry } from "./telemetry";
import type { Instrumentation, TelemetryOptions } from "./telemetry";

/** A quota store's decision methods, counting what they decide; `close()` stops the counting. */
export type InstrumentedQuota<S extends QuotaStore> = Pick<S, keyof QuotaStore> & Instrumentation;

/** The most limit names one instrumentation reports; past it (or for a name the store does not know) `_OTHER`. */
const MAX_LIMITS = 256;

const REASONS: ReadonlySet<string> = new Set(reasons);

function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof value === "object" && value !== null && typeof (value as PromiseLike<T>).then === "function";
}

/**
 * Counts a quota store's decisions as `tideward.quota.decisions`, one per charge, by limit
 * (`tideward.quota.limit`), reason (`tideward.quota.reason`: `ok`, `exhausted`, `too_large`,
 * `unknown_limit`, `not_committed`, `key_limit`) and algorithm (`tideward.quota.algorithm`), and
 * reports the keys an in-process engine holds (`tideward.quota.keys`, from `stats().keys`).
 *
 * The answer has the store's own `check*`, `peekAtomic`, `addLimit` and `addLink` (synchronous
 * for a `QuotaEngine`, promises for a Redis engine): use it where the store was used, for
 * instance as `admit`'s `quota.store`. A peek decides nothing and is not counted. Keys and user
 * ids are never attributes: a limit's name is, and only the names the store knows.
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
  const one = (limit: unknown, kind: unknown, d: Decision | undefined): void => {
    if (closed || typeof d !== "object" || d === null) return;
    row(limit, kind, REASONS.has(d.reason) ? d.reason : OTHER).value++;
  };
  // Counts what a call decided, at once or when its promise settles; the answer is the store's own.
  const counted = <T>(answer: T | PromiseLike<T>, count: (value: T) => void): T | PromiseLike<T> => {
    if (!isThenable(answer)) {
      count(answer);
      return answer;
    }
    return Promise.resolve(answer).then((value) => {
      count(value);
      return value;
    });
  };
  const s = store as unknown as Record<string, (...args: unknown[]) => unknown>;
  const single =
    (method: string, kindAt: number | ChargeKind) =>
    (...args: unknown[]) => {
      const kind = typeof kindAt === "number" ? args[kindAt] : kindAt;
      return counted(s[method].apply(store, args) as Decision, (d) => one(args[1], kind, d));
    };

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
    checkHierarchy: single("checkHierarchy", 4),
    checkAtomic: (...args: unknown[]) => {
      const charges = args[0] as readonly QuotaCharge[];
      return counted(s.checkAtomic.apply(store, args) as AtomicReport, (report) => {
        const decisions = report?.decisions ?? [];
        for (let i = 0; i < decisions.length && i < charges.length; i++)
          one(charges[i]?.limit, charges[i]?.kind, decisions[i]);
      });
    },
    checkMany: (...args: unknown[]) =>
      counted(s.checkMany.apply(store, args) as BatchReport, (report) => {
        for (const d of report?.decisions ?? []) one(args[0], args[2], d);
      }),
    peekAtomic: (...args: unknown[]) => s.peekAtomic.apply(store, args),
    addLimit: (...args: unknown[]) => s.addLimit.apply(store, args),
    addLink: (...args: unknown[]) => s.addLink.apply(store, args),
    close: () => {
      closed = true;
      gauges.close();
    },
  };
  return wrapped as unknown as InstrumentedQuota<S>;
}
