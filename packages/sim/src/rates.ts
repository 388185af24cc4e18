import { check } from "@tideward/time/internal";
import { formatCount, own } from "./memory";
import type { Random, Span } from "@tideward/time";
import { STREAM_FIELDS, Stream, model, resolveStream } from "./traffic";
import type { Process, Resolved, StreamOptions, Traffic } from "./traffic";

/** Options of {@link constant} and {@link poisson}. */
export interface RateOptions extends StreamOptions {
  /** Calls per second, above 0. */
  readonly rate: number;
}

/**
 * Exactly `rate` calls a second, evenly spaced (the n-th at `at + n · 1000 / rate` ms, computed
 * by multiplication so the spacing never drifts).
 */
export function constant(options: RateOptions): Traffic {
  const o = check.options(options, ["rate", ...STREAM_FIELDS], "traffic.constant");
  const rate = check.positive(o.rate, "traffic.constant rate (calls per second)");
  const r = resolveStream(o, "traffic.constant");
  const gap = 1_000 / rate;
  return model(`constant(${rate}/s)`, r.keys, (context) => {
    const origin = context.start + r.at;
    let n = 0;
    return new Stream(
      r,
      context,
      () => origin + ++n * gap,
      (t) => t,
    );
  });
}

/**
 * Poisson arrivals at `rate` calls a second: independent exponential gaps of mean
 * `1000 / rate` ms, so the count in any second has mean and variance `rate`.
 */
export function poisson(options: RateOptions): Traffic {
  const o = check.options(options, ["rate", ...STREAM_FIELDS], "traffic.poisson");
  const rate = check.positive(o.rate, "traffic.poisson rate (calls per second)");
  const r = resolveStream(o, "traffic.poisson");
  const mean = 1_000 / rate;
  const gap = (t: number, random: Random): number => t - mean * Math.log(1 - random());
  return model(`poisson(${rate}/s)`, r.keys, (context) => new Stream(r, context, gap, gap));
}

/** Options of {@link shaped}. */
export interface ShapedOptions extends StreamOptions {
  /** Calls per second at `offset` milliseconds after the run's start; 0 or more, at most `peak`. */
  readonly rate: (offset: number) => number;
  /**
   * The highest rate `rate` reaches, calls per second, above 0: Poisson arrivals are drawn at it
   * and thinned. A run that throws away more than about 33 million candidates beyond 1 000 for
   * each call it keeps (a peak far above the rate; or, evenly, a rate of 0 looked at every
   * millisecond for far too long) is refused with a `RangeError` rather than left to hang.
   */
  readonly peak: number;
  /** @defaultValue "poisson" */
  readonly process?: Process;
  /** For reports. @defaultValue "shaped" */
  readonly label?: string;
}

/**
 * Arrivals whose rate follows a function of time. As a Poisson process it is drawn by thinning
 * (Lewis and Shedler): candidates at the peak rate, each kept with probability `rate / peak`;
 * evenly, each gap is `1000 / rate` ms at the rate of the moment (a rate of 0 waits 1 ms and looks again).
 */
export function shaped(options: ShapedOptions): Traffic {
  const o = check.options(options, ["rate", "peak", "process", "label", ...STREAM_FIELDS], "traffic.shaped");
  if (typeof o.rate !== "function")
    throw new TypeError(`traffic.shaped rate must be a function of the offset (ms), got ${check.describe(o.rate)}`);
  const peak = check.positive(o.peak, "traffic.shaped peak (calls per second)");
  const process = processOf(o.process, "traffic.shaped");
  const label = check.or(o.label, "shaped");
  if (typeof label !== "string") throw new TypeError(`traffic.shaped label must be text, got ${check.describe(label)}`);
  return shapedFrom(label, o.rate, peak, process, resolveStream(o, "traffic.shaped"), "traffic.shaped", SHAPED_ADVICE);
}

/**
 * Candidates a run's shaped traffic may throw away (drawn at the peak and thinned, or 1 ms looks
 * where the rate is 0) beyond {@link WASTE_PER_CALL} for each call it keeps: about a second's work,
 * past which the peak is far above the rate, or the rate 0 for far too long, and a run would hang.
 */
const MAX_WASTE = 2 ** 25;
/** Candidates thrown away for each call kept that any fair shape stays below (a peak 1000 times its rate). */
const WASTE_PER_CALL = 1_000;
const SHAPED_ADVICE = "the peak is far above the rate, or the rate is 0 for long; give a peak near the rate's highest";

function processOf(value: unknown, what: string): Process {
  if (value === undefined) return "poisson";
  if (value === "poisson" || value === "even") return value;
  throw new TypeError(`${what} process must be "poisson" or "even", got ${check.describe(value)}`);
}

