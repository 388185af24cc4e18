// The real OpenTelemetry SDK, as an application wires it: a MeterProvider with the in-memory
// exporter behind a periodic reader (flushed on demand), and a tracer provider with the
// in-memory span exporter.
import {
  AggregationTemporality,
  DataPointType,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from "@opentelemetry/sdk-metrics";
import type { DataPoint, Histogram, MetricData } from "@opentelemetry/sdk-metrics";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import type { Meter, Tracer } from "@opentelemetry/api";

/** One collection: every metric by name. */
export class Collected {
  readonly #byName: Map<string, MetricData>;

  constructor(metrics: readonly MetricData[]) {
    this.#byName = new Map(metrics.map((m) => [m.descriptor.name, m]));
  }

  has(name: string): boolean {
    return this.#byName.has(name);
  }

  metric(name: string): MetricData {
    const m = this.#byName.get(name);
    if (m === undefined) throw new Error(`no metric ${name}; collected ${[...this.#byName.keys()].join(", ")}`);
    return m;
  }

  /** The data points of `name` whose attributes include every one of `where`. */
  points(name: string, where: Record<string, unknown> = {}): DataPoint<unknown>[] {
    return (this.metric(name).dataPoints as DataPoint<unknown>[]).filter((p) =>
      Object.entries(where).every(([k, v]) => p.attributes[k] === v),
    );
  }

  /** The sum of a counter's (or gauge's) points matching `where`; 0 when the metric is absent. */
  sum(name: string, where: Record<string, unknown> = {}): number {
    if (!this.has(name)) return 0;
    return this.points(name, where).reduce((s, p) => s + (p.value as number), 0);
  }

  /** A histogram's count and sum over the points matching `where`. */
  histogram(name: string, where: Record<string, unknown> = {}): { count: number; sum: number } {
    const m = this.metric(name);
    if (m.dataPointType !== DataPointType.HISTOGRAM) throw new Error(`${name} is not a histogram`);
    return this.points(name, where).reduce(
      (acc, p) => {
        const h = p.value as Histogram;
        return { count: acc.count + h.count, sum: acc.sum + (h.sum ?? 0) };
      },
      { count: 0, sum: 0 },
    );
  }

  /** Every distinct value the attribute `key` takes in `name`'s points. */
  values(name: string, key: string): unknown[] {
    return [...new Set(this.points(name).map((p) => p.attributes[key]))];
  }
}

export interface MetricsSdk {
  readonly meter: Meter;
  collect(): Promise<Collected>;
  shutdown(): Promise<void>;
}

/** A meter provider with an in-memory exporter, collected (exported) when asked. */
export function metricsSdk(): MetricsSdk {
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  const provider = new MeterProvider({ readers: [reader] });
  return {
    meter: provider.getMeter("tideward-test"),
    collect: async () => {
      exporter.reset();
      await reader.forceFlush();
      const [resource] = exporter.getMetrics();
      return new Collected(resource?.scopeMetrics.flatMap((s) => s.metrics) ?? []);
    },
    shutdown: () => provider.shutdown(),
  };
}

export interface TracesSdk {
  readonly tracer: Tracer;
  readonly exporter: InMemorySpanExporter;
  shutdown(): Promise<void>;
}

/** A tracer provider whose spans land in memory as they end. */
export function tracesSdk(): TracesSdk {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { tracer: provider.getTracer("tideward-test"), exporter, shutdown: () => provider.shutdown() };
}
