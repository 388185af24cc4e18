import { check, seededRandom } from "@tideward/time";
import type { Random, Span } from "@tideward/time";
import { distribution } from "./distribution";
import type { Distribution } from "./distribution";
import { single } from "./keys";
import type { KeyModel } from "./keys";

/** What a traffic model is opened with: the run's bounds and a random stream of its own. */
export interface TrafficContext {
  /** The clock reading the run starts at, in milliseconds. */
  readonly start: number;
  /** The clock reading traffic stops at, in milliseconds (exclusive). */
  readonly end: number;
  /** Draws in [0, 1) for this traffic alone. */
  readonly random: Random;
}

/**
 * A stream of arrivals, read one at a time: {@link Arrivals.next} moves to the next one and
 * returns its time; {@link Arrivals.key} and {@link Arrivals.cost} then describe it.
 */
export interface Arrivals {
  /** Moves to the next arrival and returns its time in milliseconds (never earlier than the last), or `Infinity` once the stream has ended. */
  next(): number;
  /** The key (an index into the model's keys) of the arrival `next` returned last. */
  readonly key: number;
  /** The cost of that arrival (1 unless the model says otherwise). */
  readonly cost: number;
}

/** The keys a traffic model's calls come from. */
export interface KeyTable {
  /** How many keys. */
  readonly count: number;
  /** The text of key `i`. */
  readonly name: (i: number) => string;
}

/**
 * A traffic model: a description of arrivals that can be opened any number of times, each
 * time giving the same stream for the same random draws. It holds no state of its own.
 */
export interface Traffic {
  /** What it is, for reports: `"poisson(500/s)"`. */
  readonly label: string;
  /** The keys its calls come from. */
  readonly keys: KeyTable;
  /** A fresh stream of arrivals for one run. */
  open(context: TrafficContext): Arrivals;
}

/** What every traffic model built from a rate accepts besides its rate. */
export interface StreamOptions {
  /** Who makes the calls. @defaultValue one key, `"key-0"` */
  readonly keys?: KeyModel;
  /** Each call's cost: a number, or a distribution to draw it from. @defaultValue 1 */
  readonly cost?: number | Distribution;
  /** When the stream begins, in milliseconds after the run's start. @defaultValue 0 */
  readonly at?: Span;
  /** When it ends, in milliseconds after the run's start; the run's end caps it. @defaultValue the run's end */
  readonly until?: Span;
}

/** How arrivals are spaced around a rate: evenly, or as a Poisson process (exponential gaps). */
export type Process = "even" | "poisson";

const STREAM_FIELDS = ["keys", "cost", "at", "until"] as const;

interface Resolved {
  readonly keys: KeyModel;
  readonly cost: Distribution | undefined;
  readonly fixedCost: number;
  readonly at: number;
  readonly until: number;
}

function resolveStream(o: Partial<StreamOptions>, what: string): Resolved {
  const keys = o.keys ?? single();
  if (typeof keys !== "object" || keys === null || typeof keys.pick !== "function") {
    throw new TypeError(`${what} keys must be a key model (keys.single, keys.uniform, keys.zipf), got ${check.describe(keys)}`);
  }
  const at = check.nonNegative(o.at ?? 0, `${what} at (ms)`);
  const until = o.until === undefined ? Infinity : check.nonNegative(o.until, `${what} until (ms)`);
  if (until < at) throw new RangeError(`${what} until (ms) must be at least at (${at}), got ${until}`);
  const cost = o.cost === undefined ? 1 : o.cost;
  const d = typeof cost === "number" ? undefined : distribution(cost, `${what} cost`);
  return { keys, cost: d, fixedCost: typeof cost === "number" ? check.nonNegative(cost, `${what} cost`) : 0, at, until };
}

/**
 * The arrivals of a rate-driven model: the next time comes from `gap`, and each arrival picks a
 * key and a cost. Shared by every model below, so the key and cost logic lives once.
 */
class Stream implements Arrivals {
  key = 0;
  cost = 1;
  #t: number;
  readonly #end: number;
  readonly #random: Random;
  readonly #keys: KeyModel;
  readonly #costs: Distribution | undefined;
  readonly #many: boolean;
  readonly #gap: (t: number, random: Random) => number;

  constructor(r: Resolved, context: TrafficContext, gap: (t: number, random: Random) => number, first: (t: number, random: Random) => number) {
    this.#random = context.random;
    this.#keys = r.keys;
    this.#many = r.keys.count > 1;
    this.#costs = r.cost;
    this.cost = r.fixedCost;
    this.#end = Math.min(context.end, context.start + r.until);
    this.#gap = gap;
    this.#t = first(context.start + r.at, context.random);
  }

