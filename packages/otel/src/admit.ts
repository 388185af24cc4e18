import { admit } from "@tideward/guard";
import type { Admission, AdmitOptions, Verdict } from "@tideward/guard";
import { systemClock } from "@tideward/time";
import type { Clock } from "@tideward/time";
import { errorType } from "./error-type";
import { Gauges, seriesOf } from "./instruments";
import type { Counts, Row } from "./instruments";
import { refusalKindOf } from "./guard-metrics";
import { ATTRIBUTES, METRICS } from "./names";
import { limitReadings, shedderReadings } from "@tideward/guard/internal";
import { LoadSeen, watchReadings } from "./policies";
import { readTelemetry } from "./telemetry";
import type { Instrumentation, TelemetryOptions } from "./telemetry";

/** An `Admission` that counts its verdicts; `close()` stops the counting. */
export interface InstrumentedAdmission extends Admission, Instrumentation {}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * `admit` from `@tideward/guard`, counting every verdict as `tideward.admit.verdicts` by
 * `http.response.status_code` (200, 429, 503) and, for a refusal, the policy that refused
 * (`tideward.refusal.kind`: `shed`, `gate`, `limit`, `reserved`, `rate`, `quota`); a quota
 * store that fails counts by its `error.type`, with no status. With a concurrency `limit`, every
 * verdict also carries its request's level (`tideward.priority`, the level's name), and a wait
 * for a place that its caller abandoned is not counted. Also reported: the client keys holding
 * limiter state (`tideward.admit.keys`), the shedder's calls in flight, the load it was handed
 * and its capacity at that load, and the concurrency limit with the calls in flight under it.
 *
 * The answer is an `Admission` like `admit`'s, for `admitNode` and `admitFetch` alike.
 *
 * @example
 * import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
 * import type { Verdict } from "@tideward/guard";
 * class Reader extends MetricReader { protected async onForceFlush() {} protected async onShutdown() {} }
 * const reader = new Reader();
 * const meter = new MeterProvider({ readers: [reader] }).getMeter("app");
 * const admission = instrumentAdmit({ limits: [{ name: "burst", quota: 2, window: 60_000 }] }, { meter, name: "web" });
 * const statuses = ["ip", "ip", "ip"].map((key) => (admission.check(key) as Verdict).status);
 * statuses; // [200, 200, 429]
 * const { resourceMetrics } = await reader.collect();
 * const verdicts = resourceMetrics.scopeMetrics[0].metrics.find((m) => m.descriptor.name === "tideward.admit.verdicts");
 * verdicts?.dataPoints.map((p) => [p.attributes["http.response.status_code"], p.value]); // [[200, 2], [429, 1]]
 * @param options - the admission's options, see `AdmitOptions`
 * @param telemetry - the meter, and the name every series carries
 * @throws what `admit` throws for bad options; TypeError for bad telemetry options
 */