function shapedFrom(
  label: string,
  rate: (offset: number) => number,
  peak: number,
  process: Process,
  r: Resolved,
  what: string,
  advice: string,
): Traffic {
  // The rate function is the user's: it must answer a number of calls per second within the peak
  // (a hair over it is rounding, as a ramp's end can be).
  const most = peak * (1 + 1e-9);
  const rateAt = (offset: number): number => {
    const x = rate(offset);
    if (typeof x === "number" && x >= 0 && x <= most) return x;
    throw new RangeError(
      `traffic.shaped rate(${offset}) must answer calls per second from 0 to the peak (${peak}), got ${check.describe(x)}`,
    );
  };
  return model(label, r.keys, (context) => {
    const start = context.start;
    const mean = 1_000 / peak;
    // Work thrown away against calls kept, over the run: bounded, so no legal shape hangs it.
    let kept = 0;
    let waste = 0;
    const wasted = (t: number): void => {
      if (++waste <= MAX_WASTE + WASTE_PER_CALL * kept) return;
      const by = `by ${t - start} ms after the start, keeping ${formatCount(kept)} calls`;
      // The simulator's own refusal of the options, not a failure of the user's rate function.
      throw own(
        new RangeError(
          process === "poisson"
            ? `${what} thinned away ${formatCount(waste)} candidates drawn at its peak of ${peak} calls per second ${by}: ${advice}`
            : `${what} looked ${formatCount(waste)} times, a millisecond apart, at a rate of 0 ${by}: the rate is 0 for far too long; keep it above 0 where calls should come, or end the traffic sooner (until)`,
        ),
      );
    };
    let gap: (t: number, random: Random) => number;
    if (process === "poisson") {
      gap = (t, random) => {
        for (;;) {
          t -= mean * Math.log(1 - random());
          if (t >= context.end) return t;
          const now = rateAt(t - start);
          if (random() * peak < now) {
            kept++;
            return t;
          }
          wasted(t);
        }
      };
    } else {
      gap = (t) => {
        const now = rateAt(t - start);
        let next = t + (now > 0 ? 1_000 / now : 1);
        // A rate of 0 waits a millisecond and looks again: no call lands where the rate is 0.
        while (next < context.end && rateAt(next - start) === 0) {
          next += 1;
          wasted(next);
        }
        kept++;
        return next;
      };
    }
    // The first arrival: the even process starts on the stream's first instant with any rate.
    const first = (t: number, random: Random): number =>
      process === "even" ? (rateAt(t - start) > 0 ? t : gap(t, random)) : gap(t, random);
    return new Stream(r, context, gap, first);
  });
}

/** Options of {@link ramp}. */
export interface RampOptions extends StreamOptions {
  /** Calls per second at the start of the ramp, 0 or more. */
  readonly from: number;
  /** Calls per second at its end and after, 0 or more. */
  readonly to: number;
  /** How long the rate takes to go from `from` to `to`, in milliseconds, above 0. @defaultValue until the run's end */
  readonly over?: Span;
  /** @defaultValue "poisson" */
  readonly process?: Process;
}

/** A rate rising (or falling) in a straight line from `from` to `to` over `over` ms, then holding. */
export function ramp(options: RampOptions): Traffic {
  const o = check.options(options, ["from", "to", "over", "process", ...STREAM_FIELDS], "traffic.ramp");
  const from = check.nonNegative(o.from, "traffic.ramp from (calls per second)");
  const to = check.nonNegative(o.to, "traffic.ramp to (calls per second)");
  if (from === 0 && to === 0) throw new RangeError("traffic.ramp from and to cannot both be 0");
  const r = resolveStream(o, "traffic.ramp");
  const process = processOf(o.process, "traffic.ramp");
  const label = `ramp(${from}/s to ${to}/s)`;
  const WHAT = "traffic.ramp";
  const ADVICE =
    "the ramp stays far below its peak (the larger of from and to) for long; ramp from (or to) above 0, or over less time";
  const peak = Math.max(from, to);
  if (o.over !== undefined) {
    const over = check.positive(o.over, "traffic.ramp over (ms)");
    return shapedFrom(label, (offset) => rampAt(from, to, (offset - r.at) / over), peak, process, r, WHAT, ADVICE);
  }
  // Over the whole stream: the length is only known once the run is.
  return model(label, r.keys, (context) => {
    const over = Math.max(Math.min(context.end - context.start, r.until) - r.at, Number.MIN_VALUE);
    return shapedFrom(label, (offset) => rampAt(from, to, (offset - r.at) / over), peak, process, r, WHAT, ADVICE).open(
      context,
    );
  });
}

function rampAt(from: number, to: number, x: number): number {
  return x <= 0 ? from : x >= 1 ? to : from + (to - from) * x;
}

/** Options of {@link daily}. */
export interface DailyOptions extends StreamOptions {
  /** The mean rate over a day, in calls per second, above 0. */
  readonly mean: number;
  /** How far the rate swings either way, as a share of the mean, in [0, 1]. @defaultValue 0.5 */
  readonly amplitude?: number;
  /** The length of the cycle, in milliseconds. @defaultValue one day, 86 400 000 */
  readonly period?: Span;
  /** When the rate peaks, in milliseconds after the run's start (and every period after). @defaultValue half a period */
  readonly peakAt?: Span;
  /** @defaultValue "poisson" */
  readonly process?: Process;
}

/** A daily shape: `mean · (1 + amplitude · cos(2π (t − peakAt) / period))` calls a second. */
export function daily(options: DailyOptions): Traffic {
  const o = check.options(
    options,
    ["mean", "amplitude", "period", "peakAt", "process", ...STREAM_FIELDS],
    "traffic.daily",
  );
  const mean = check.positive(o.mean, "traffic.daily mean (calls per second)");
  const amplitude = check.between(check.or(o.amplitude, 0.5), 0, 1, "traffic.daily amplitude");
  const period = check.positive(check.or(o.period, 86_400_000), "traffic.daily period (ms)");
  const peakAt = check.nonNegative(check.or(o.peakAt, period / 2), "traffic.daily peakAt (ms)");
  const process = processOf(o.process, "traffic.daily");
  const w = (2 * Math.PI) / period;
  return shapedFrom(
    `daily(mean ${mean}/s, ±${Math.round(amplitude * 100)}%)`,
    (offset) => mean * (1 + amplitude * Math.cos(w * (offset - peakAt))),
    mean * (1 + amplitude),
    process,
    resolveStream(o, "traffic.daily"),
    "traffic.daily",
    "the rate dips far below its peak, mean · (1 + amplitude), for long; lower amplitude",
  );
}
