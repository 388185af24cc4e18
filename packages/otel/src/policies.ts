import type { Meter, ObservableResult } from "@opentelemetry/api";
import type { Breaker } from "@tideward/breaker";
import { breakerReadings, shedderReadings } from "@tideward/guard/internal";
import type { Reading } from "@tideward/guard/internal";
import type { Shedder } from "@tideward/shedder";
import type { Clock } from "@tideward/time";
import { check } from "@tideward/time/internal";
import { Gauges, seriesOf } from "./instruments";
import { ATTRIBUTES } from "./names";
import { readTelemetry } from "./telemetry";
import type { Instrumentation, TelemetryOptions } from "./telemetry";

/**
 * The last load a shedder was handed, in thousandths, kept by the `load` wrapper of an
 * instrumented admission: the shedder itself keeps no record of it.
 */
export class LoadSeen {
  /** Thousandths, clamped to [0, 1000] as the shedder clamps them; NaN until the first reading. */
  value = Number.NaN;

  /** Wraps `load` so that every reading is kept. */
  wrap(load: () => number): () => number {
    return () => {
      const v = load();
      // As the shedder reads it: anything that is not a number above 0 is 0, over 1000 is 1000.
      this.value = typeof v === "number" && v > 0 ? (v < 1000 ? v : 1000) : 0;
      return v;
    };
  }
}

function has(value: unknown, method: string): boolean {
  return (
    typeof value === "object" && value !== null && typeof (value as Record<string, unknown>)[method] === "function"
  );
}

/** Reads `f` for a gauge; a reading that throws or is not finite is left out of the collection. */
function reading(result: ObservableResult, f: () => number, attributes: Record<string, string>): void {
  let v: number;
  try {
    v = f();
  } catch {
    return;
  }
  if (Number.isFinite(v)) result.observe(v, attributes);
}

/**
 * Adds to `gauges` the figures a stage reports about itself (`readings`), each read at
 * `clock()` when the meter's reader collects: every policy's gauges, by one rule.
 */
export function watchReadings(
  gauges: Gauges,
  target: TelemetryTarget,
  readings: readonly Reading[] | undefined,
  clock: Clock,
): void {
  if (readings === undefined || readings.length === 0) return;
  const series = seriesOf(target.meter, target.name);
  const attributes = Object.freeze({ [ATTRIBUTES.name]: target.name });
  for (const r of readings)
    gauges.add(series.observable(r.metric), (o) => reading(o, () => r.read(clock()), attributes));
}

/** A meter and a name: where gauges go. */
export interface TelemetryTarget {
  readonly meter: Meter;
  readonly name: string;
}

function handle(gauges: Gauges): Instrumentation {
  return Object.freeze({ close: () => gauges.close() });
}

/**
 * Reports a circuit breaker's drop ratio as the gauge `tideward.breaker.drop_ratio`: the
 * fraction of calls it would refuse now, read with `Breaker.ratio(clock())` whenever the meter's
 * reader collects (and at no other time: the breaker's own path is untouched).
 *
 * A breaker given to {@link instrumentGuard} (or built by it from fields) is reported already.
 *
 * @example
 * import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
 * import { Breaker } from "@tideward/breaker";
 * class Reader extends MetricReader { protected async onForceFlush() {} protected async onShutdown() {} }
 * const reader = new Reader();
 * const meter = new MeterProvider({ readers: [reader] }).getMeter("app");
 * const breaker = new Breaker({}, Date.now());
 * const reported = instrumentBreaker(breaker, { meter, name: "payments", clock: Date.now });
 * const { resourceMetrics } = await reader.collect();
 * const ratio = resourceMetrics.scopeMetrics[0].metrics[0];
 * ratio.descriptor.name; // "tideward.breaker.drop_ratio"
 * ratio.dataPoints[0].value; // 0
 * reported.close(); // stops reporting it
 * @param breaker - the breaker to watch
 * @param telemetry - the meter, the name, and the clock the breaker is fed from
 * @returns a handle whose `close()` stops the reporting
 * @throws TypeError when `breaker` has no `ratio`, or for bad telemetry options
 */
export function instrumentBreaker(breaker: Breaker, telemetry: TelemetryOptions): Instrumentation {
  const t = readTelemetry(telemetry, "instrumentBreaker", false);
  if (!has(breaker, "ratio"))
    throw new TypeError(`instrumentBreaker expects a Breaker, got ${check.describe(breaker)}`);
  const gauges = new Gauges();
  watchReadings(gauges, { meter: t.meter!, name: t.name }, breakerReadings(breaker), t.clock);
  return handle(gauges);
}

/**
 * Reports a load shedder's calls in flight (`tideward.shedder.active_calls`) and their moving
 * average (`tideward.shedder.average_active_calls`), read when the meter's reader collects.
 *
 * The load it was handed and its capacity at that load are known only where the load is read:
 * a shedder inside an instrumented guard or admission reports those two as well, and its
 * refusals are the guard's and the admission's refusals of kind `shed`.
 *
 * @param shedder - the shedder to watch
 * @param telemetry - the meter and the name
 * @returns a handle whose `close()` stops the reporting
 * @throws TypeError when `shedder` is not a Shedder, or for bad telemetry options
 */
export function instrumentShedder(shedder: Shedder, telemetry: TelemetryOptions): Instrumentation {
  const t = readTelemetry(telemetry, "instrumentShedder", false);
  if (!has(shedder, "capacity"))
    throw new TypeError(`instrumentShedder expects a Shedder, got ${check.describe(shedder)}`);
  const gauges = new Gauges();
  watchReadings(gauges, { meter: t.meter!, name: t.name }, shedderReadings(shedder), t.clock);
  return handle(gauges);
}
