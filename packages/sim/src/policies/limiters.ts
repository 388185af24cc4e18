import { check } from "@tideward/time/internal";
import type { Span } from "@tideward/time";
import { Bucket, Gate, Gcra, MAX_SLIDING_QUOTA, Period, Sliding } from "@tideward/limiters";
import { flag } from "../flag";
import type { Adapter, Envelope, PolicyContext, PolicySpec } from "../policy";
import { nameOf } from "./name";
import { stagePolicy } from "./stage";

/** Options of the rate limiters' adapters. */
export interface LimiterOptions {
  /** One limiter per key (per user, per client address) rather than one for all traffic. @defaultValue false */
  readonly perKey?: boolean;
  /** How results name it (and its refusal reason). */
  readonly name?: string;
}

/** Options of {@link bucket} and {@link gcra}. */
export interface RateLimiterOptions extends LimiterOptions {
  /** Cost-one calls that pass back to back from rest. @defaultValue the rate */
  readonly burst?: number;
}

const TRUE = true;
/** What a small limiter object costs, bytes, as V8 lays one out with its fields. */
const OBJECT_BYTES = 96;
const byKey = (key: number): number => key;

// Keys up to this many are kept in an array filled up front; more, in a map, so a huge key space
// costs only the keys that call.
const DENSE_KEYS = 65_536;

/**
 * One limiter, or one per key made on the key's first call, as an adapter. `take` answers
 * whether the call passes; nothing is settled afterwards. Each key's limiter is charged to the
 * run's memory ceiling (`bytes` a key) before it is made.
 */
function keyed<L>(
  name: string,
  perKey: boolean,
  make: () => L,
  take: (l: L, now: number, cost: number) => boolean,
  envelopes: readonly Envelope[],
  context: PolicyContext,
  bytes: number,
): Adapter {
  if (!perKey) {
    context.reserve?.(bytes, `policy ${name}`);
    const one = make();
    return {
      name,
      side: "client",
      reason: name,
      envelopes,
      admit: (now, _key, cost) => (take(one, now, cost) ? TRUE : undefined),
      settle: () => {},
    };
  }
  const reserve = context.reserve;
  const what = `policy ${name} per key`;
  let made = 0;
  const fresh = (key: number): L => {
    reserve?.(bytes, `${what}: the limiter of key ${key} (the ${made + 1}th)`);
    made++;
    return make();
  };
  const stats = (): Record<string, number> => ({ keys: made });
  if (context.keys <= DENSE_KEYS) {
    reserve?.(context.keys * 8, `${what}: a table of ${context.keys} keys`);
    // Filled up front: writing keys in random order into an empty array would turn it into a dictionary.
    const all = new Array<L | undefined>(context.keys).fill(undefined);
    return {
      name,
      side: "client",
      reason: name,
      envelopes,
      admit: (now, key, cost) => (take((all[key] ??= fresh(key)), now, cost) ? TRUE : undefined),
      settle: () => {},
      stats,
    };
  }
  const all = new Map<number, L>();
  return {
    name,
    side: "client",
    reason: name,
    envelopes,
    admit: (now, key, cost) => {
      let l = all.get(key);
      if (l === undefined) all.set(key, (l = fresh(key)));
      return take(l, now, cost) ? TRUE : undefined;
    },
    settle: () => {},
    stats,
  };
}

/** What one limiter policy brings to {@link limiter}: its bound, and how to make and ask one. */
interface LimiterParts<L> {
  readonly envelope: Envelope;
  /** What one limiter holds, bytes: charged to the run's ceiling for each key's. */
  readonly bytes: number;
  readonly make: (context: PolicyContext) => L;
  readonly take: (limiter: L, now: number, cost: number) => boolean;
}

/**
 * A limiter policy named after its `kind`: reads the options (the limiter's `own` first, then
 * `perKey` and `name`), and `define` checks the limiter's arguments (by making one) and gives the
 * rest.
 */
function limiter<O extends LimiterOptions, L>(
  kind: string,
  options: O,
  own: readonly (keyof O & string)[],
  define: (o: Readonly<Partial<O>>, perKey: boolean) => LimiterParts<L>,
): PolicySpec {
  const o = check.options<O>(options, [...own, "perKey", "name"], `policy.${kind}`);
  const perKey = flag(o.perKey, `policy.${kind} perKey`);
  const { envelope, make, take, bytes } = define(o, perKey);
  const name = nameOf(o.name, kind, `policy.${kind} name`);
  const envelopes = [envelope];
  return { name, create: (context) => keyed(name, perKey, () => make(context), take, envelopes, context, bytes) };
}

/** The token-bucket envelope a bucket and a GCRA both promise, exactly. */
function rateEnvelope(kind: string, rate: number, burst: number, perKey: boolean): Envelope {
  return {
    kind: "rate",
    label: `${kind} ${rate}/s, burst ${burst}${perKey ? " per key" : ""}`,
    rate,
    burst,
    scope: perKey ? byKey : undefined,
    exact: true,
  };
}

/**
 * `@tideward/limiters`' token `Bucket`: `rate` tokens a second up to `burst`, each call taking
 * its cost. Promises (and is checked against) a token-bucket envelope, exactly: it refuses only
 * when the tokens are short. One bucket for all traffic is the guard's bucket stage (entered at
 * its place: the chain spends nothing last); one per key, a table of buckets.
 */