export function instrumentAdmit(options: AdmitOptions | undefined, telemetry: TelemetryOptions): InstrumentedAdmission {
  const t = readTelemetry(telemetry, "instrumentAdmit", false);
  const meter = t.meter!;
  const o: Record<string, unknown> = isObject(options) ? { ...options } : {};
  // Bad options are admit's to refuse, in its own words: an admission is built from them as
  // given first, and thrown away.
  admit(isObject(options) ? o : options);
  const clock = typeof o.clock === "function" ? (o.clock as Clock) : systemClock;
  const load = typeof o.load === "function" ? new LoadSeen() : undefined;
  if (load !== undefined) o.load = load.wrap(o.load as () => number);
  const inner = admit(o);

  const series = seriesOf(meter, t.name);
  const counts: Counts = series.counts(METRICS.verdicts);
  const name = t.name;
  const row = (
    status: number | undefined,
    kind: string | undefined,
    type: string | undefined,
    level: string | undefined,
  ): Row =>
    counts.row(`${status ?? ""}|${kind ?? ""}|${type ?? ""}|${level ?? ""}`, () => {
      const a: Record<string, string | number> = { [ATTRIBUTES.name]: name };
      if (status !== undefined) a[ATTRIBUTES.status] = status;
      if (kind !== undefined) a[ATTRIBUTES.refusalKind] = kind;
      if (type !== undefined) a[ATTRIBUTES.errorType] = type;
      if (level !== undefined) a[ATTRIBUTES.priority] = level;
      return a;
    });
  // With a concurrency limit, a request's level by name, as the limit judged it: a priority that
  // is not a level is the least important one, the admission's `priority` stands for none given.
  const levels = inner.limit?.priorities;
  const given = o.priority as number | string | undefined;
  const levelOf = (p: unknown): string | undefined =>
    levels === undefined ? undefined : levels.names[levels.level((p === undefined ? given : p) as number | string)];
  // The admitted row of each level, kept at hand once made.
  const allowedRows = new Map<string | undefined, Row>();
  const allowed = (level: string | undefined): Row => {
    let r = allowedRows.get(level);
    if (r === undefined) allowedRows.set(level, (r = row(200, undefined, undefined, level)));
    return r;
  };
  // Per-key limits bound a key's length (admit's MAX_KEY), a quota set does not.
  const keyed = Array.isArray(o.limits) && o.limits.length > 0;
  let closed = false;
  const count = (v: Verdict, level: string | undefined): Verdict => {
    if (closed) return v;
    if (v.allowed) allowed(level).value++;
    else row(v.status, refusalKindOf({ kind: v.reason }), undefined, level).value++;
    return v;
  };
  const failed = (e: unknown, signal: AbortSignal | undefined): never => {
    // A wait its caller abandoned is no verdict: nothing to count.
    const abandoned = signal?.aborted === true && e === signal.reason;
    if (!closed && !abandoned)
      row(undefined, undefined, series.errorTypes.bound(errorType(true, e)), undefined).value++;
    throw e;
  };

  const gauges = new Gauges();
  const attributes = Object.freeze({ [ATTRIBUTES.name]: name });
  gauges.add(series.observable(METRICS.admitKeys), (r) => r.observe(inner.keys, attributes));
  if (inner.shedder !== undefined)
    watchReadings(gauges, { meter, name }, shedderReadings(inner.shedder, load && (() => load.value)), clock);
  if (inner.limit !== undefined) watchReadings(gauges, { meter, name }, limitReadings(inner.limit), clock);

  return {
    check: (key?: string, cost?: number, priority?: number | string, signal?: AbortSignal) => {
      // A bad key or cost is the caller's mistake, not a verdict: the admission refuses it
      // uncounted, checked as admit checks it, before any store is asked.
      if (
        (key !== undefined && (typeof key !== "string" || (keyed && key.length > 256))) ||
        (cost !== undefined && !(Number.isSafeInteger(cost) && cost >= 1))
      )
        return inner.check(key, cost, priority, signal);
      let v: Verdict | PromiseLike<Verdict>;
      try {
        v = inner.check(key, cost, priority, signal);
      } catch (e) {
        return failed(e, undefined); // a quota store that throws, or a signal that is not one
      }
      const level = levelOf(priority);
      return typeof (v as PromiseLike<Verdict>).then === "function"
        ? Promise.resolve(v).then(
            (verdict) => count(verdict, level),
            (e: unknown) => failed(e, signal),
          )
        : count(v as Verdict, level);
    },
    get gate() {
      return inner.gate;
    },
    get limit() {
      return inner.limit;
    },
    get waits() {
      return inner.waits;
    },
    get waiting() {
      return inner.waiting;
    },
    get shedder() {
      return inner.shedder;
    },
    get keys() {
      return inner.keys;
    },
    replaceLimit: (limit) => inner.replaceLimit(limit),
    removeLimit: (limitName) => inner.removeLimit(limitName),
    setOverride: (key, limit, fields) => inner.setOverride(key, limit, fields),
    removeOverride: (key, limit) => inner.removeOverride(key, limit),
    close: () => {
      closed = true;
      gauges.close();
    },
  };
}
