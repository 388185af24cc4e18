import { check } from "@tideward/time/internal";
import type { Random } from "@tideward/time";

/**
 * A distribution of durations (or costs) to draw from: what a backend's latency, a failure's
 * latency or a call's cost follows. `sample` is given the draws it needs; it keeps no state, so
 * one distribution can serve any number of runs.
 */
export interface Distribution {
  /** What it is, for reports: `"exponential(mean 20ms)"`. */
  readonly label: string;
  /** Its mean, in its own unit (milliseconds for a latency). */
  readonly mean: number;
  /** One value, drawn with `random` (a source of draws in [0, 1)); never negative. */
  sample(random: Random): number;
}

/** Always `value` (milliseconds for a latency), 0 or more. */
export function fixed(value: number): Distribution {
  const v = check.nonNegative(value, "fixed value");
  return Object.freeze({ label: `fixed(${v})`, mean: v, sample: () => v });
}

/** Uniform over `[min, max)`, both 0 or more. */
export function uniform(min: number, max: number): Distribution {
  const lo = check.nonNegative(min, "uniform min");
  const hi = check.nonNegative(max, "uniform max");
  if (hi < lo) throw new RangeError(`uniform max must be at least min (${lo}), got ${hi}`);
  const span = hi - lo;
  return Object.freeze({
    label: `uniform(${lo}, ${hi})`,
    mean: (lo + hi) / 2,
    sample: (random: Random) => lo + random() * span,
  });
}

/**
 * Exponential with mean `mean`: memoryless, the service time of queueing theory's M/M/c, and
 * the gap between arrivals of a Poisson stream.
 */
export function exponential(mean: number): Distribution {
  const m = check.nonNegative(mean, "exponential mean");
  // 1 − u is in (0, 1], so the logarithm is finite.
  return Object.freeze({
    label: `exponential(mean ${m})`,
    mean: m,
    sample: (random: Random) => -m * Math.log(1 - random()),
  });
}

/** Options of {@link logNormal}. */
export interface LogNormalOptions {
  /** The median, above 0 (milliseconds for a latency). */
  readonly median: number;
  /** The standard deviation of the logarithm, 0 or more: 0.5 is a moderate tail, 1 a heavy one. @defaultValue 0.5 */
  readonly sigma?: number;
}

/**
 * Log-normal: a median and a long right tail, the usual shape of measured service latency.
 * The mean is `median · e^(σ²/2)`. Drawn by Box–Muller from two draws.
 */
export function logNormal(options: LogNormalOptions): Distribution {
  const o = check.options(options, ["median", "sigma"], "logNormal");
  const median = check.positive(o.median, "logNormal median");
  const sigma = check.nonNegative(check.or(o.sigma, 0.5), "logNormal sigma");
  const mu = Math.log(median);
  return Object.freeze({
    label: `logNormal(median ${median}, sigma ${sigma})`,
    mean: median * Math.exp((sigma * sigma) / 2),
    sample: (random: Random) => {
      const u = 1 - random();
      const v = random();
      return Math.exp(mu + sigma * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v));
    },
  });
}

/** Options of {@link normal}. */
export interface NormalOptions {
  /** The mean before folding, 0 or more (milliseconds for a latency). */
  readonly mean: number;
  /** The standard deviation, 0 or more. */
  readonly sd: number;
}

/**
 * The absolute value of a normal draw, `|N(mean, sd)|`: a network delay as Brooker's backoff
 * study models one (mean 10 ms, sd 2 ms), never negative. Drawn by Box–Muller from two draws.
 * Its `mean` is the folded normal's.
 */
export function normal(options: NormalOptions): Distribution {
  const o = check.options(options, ["mean", "sd"], "normal");
  const mu = check.nonNegative(o.mean, "normal mean");
  const sd = check.nonNegative(o.sd, "normal sd");
  // The folded normal's mean: sd·√(2/π)·e^(−μ²/2σ²) + μ·(1 − 2Φ(−μ/σ)).
  const folded =
    sd === 0
      ? mu
      : sd * Math.sqrt(2 / Math.PI) * Math.exp(-(mu * mu) / (2 * sd * sd)) + mu * erf(mu / (sd * Math.SQRT2));
  return Object.freeze({
    label: `normal(mean ${mu}, sd ${sd})`,
    mean: folded,
    sample: (random: Random) => {
      const u = 1 - random();
      const v = random();
      return Math.abs(mu + sd * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v));
    },
  });
}

/** The error function, to 1.5e-7 (Abramowitz and Stegun 7.1.26). */
function erf(x: number): number {
  const t = 1 / (1 + 0.3275911 * Math.abs(x));
  const y =
    1 -
    ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-x * x);
  return x >= 0 ? y : -y;
}

/** Options of {@link bimodal}. */
export interface BimodalOptions {
  /** The usual case. */
  readonly fast: Distribution;
  /** The slow case: a cache miss, a garbage collection, a cold path. */
  readonly slow: Distribution;
  /** The share of draws from `slow`, in [0, 1]. @defaultValue 0.05 */
  readonly share?: number;
}

/** A mixture of two distributions: `slow` with probability `share`, `fast` otherwise. */
export function bimodal(options: BimodalOptions): Distribution {
  const o = check.options(options, ["fast", "slow", "share"], "bimodal");
  const fast = distribution(o.fast, "bimodal fast");
  const slow = distribution(o.slow, "bimodal slow");
  const share = check.between(check.or(o.share, 0.05), 0, 1, "bimodal share");
  return Object.freeze({
    label: `bimodal(${fast.label}, ${slow.label}, share ${share})`,
    mean: fast.mean * (1 - share) + slow.mean * share,
    sample: (random: Random) => (random() < share ? slow.sample(random) : fast.sample(random)),
  });
}

/**
 * The sum of one draw from each part: a read→write window of two network legs, a service time
 * plus a fixed overhead.
 */
export function sum(...parts: readonly Distribution[]): Distribution {
  if (parts.length === 0) throw new RangeError("sum needs at least one distribution");
  const ds = parts.map((p, i) => distribution(p, `sum part ${i}`));
  return Object.freeze({
    label: `sum(${ds.map((d) => d.label).join(", ")})`,
    mean: ds.reduce((m, d) => m + d.mean, 0),
    sample: (random: Random) => {
      let total = 0;
      for (const d of ds) total += d.sample(random);
      return total;
    },
  });
}

/** `value` as a {@link Distribution}: a number is {@link fixed}, a distribution is itself. */
export function distribution(value: unknown, what: string): Distribution {
  if (typeof value === "number") return fixed(check.nonNegative(value, what));
  if (
    typeof value === "object" &&
    value !== null &&
    typeof (value as Distribution).sample === "function" &&
    typeof (value as Distribution).mean === "number" &&
    typeof (value as Distribution).label === "string"
  ) {
    return value as Distribution;
  }
  throw new TypeError(
    `${what} must be a number or a distribution (fixed, uniform, exponential, logNormal, normal, bimodal), got ${check.describe(value)}`,
  );
}
