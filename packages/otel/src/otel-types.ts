// The parts of OpenTelemetry's `Meter` and `Tracer` this package calls, written out rather than
// imported, so that its declarations stand without `@opentelemetry/api`'s: any Meter and Tracer
// of the API's 1.x line is one of these (the type tests hand it the API's own).

/** An attribute value, of the kinds this package sets. */
type AttributeValue = string | number | boolean;

/** Attributes, as OpenTelemetry takes them. */
type Attributes = Readonly<Record<string, AttributeValue | undefined>>;

/** What an observable instrument's callback is handed. */
interface Observation {
  observe(value: number, attributes?: Attributes): void;
}

/** An observable instrument, as a meter's `createObservable…` answers one. */
interface Observable {
  addCallback(callback: (result: Observation) => void): void;
  removeCallback(callback: (result: Observation) => void): void;
}

/** An instrument's description, unit and, for a histogram, its bucket boundaries. */
interface InstrumentOptions {
  readonly description?: string;
  readonly unit?: string;
  readonly advice?: { readonly explicitBucketBoundaries?: number[] };
}

/** What this package asks of a meter: a `Meter` of `@opentelemetry/api` is one. */
export interface MeterLike {
  /** Makes a histogram: the two duration histograms, in seconds. */
  createHistogram(name: string, options?: InstrumentOptions): { record(value: number, attributes?: Attributes): void };
  /** Makes an observable counter: every counter, counted in place and read when collected. */
  createObservableCounter(name: string, options?: InstrumentOptions): Observable;
  /** Makes an observable up-down counter: calls in flight, keys held. */
  createObservableUpDownCounter(name: string, options?: InstrumentOptions): Observable;
  /** Makes an observable gauge: the drop ratio, the load, the capacity, the budget's credits. */
  createObservableGauge(name: string, options?: InstrumentOptions): Observable;
}

/** What this package asks of a tracer: a `Tracer` of `@opentelemetry/api` is one. */
export interface TracerLike {
  /** Starts a guarded call's span, a child of the span in `context`. */
  startSpan(
    name: string,
    options?: { readonly attributes?: Attributes },
    context?: unknown,
  ): {
    setAttribute(key: string, value: AttributeValue): unknown;
    setStatus(status: { readonly code: number; readonly message?: string }): unknown;
    addEvent(name: string, attributes?: Attributes): unknown;
    end(): void;
  };
}
