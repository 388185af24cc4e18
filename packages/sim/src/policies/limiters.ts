import { check } from "@tideward/time/internal";
import type { Span } from "@tideward/time";
import { Bucket, Gate, Gcra, Period, Sliding } from "@tideward/limiters";
import type { Adapter, Envelope, PolicyContext, PolicySpec } from "../policy";

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
const byKey = (key: number): number => key;

/**
 * One limiter, or one per key made on the key's first call, as an adapter. `take` answers
 * whether the call passes; nothing is settled afterwards.
 */
function keyed<L>(
  name: string,
  perKey: boolean,
  make: () => L,
  take: (l: L, now: number, cost: number) => boolean,
  envelopes: readonly Envelope[],
): Adapter {
  if (!perKey) {
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
  const all: (L | undefined)[] = [];
  return {
    name,
    side: "client",
    reason: name,
    envelopes,
    admit: (now, key, cost) => {
      let l = all[key];
      if (l === undefined) {
        while (all.length < key) all.push(undefined);
        all[key] = l = make();
      }
      return take(l, now, cost) ? TRUE : undefined;
    },
    settle: () => {},
    stats: () => ({ keys: all.reduce((n: number, l) => (l === undefined ? n : n + 1), 0) }),
  };
}

/**
 * `@tideward/limiters`' token `Bucket`: `rate` tokens a second up to `burst`, each call taking
 * its cost. Promises (and is checked against) a token-bucket envelope, exactly: it refuses only
 * when the tokens are short.
 */
export function bucket(rate: number, options: RateLimiterOptions = {}): PolicySpec {
  const o = check.options(options, ["burst", "perKey", "name"], "policy.bucket");
  const probe = new Bucket(rate, o.burst === undefined ? {} : { burst: o.burst });
  const name = o.name ?? "bucket";
  const perKey = o.perKey ?? false;
  const envelopes: Envelope[] = [
    {
      kind: "rate",
      label: `bucket ${rate}/s, burst ${probe.burst}${perKey ? " per key" : ""}`,
      rate,
      burst: probe.burst,
      scope: perKey ? byKey : undefined,
      exact: true,
    },
  ];
  return {
    name,
    create: (context: PolicyContext) =>
      keyed(
        name,
        perKey,
        () => new Bucket(rate, { burst: probe.burst, now: context.start }),
        (b, now, cost) => b.take(now, cost),
        envelopes,
      ),
  };
}

/** `@tideward/limiters`' `Gcra`: the same envelope as a bucket of its rate and burst, kept as one instant. */
export function gcra(rate: number, options: RateLimiterOptions = {}): PolicySpec {
  const o = check.options(options, ["burst", "perKey", "name"], "policy.gcra");
  const probe = new Gcra(rate, o.burst === undefined ? {} : { burst: o.burst });
  const name = o.name ?? "gcra";
  const perKey = o.perKey ?? false;
  const envelopes: Envelope[] = [
    {
      kind: "rate",
      label: `gcra ${rate}/s, burst ${probe.burst}${perKey ? " per key" : ""}`,
      rate,
      burst: probe.burst,
      scope: perKey ? byKey : undefined,
      exact: true,
    },
  ];
  return {
    name,
    create: () =>
      keyed(
        name,
        perKey,
        () => new Gcra(rate, { burst: probe.burst }),
        (g, now, cost) => g.take(now, cost),
        envelopes,
      ),
  };
}

/** `@tideward/limiters`' exact `Sliding` window: at most `quota` calls in any `window`-long stretch (each call counts one, whatever its cost). */
export function sliding(quota: number, window: Span, options: LimiterOptions = {}): PolicySpec {
  const o = check.options(options, ["perKey", "name"], "policy.sliding");
  new Sliding(quota, window);
  const name = o.name ?? "sliding";
  const perKey = o.perKey ?? false;
  const envelopes: Envelope[] = [
    {
      kind: "window",
      label: `sliding ${quota} per ${window} ms${perKey ? " per key" : ""}`,
      quota,
      window,
      units: "calls",
      scope: perKey ? byKey : undefined,
      exact: true,
    },
  ];
  return {
    name,
    create: () =>
      keyed(
        name,
        perKey,
        () => new Sliding(quota, window),
        (s, now) => s.take(now),
        envelopes,
      ),
  };
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
  const o = check.options(options, ["align", "perKey", "name"], "policy.period");
  const align = o.align ?? false;
  new Period(quota, length, { align });
  const name = o.name ?? "period";
  const perKey = o.perKey ?? false;
  const envelopes: Envelope[] = [
    {
      kind: "window",
      label: `period ${quota} per ${length} ms (at most twice that across an edge)`,
      quota: 2 * quota,
      window: length,
      units: "calls",
      scope: perKey ? byKey : undefined,
    },
  ];
  return {
    name,
    create: () =>
      keyed(
        name,
        perKey,
        () => new Period(quota, length, { align }),
        (p, now) => p.take(now) !== "over",
        envelopes,
      ),
  };
}

/** Options of {@link gate}. */
export interface GatePolicyOptions {
  /** Where it sits: a server's concurrency limit, or a client's bulkhead. @defaultValue "server" */
  readonly side?: "client" | "server";
  /** @defaultValue "gate" */
  readonly name?: string;
}

/**
 * `@tideward/limiters`' concurrency `Gate`: at most `limit` admitted attempts unsettled at
 * once; a place is given back when the attempt settles (or never ran). Its `held` is checked
 * against the simulator's own count at every step, and must be back to zero once traffic stops.
 */
export function gate(limit: number, options: GatePolicyOptions = {}): PolicySpec {
  const o = check.options(options, ["side", "name"], "policy.gate");
  const probe = new Gate(limit);
  const side = o.side ?? "server";
  if (side !== "client" && side !== "server")
    throw new TypeError(`policy.gate side must be "client" or "server", got ${check.describe(side)}`);
  const name = o.name ?? "gate";
  const ceiling = probe.limit > 0 ? probe.limit : Infinity;
  const envelopes: Envelope[] =
    ceiling === Infinity ? [] : [{ kind: "concurrency", label: `gate of ${ceiling}`, limit: ceiling, exact: true }];
  return {
    name,
    create(): Adapter {
      const g = new Gate(limit);
      return {
        name,
        side,
        reason: name,
        envelopes,
        admit: () => (g.enter() ? TRUE : undefined),
        settle: () => g.leave(),
        release: () => g.leave(),
        held: () => g.held,
      };
    },
  };
}