  next(): number {
    const t = this.#t;
    if (!(t < this.#end)) return (this.#t = Infinity);
    this.#t = this.#gap(t, this.#random);
    if (this.#many) this.key = this.#keys.pick(this.#random);
    if (this.#costs !== undefined) this.cost = this.#costs.sample(this.#random);
    return t;
  }
}

function model(label: string, keys: KeyTable, open: (context: TrafficContext) => Arrivals): Traffic {
  return Object.freeze({ label, keys, open });
}

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
    return new Stream(r, context, () => origin + ++n * gap, (t) => t);
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
  /** The highest rate `rate` reaches, calls per second, above 0: Poisson arrivals are drawn at it and thinned. */
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
  if (typeof o.rate !== "function") throw new TypeError(`traffic.shaped rate must be a function of the offset (ms), got ${check.describe(o.rate)}`);
  const peak = check.positive(o.peak, "traffic.shaped peak (calls per second)");
  const process = processOf(o.process, "traffic.shaped");
  const label = o.label ?? "shaped";
  return shapedFrom(label, o.rate, peak, process, resolveStream(o, "traffic.shaped"));
}

function processOf(value: unknown, what: string): Process {
  if (value === undefined) return "poisson";
  if (value === "poisson" || value === "even") return value;
  throw new TypeError(`${what} process must be "poisson" or "even", got ${check.describe(value)}`);
}

function shapedFrom(label: string, rate: (offset: number) => number, peak: number, process: Process, r: Resolved): Traffic {
  return model(label, r.keys, (context) => {
    const start = context.start;
    const mean = 1_000 / peak;
    let gap: (t: number, random: Random) => number;
    if (process === "poisson") {
      gap = (t, random) => {
        for (;;) {
          t -= mean * Math.log(1 - random());
          if (t >= context.end) return t;
          const now = rate(t - start);
          if (random() * peak < now) return t;
        }
      };
    } else {
      gap = (t) => {
        const now = rate(t - start);
        return t + (now > 0 ? 1_000 / now : 1);
      };
    }
    // The first arrival: the even process starts on the stream's first instant with any rate.
    const first = (t: number, random: Random): number => (process === "even" ? (rate(t - start) > 0 ? t : gap(t, random)) : gap(t, random));
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
  const peak = Math.max(from, to);
  if (o.over !== undefined) {
    const over = check.positive(o.over, "traffic.ramp over (ms)");
    return shapedFrom(label, (offset) => rampAt(from, to, (offset - r.at) / over), peak, process, r);
  }
  // Over the whole stream: the length is only known once the run is.
  return model(label, r.keys, (context) => {
    const over = Math.max(Math.min(context.end - context.start, r.until) - r.at, Number.MIN_VALUE);
    return shapedFrom(label, (offset) => rampAt(from, to, (offset - r.at) / over), peak, process, r).open(context);
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
  const o = check.options(options, ["mean", "amplitude", "period", "peakAt", "process", ...STREAM_FIELDS], "traffic.daily");
  const mean = check.positive(o.mean, "traffic.daily mean (calls per second)");
  const amplitude = check.between(o.amplitude ?? 0.5, 0, 1, "traffic.daily amplitude");
  const period = check.positive(o.period ?? 86_400_000, "traffic.daily period (ms)");
  const peakAt = check.nonNegative(o.peakAt ?? period / 2, "traffic.daily peakAt (ms)");
  const process = processOf(o.process, "traffic.daily");
  const w = (2 * Math.PI) / period;
  return shapedFrom(
    `daily(mean ${mean}/s, ±${Math.round(amplitude * 100)}%)`,
    (offset) => mean * (1 + amplitude * Math.cos(w * (offset - peakAt))),
    mean * (1 + amplitude),
    process,
    resolveStream(o, "traffic.daily"),
  );
}

/** Options of {@link bursts}. */
export interface BurstOptions extends Omit<StreamOptions, "at"> {
  /** Calls in each burst, a whole number from 1. */
  readonly size: number;
  /** Milliseconds between the calls of a burst, 0 or more. */
  readonly spacing: Span;
  /** Milliseconds from the start of one burst to the start of the next, above 0. */
  readonly every: Span;
  /** When the first burst begins, in milliseconds after the run's start. @defaultValue 0 */
  readonly at?: Span;
  /** How many bursts; unlimited until the run ends by default. */
  readonly count?: number;
}

/**
 * Bursts: `size` calls `spacing` ms apart, a burst every `every` ms. Call `i` of burst `k` lands
 * at exactly `at + k · every + i · spacing` ms after the start (each time computed from its
 * indices, so no spacing drifts).
 */
export function bursts(options: BurstOptions): Traffic {
  const o = check.options(options, ["size", "spacing", "every", "count", ...STREAM_FIELDS], "traffic.bursts");
  const size = check.integer(o.size, "traffic.bursts size", 1);
  const spacing = check.nonNegative(o.spacing, "traffic.bursts spacing (ms)");
  const every = check.positive(o.every, "traffic.bursts every (ms)");
  const count = o.count === undefined ? Infinity : check.integer(o.count, "traffic.bursts count", 0);
  const r = resolveStream(o, "traffic.bursts");
  return model(`bursts(${size} every ${every}ms)`, r.keys, (context) => {
    const origin = context.start + r.at;
    let k = 0;
    let i = 0;
    const gap = (): number => {
      if (++i === size) {
        i = 0;
        if (++k >= count) return Infinity;
      }
      return origin + k * every + i * spacing;
    };
    return new Stream(r, context, gap, (t) => (count > 0 ? t : Infinity));
  });
}

/** Options of {@link herd}. */
export interface HerdOptions extends Omit<StreamOptions, "until"> {
  /** How many clients call, a whole number from 1: one call each. */
  readonly clients: number;
  /** When they call, in milliseconds after the run's start. @defaultValue 0 */
  readonly at?: Span;
  /** Their calls are spread uniformly over this many milliseconds after `at`; 0 is all at once. @defaultValue 0 */
  readonly spread?: Span;
}

/** Many clients calling at once: `clients` calls at `at` ms (spread over `spread` ms), each from a key of its own (`client-0` …) unless `keys` says otherwise. */
export function herd(options: HerdOptions): Traffic {
  const o = check.options(options, ["clients", "at", "spread", "keys", "cost"], "traffic.herd");
  const clients = check.integer(o.clients, "traffic.herd clients", 1);
  const spread = check.nonNegative(o.spread ?? 0, "traffic.herd spread (ms)");
  const own = o.keys === undefined;
  const r = resolveStream(o, "traffic.herd");
  const keys: KeyTable = own ? { count: clients, name: (i) => `client-${i}` } : r.keys;
  return model(`herd(${clients} clients)`, keys, (context) => {
    const origin = context.start + r.at;
    const times = Float64Array.from({ length: clients }, () => origin + context.random() * spread).sort();
    let n = 0;
    const stream = new Stream(r, context, () => (++n < clients ? times[n] : Infinity), () => times[0]);
    if (!own) return stream;
    // Each client is its own key, numbered in the order they call.
    const arrivals = { key: -1, cost: 1, next: () => Infinity };
    arrivals.next = () => {
      const t = stream.next();
      if (t !== Infinity) arrivals.key++;
      arrivals.cost = stream.cost;
      return t;
    };
    return arrivals;
  });
}

/** Several traffic models at once: their arrivals interleaved in time order, each model's keys numbered after the ones before it. */
export function merge(...models: readonly Traffic[]): Traffic {
  if (models.length === 0) throw new RangeError("traffic.merge needs at least one traffic model");
  models.forEach((m, i) => {
    if (typeof m?.open !== "function") throw new TypeError(`traffic.merge model ${i} must be a traffic model, got ${check.describe(m)}`);
  });
  const offsets = [0];
  for (const m of models) offsets.push(offsets[offsets.length - 1] + m.keys.count);
  const keys: KeyTable = {
    count: offsets[models.length],
    name: (i) => {
      let j = models.length - 1;
      while (offsets[j] > i) j--;
      return models[j].keys.name(i - offsets[j]);
    },
  };
  return Object.freeze({
    label: models.map((m) => m.label).join(" + "),
    keys,
    open: (context: TrafficContext): Arrivals => {
      // Each part gets a stream of its own, so adding a part never changes the others' draws.
      const parts = models.map((m, i) => m.open({ ...context, random: substream(context.random, i) }));
      const times = parts.map((p) => p.next());
      const merged = { key: 0, cost: 1, next: () => Infinity };
      merged.next = () => {
        let best = 0;
        for (let i = 1; i < times.length; i++) if (times[i] < times[best]) best = i;
        const t = times[best];
        if (t === Infinity) return t;
        merged.key = parts[best].key + offsets[best];
        merged.cost = parts[best].cost;
        times[best] = parts[best].next();
        return t;
      };
      return merged;
    },
  });
}

/** A stream seeded from a parent's draw and an index: reproducible, and independent of its siblings' use. */
function substream(parent: Random, index: number): Random {
  return seededRandom(((parent() * 4_294_967_296) >>> 0) ^ Math.imul(index + 1, 0x9e3779b9));
}
