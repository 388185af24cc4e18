import type {
  Attributes,
  Histogram,
  Meter,
  Observable,
  ObservableCallback,
  ObservableResult,
} from "@opentelemetry/api";
import { ErrorTypes } from "./error-type";
import { DURATION_BUCKETS, METRICS } from "./names";

/** How an instrument reports: what a reader and the README's table call it. */
export type InstrumentKind = "counter" | "histogram" | "gauge" | "updowncounter";

/** One instrument: its name, kind, unit (UCUM, as the semantic conventions write them) and meaning. */
export interface InstrumentSpec {
  /** The OpenTelemetry name, as `tideward.guard.calls` (Prometheus adds `_total` to a counter's). */
  readonly name: string;
  /** How it reports. */
  readonly kind: InstrumentKind;
  /** Its unit: `s` for seconds, `1` for a fraction, `{call}` and the like for a count of things. */
  readonly unit: string;
  /** What it measures, in a sentence (the `# HELP` line). */
  readonly description: string;
}

/** Every instrument this package can make. Counters are counted in place and reported when read. */
export const INSTRUMENTS: readonly InstrumentSpec[] = Object.freeze([
  {
    name: METRICS.calls,
    kind: "counter",
    unit: "{call}",
    description: "Guarded calls that ended, by outcome",
  },
  {
    name: METRICS.callDuration,
    kind: "histogram",
    unit: "s",
    description: "How long guarded calls took, waits and retries included",
  },
  {
    name: METRICS.attempts,
    kind: "counter",
    unit: "{attempt}",
    description: "Attempts that ended (first attempts, retries and hedges), by outcome",
  },
  {
    name: METRICS.attemptDuration,
    kind: "histogram",
    unit: "s",
    description: "How long attempts took, from admission to answer",
  },
  { name: METRICS.retries, kind: "counter", unit: "{retry}", description: "Retries the guard decided on" },
  { name: METRICS.hedges, kind: "counter", unit: "{hedge}", description: "Hedged attempts started" },
  {
    name: METRICS.refusals,
    kind: "counter",
    unit: "{refusal}",
    description: "Attempts a policy refused before they reached the backend, by policy",
  },
  {
    name: METRICS.budgetAvailable,
    kind: "gauge",
    unit: "{retry}",
    description: "Retries the retry budget would grant now",
  },
  {
    name: METRICS.dropRatio,
    kind: "gauge",
    unit: "1",
    description: "The fraction of calls the circuit breaker refuses now, 0 while healthy",
  },
  {
    name: METRICS.shedderActive,
    kind: "updowncounter",
    unit: "{call}",
    description: "Calls the load shedder has let through and not yet settled",
  },
  {
    name: METRICS.shedderAverage,
    kind: "gauge",
    unit: "{call}",
    description: "The load shedder's moving average of calls in flight",
  },
  {
    name: METRICS.shedderCapacity,
    kind: "gauge",
    unit: "{call}",
    description: "Calls in flight past which a hot process counts as full, at the last load read",
  },
  {
    name: METRICS.shedderLoad,
    kind: "gauge",
    unit: "1",
    description: "The last load the load shedder was handed, as a fraction of full (0 to 1)",
  },
  {
    name: METRICS.concurrencyLimit,
    kind: "gauge",
    unit: "{call}",
    description: "The adaptive concurrency limit now: how many calls may be in flight at once",
  },
  {
    name: METRICS.concurrencyInFlight,
    kind: "updowncounter",
    unit: "{call}",
    description: "Calls holding a place under the adaptive concurrency limit",
  },
  {
    name: METRICS.verdicts,
    kind: "counter",
    unit: "{request}",
    description: "Admission verdicts, by status and refusing policy",
  },
  {
    name: METRICS.admitKeys,
    kind: "updowncounter",
    unit: "{key}",
    description: "Client keys holding per-key limiter state",
  },
  {
    name: METRICS.decisions,
    kind: "counter",
    unit: "{decision}",
    description: "Quota-engine decisions, one per charge, by limit and reason",
  },
  {
    name: METRICS.quotaKeys,
    kind: "updowncounter",
    unit: "{key}",
    description: "Keys the quota engine holds state for",
  },
  {
    name: METRICS.reserved,
    kind: "counter",
    unit: "{unit}",
    description: "Quota units reserved, by limit, to be settled when the work is done",
  },
  {
    name: METRICS.refunded,
    kind: "counter",
    unit: "{unit}",
    description: "Reserved quota units given back by a settle or a cancel, by limit",
  },
  {
    name: METRICS.toppedUp,
    kind: "counter",
    unit: "{unit}",
    description: "Quota units charged by a settle beyond the reservation, by limit",
  },
]);

