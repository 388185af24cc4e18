import type { Meter, Tracer } from "@opentelemetry/api";
import { systemClock } from "@tideward/time";
import type { Clock } from "@tideward/time";
import { check } from "@tideward/time/internal";
import type { MeterLike, TracerLike } from "./otel-types";

/**
 * Where the telemetry of one instrumented policy goes, and what it is called.
 *
 * `name` is the `tideward.name` attribute of every metric and span: name the backend or the
 * service (`"users-api"`), never a key or a user, so that the series stay few. Instrumenting two
 * things under one name on one meter adds their counts into one series.
 */
export interface TelemetryOptions {
  /**
   * The meter every metric is made on: `metrics.getMeter("my-service")` from
   * `@opentelemetry/api`, or a `MeterProvider`'s. Left out, no metric is recorded.
   */
  readonly meter?: MeterLike;
  /**
   * The tracer a guarded call's span is started on (only {@link instrumentGuard} makes spans).
   * Left out, no span is made. Events reach a call's span through OpenTelemetry's context, so
   * register a context manager (the Node.js SDK does; or `AsyncLocalStorageContextManager`).
   */
  readonly tracer?: TracerLike;
  /** What the instrumented thing is called: the `tideward.name` attribute, 1 to 256 characters. */
  readonly name: string;
  /**
   * Whether {@link instrumentGuard} records how long attempts and calls take (two histograms). A
   * histogram's `record` costs the OpenTelemetry SDK a hash of its attributes, several times a
   * guarded call that does no I/O: off, a guard counts and pays next to nothing. @defaultValue true
   */
  readonly durations?: boolean;
  /**
   * Reads the time in milliseconds, for the readings that need an instant (a breaker's drop
   * ratio, a shedder's capacity, a retry budget's credits). A guard reads its own clock instead.
   * @defaultValue `systemClock` from `@tideward/time`
   */
  readonly clock?: Clock;
}

/** What an instrumentation hands back: a way to stop it. */
export interface Instrumentation {
  /**
   * Stops reporting: the gauges it added are no longer read, and what it counts from now on is
   * not counted (the counters keep the totals they reached, as counters must). Once only; later
   * calls do nothing.
   */
  close(): void;
}

/** The options checked: what an instrumentation runs on. */
export interface Telemetry {
  readonly meter: Meter | undefined;
  readonly tracer: Tracer | undefined;
  readonly name: string;
  readonly durations: boolean;
  readonly clock: Clock;
}

const KNOWN = ["meter", "tracer", "name", "durations", "clock"] as const;

function has(value: unknown, method: string): boolean {
  return (
    typeof value === "object" && value !== null && typeof (value as Record<string, unknown>)[method] === "function"
  );
}

/**
 * Reads `given` once and checks it.
 *
 * @param owner - how messages name the caller, such as `"instrumentGuard"`
 * @param spans - whether the caller makes spans: without, a meter is required
 * @throws TypeError for a misspelt option, a meter or tracer that is not one, a name that is not
 *   a string of 1 to 256 characters, or neither a meter nor (where spans are made) a tracer
 */
export function readTelemetry(given: TelemetryOptions, owner: string, spans: boolean): Telemetry {
  if (given === undefined) throw new TypeError(`${owner} needs telemetry options: { meter, name }`);
  const o = check.options(given, [...KNOWN], owner, "telemetry");
  const name: unknown = o.name;
  if (typeof name !== "string" || name.length === 0 || name.length > 256)
    throw new TypeError(`${owner} telemetry name must be a string of 1 to 256 characters, got ${check.describe(name)}`);
  if (o.meter !== undefined && !has(o.meter, "createHistogram"))
    throw new TypeError(`${owner} telemetry meter must be an OpenTelemetry Meter, got ${check.describe(o.meter)}`);
  if (o.tracer !== undefined && !has(o.tracer, "startSpan"))
    throw new TypeError(`${owner} telemetry tracer must be an OpenTelemetry Tracer, got ${check.describe(o.tracer)}`);
  if (o.tracer !== undefined && !spans) throw new TypeError(`${owner} makes no spans: give it a meter, not a tracer`);
  if (o.meter === undefined && o.tracer === undefined)
    throw new TypeError(`${owner} telemetry needs a meter${spans ? " or a tracer" : ""}`);
  const durations = o.durations ?? true;
  if (typeof durations !== "boolean")
    throw new TypeError(`${owner} telemetry durations must be true or false, got ${check.describe(durations)}`);
  const clock = o.clock === undefined ? systemClock : check.fn<Clock>(o.clock, `${owner} telemetry clock`);
  // The objects are the API's own (their types are written out only to keep them from the declarations).
  return { meter: o.meter as Meter | undefined, tracer: o.tracer as Tracer | undefined, name, durations, clock };
}