export function bucket(rate: number, options: RateLimiterOptions = {}): PolicySpec {
  const spec = limiter("bucket", options, ["burst"], (o, perKey) => {
    const { burst } = new Bucket(rate, o.burst === undefined ? {} : { burst: o.burst });
    return {
      envelope: rateEnvelope("bucket", rate, burst, perKey),
      bytes: OBJECT_BYTES,
      make: (context) => new Bucket(rate, { burst, now: context.start }),
      take: (b: Bucket, now, cost) => b.take(now, cost),
    };
  });
  if (options.perKey === true) return spec;
  const { burst } = new Bucket(rate, options.burst === undefined ? {} : { burst: options.burst });
  const envelopes = [rateEnvelope("bucket", rate, burst, false)];
  const name = spec.name;
  return stagePolicy("rate", name, "client", "policy.bucket", (context) => {
    context.reserve?.(OBJECT_BYTES, `policy ${name}`);
    return {
      options: { bucket: new Bucket(rate, { burst, now: context.start }) },
      extras: { envelopes },
      direct: true,
    };
  });
}

/** `@tideward/limiters`' `Gcra`: the same envelope as a bucket of its rate and burst, kept as one instant. */
export function gcra(rate: number, options: RateLimiterOptions = {}): PolicySpec {
  return limiter("gcra", options, ["burst"], (o, perKey) => {
    const { burst } = new Gcra(rate, o.burst === undefined ? {} : { burst: o.burst });
    return {
      envelope: rateEnvelope("gcra", rate, burst, perKey),
      bytes: OBJECT_BYTES,
      make: () => new Gcra(rate, { burst }),
      take: (g: Gcra, now, cost) => g.take(now, cost),
    };
  });
}

/** `@tideward/limiters`' exact `Sliding` window: at most `quota` calls in any `window`-long stretch (each call counts one, whatever its cost). */
export function sliding(quota: number, window: Span, options: LimiterOptions = {}): PolicySpec {
  return limiter("sliding", options, [], (_o, perKey) => {
    checkSliding(quota, window);
    return {
      // Its ring of stamps, eight bytes a call of the quota.
      bytes: OBJECT_BYTES + 8 * quota,
      envelope: {
        kind: "window",
        label: `sliding ${quota} per ${window} ms${perKey ? " per key" : ""}`,
        quota,
        window,
        units: "calls",
        scope: perKey ? byKey : undefined,
        exact: true,
      },
      make: () => new Sliding(quota, window),
      take: (s: Sliding, now) => s.take(now),
    };
  });
}

/**
 * Checks a `Sliding`'s arguments as its constructor does, in its words, without making one: a
 * window's ring is 8 bytes a call of the quota, allocated only once the run has charged it.
 */
function checkSliding(quota: number, window: Span): void {
  // Anything but a number is refused by the constructor before it allocates.
  if (typeof quota !== "number") new Sliding(quota, window);
  const q = check.integer(quota, "Sliding quota", 1);
  if (q > MAX_SLIDING_QUOTA)
    throw new RangeError(`Sliding quota must be at most ${MAX_SLIDING_QUOTA} (2^24 stamps, 128 MiB), got ${q}`);
  // A ring of one checks the window.
  new Sliding(1, window);
}

/** Options of {@link period}. */
export interface PeriodPolicyOptions extends LimiterOptions {
  /** Open periods on multiples of the period on the run's clock. @defaultValue false */
  readonly align?: boolean;
}

/**
 * `@tideward/limiters`' fixed-window `Period`: `quota` calls a period; `"hit"` is admitted,
 * `"over"` refused. Its envelope is the fixed window's: twice the quota in any period-long stretch.
 */
export function period(quota: number, length: Span, options: PeriodPolicyOptions = {}): PolicySpec {
  return limiter("period", options, ["align"], (o, perKey) => {
    const align = flag(o.align, "policy.period align");
    new Period(quota, length, { align });
    return {
      bytes: OBJECT_BYTES,
      envelope: {
        kind: "window",
        label: `period ${quota} per ${length} ms (at most twice that across an edge)`,
        quota: 2 * quota,
        window: length,
        units: "calls",
        scope: perKey ? byKey : undefined,
      },
      make: () => new Period(quota, length, { align }),
      take: (p: Period, now) => p.take(now) !== "over",
    };
  });
}

/** Options of {@link gate}. */
export interface GatePolicyOptions {
  /** Where it sits: a server's concurrency limit, or a client's bulkhead. @defaultValue "server" */
  readonly side?: "client" | "server";
  /** @defaultValue "gate" */
  readonly name?: string;
}

/**
 * `@tideward/limiters`' concurrency `Gate`, as the guard's gate stage: at most `limit` admitted
 * attempts unsettled at once; a place is given back when the attempt settles (or never ran). Its `held` is checked
 * against the simulator's own count at every step, and must be back to zero once traffic stops.
 */
export function gate(limit: number, options: GatePolicyOptions = {}): PolicySpec {
  const o = check.options(options, ["side", "name"], "policy.gate");
  const probe = new Gate(limit);
  const side = check.or(o.side, "server");
  if (side !== "client" && side !== "server")
    throw new TypeError(`policy.gate side must be "client" or "server", got ${check.describe(side)}`);
  const name = nameOf(o.name, "gate", "policy.gate name");
  const ceiling = probe.limit > 0 ? probe.limit : Infinity;
  const envelopes: Envelope[] =
    ceiling === Infinity ? [] : [{ kind: "concurrency", label: `gate of ${ceiling}`, limit: ceiling, exact: true }];
  return stagePolicy("gate", name, side, "policy.gate", () => {
    const g = new Gate(limit);
    return { options: { gate: g }, extras: { envelopes, held: () => g.held } };
  });
}