const SPECS = new Map(INSTRUMENTS.map((s) => [s.name, s]));

function spec(name: string): InstrumentSpec {
  const s = SPECS.get(name);
  if (s === undefined) throw new Error(`no instrument named ${name}`);
  return s;
}

/** One combination of attribute values and how many times it was counted. */
export interface Row {
  readonly attributes: Attributes;
  value: number;
}

/**
 * The running totals of one counter, by attributes. Counting is an increment on the hot path (a
 * synchronous counter's `add` costs the SDK a hash of the attributes, some microseconds); a
 * reader collects the totals through an observable counter, which reports cumulative sums.
 */
export class Counts {
  readonly #rows = new Map<string, Row>();

  /** The row for `key`, made with `attributes()` the first time. */
  row(key: string, attributes: () => Attributes): Row {
    let r = this.#rows.get(key);
    if (r === undefined) {
      r = { attributes: Object.freeze(attributes()), value: 0 };
      this.#rows.set(key, r);
    }
    return r;
  }

  /** Reports every row. */
  readonly observe = (result: ObservableResult): void => {
    for (const r of this.#rows.values()) result.observe(r.value, r.attributes);
  };
}

/**
 * What every instrumentation under one name on one meter shares: the counters' totals (so that
 * two guards called "users-api" add up, where two observations of one series would overwrite
 * each other) and the `error.type` values met.
 */
export class Series {
  readonly errorTypes = new ErrorTypes();
  readonly #counts = new Map<string, Counts>();
  readonly #meters: Meters;

  constructor(meters: Meters) {
    this.#meters = meters;
  }

  /**
   * The totals of the counter `metric`, reported from the first call on. They are kept for the
   * next instrumentation under this name only once their callback is registered: a meter that
   * throws leaves nothing behind that would count unreported.
   */
  counts(metric: string): Counts {
    let c = this.#counts.get(metric);
    if (c === undefined) {
      c = new Counts();
      this.#meters.observable(metric).addCallback(c.observe);
      this.#counts.set(metric, c);
    }
    return c;
  }

  /** The histogram `metric`. */
  histogram(metric: string): Histogram {
    return this.#meters.histogram(metric);
  }

  /** The observable `metric`, to add a callback of one's own to (and remove it on close). */
  observable(metric: string): Observable {
    return this.#meters.observable(metric);
  }
}

/** The instruments made on one meter, each made once, and the series of each name. */
export class Meters {
  readonly #meter: Meter;
  readonly #made = new Map<string, Observable | Histogram>();
  readonly #series = new Map<string, Series>();

  constructor(meter: Meter) {
    this.#meter = meter;
  }

  series(name: string): Series {
    let s = this.#series.get(name);
    if (s === undefined) {
      s = new Series(this);
      this.#series.set(name, s);
    }
    return s;
  }

  histogram(name: string): Histogram {
    let h = this.#made.get(name) as Histogram | undefined;
    if (h === undefined) {
      const s = spec(name);
      h = this.#meter.createHistogram(name, {
        description: s.description,
        unit: s.unit,
        advice: { explicitBucketBoundaries: [...DURATION_BUCKETS] },
      });
      this.#made.set(name, h);
    }
    return h;
  }

  observable(name: string): Observable {
    let o = this.#made.get(name) as Observable | undefined;
    if (o === undefined) {
      const s = spec(name);
      const options = { description: s.description, unit: s.unit };
      o =
        s.kind === "counter"
          ? this.#meter.createObservableCounter(name, options)
          : s.kind === "updowncounter"
            ? this.#meter.createObservableUpDownCounter(name, options)
            : this.#meter.createObservableGauge(name, options);
      this.#made.set(name, o);
    }
    return o;
  }
}

const byMeter = new WeakMap<Meter, Meters>();

/** The series `name` on `meter`. */
export function seriesOf(meter: Meter, name: string): Series {
  let m = byMeter.get(meter);
  if (m === undefined) {
    m = new Meters(meter);
    byMeter.set(meter, m);
  }
  return m.series(name);
}

/**
 * Callbacks an instrumentation added to observable instruments, removed together by `close`.
 * A callback that throws is the SDK's to report; these only read numbers.
 */
export class Gauges {
  readonly #added: [Observable, ObservableCallback][] = [];

  add(instrument: Observable, callback: ObservableCallback): void {
    instrument.addCallback(callback);
    this.#added.push([instrument, callback]);
  }

  close(): void {
    for (const [instrument, callback] of this.#added.splice(0)) instrument.removeCallback(callback);
  }
}
