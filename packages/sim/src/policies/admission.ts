import type { Limiter } from "@tideward/concurrency";
import { admit } from "@tideward/guard";
import type { AdmitOptions, Verdict } from "@tideward/guard";
import { ADMIT_OPTIONS } from "@tideward/guard/internal";
import { check } from "@tideward/time/internal";
import type { Adapter, Envelope, PolicyContext, PolicySpec } from "../policy";
import { nameOf } from "./name";

/** Options of {@link admission}: `admit`'s, less the clock and load (the run's) and the wait. */
export type AdmissionOptions = Omit<AdmitOptions, "clock" | "load" | "wait" | "limit"> & {
  /** The concurrency limit, made for each run (`() => new Limiter(new VegasLimit())`). @defaultValue none */
  readonly limit?: (context: PolicyContext) => Limiter;
  /** @defaultValue "admission" */
  readonly name?: string;
};

// admit's own options, less those the run supplies, and the policy's name: read from admit's list,
// so an option admit gains is one here.
const KNOWN = [...ADMIT_OPTIONS.filter((k) => k !== "clock" && k !== "load"), "name"] as (keyof AdmissionOptions)[];

// What a key's entry costs admission besides its limits' state, bytes (its name, its map entries).
const KEY_BYTES = 256;

/**
 * `@tideward/guard`'s server admission (`admit`) as a server-side policy: its shedder (reading
 * the backend's CPU), gate, concurrency limit, per-key limits and quota charge set, in its own
 * order, on the run's clock, each request at its key's priority (the traffic's `keys.priority`).
 * A refusal's reason is `"<name>/<kind>"` (`shed`, `gate`, `limit`, `reserved`, `rate`, `quota`);
 * the verdict is released when the backend finishes. Its gate and per-key limits are checked as envelopes
 * when invariants are on.
 *
 * The client guard (`guard`) is asynchronous (timers, promises) and is not driven here: its
 * parts are, one by one, as `policy.breaker`, `policy.bucket` and the `client` option.
 */
export function admission(options: AdmissionOptions = {}): PolicySpec {
  const { name: given, limit, ...rest } = check.options(options, KNOWN, "policy.admission");
  const name = nameOf(given, "admission", "policy.admission name");
  if ((rest as AdmitOptions).wait !== undefined)
    throw new TypeError(
      "policy.admission wait: the simulator decides each request at once, so a request that waits for a place is not simulated; leave wait out",
    );
  if (limit !== undefined && typeof limit !== "function")
    throw new TypeError(
      `policy.admission limit must be a function of the run's context making a Limiter (each run makes its own), got ${check.describe(limit)}`,
    );
  // The run charges each key's state to its own ceiling as the key appears, so admit's up-front
  // bound (every one of maxKeys at once) is not what limits a run, unless the user sets one.
  if (rest.maxBytes === undefined) (rest as { maxBytes?: number }).maxBytes = Number.MAX_VALUE;
  // Built once here, so bad options fail when the spec is made (the run builds its own).
  // (A limit is made only for a run: the function may draw from the run's stream.)
  admit({ ...rest, ...(rest.shedder === undefined ? {} : { load: () => 0 }), clock: () => 0 });
  if (
    typeof rest.shedder === "object" &&
    rest.shedder !== null &&
    typeof (rest.shedder as { allow?: unknown }).allow === "function"
  ) {
    throw new TypeError("policy.admission shedder must be the shedder's fields, not a Shedder: each run makes its own");
  }
  if (typeof rest.gate === "object")
    throw new TypeError("policy.admission gate must be a number, not a Gate: each run makes its own");
  return {
    name,
    create(context: PolicyContext): Adapter {
      const now = new Float64Array([context.start]);
      const clock = (): number => now[0];
      const a = admit({
        ...rest,
        ...(rest.shedder === undefined ? {} : { load: () => context.cpu(now[0]) }),
        ...(limit === undefined ? {} : { limit: limit(context) }),
        clock,
      });
      // Each key the limits see keeps their state: a sliding window 8 bytes per call of its quota.
      // Charged to the run's ceiling on the key's first call, before admission makes it.
      const perKey = KEY_BYTES + (rest.limits ?? []).reduce((b, l) => b + (l.kind === "sliding" ? 8 * l.quota : 64), 0);
      const seen = context.reserve === undefined || (rest.limits ?? []).length === 0 ? undefined : new Set<number>();
      const adapter = {
        name,
        side: "server" as const,
        reason: name,
        envelopes: envelopes(name, rest, context),
        admit(t: number, key: number, cost: number, priority?: number | string): unknown {
          now[0] = t;
          if (seen !== undefined && !seen.has(key)) {
            context.reserve?.(perKey, `policy ${name}: the limits' state for key ${key} (the ${seen.size + 1}th)`);
            seen.add(key);
          }
          const v = a.check(context.keyName(key), cost > 1 ? Math.ceil(cost) : 1, priority);
          if (typeof (v as Promise<Verdict>).then === "function") {
            throw new TypeError(
              "policy.admission: the quota store answered with a promise; the simulator drives a synchronous store (such as QuotaEngine)",
            );
          }
          const verdict = v as Verdict;
          if (verdict.allowed) return verdict;
          adapter.reason = `${name}/${verdict.reason ?? "refused"}`;
          return undefined;
        },
        settle(token: unknown, t: number, ok: boolean): void {
          now[0] = t;
          (token as Verdict).release(ok);
        },
        release(token: unknown, t: number): void {
          now[0] = t;
          (token as Verdict).release(false);
        },
        ...(a.gate === undefined ? {} : { held: () => (a.gate as { held: number }).held }),
      };
      return adapter;
    },
  };
}

function envelopes(name: string, o: Omit<AdmitOptions, "clock" | "load">, context: PolicyContext): Envelope[] {
  const out: Envelope[] = [];
  const keys = context.keys;
  // Admission keys its limits by the key's text: keys of two merged models may share one.
  const ids = new Map<string, number>();
  const scope = (key: number): number => {
    const text = context.keyName(key);
    let n = ids.get(text);
    if (n === undefined) ids.set(text, (n = ids.size));
    return n;
  };
  if (typeof o.gate === "number")
    out.push({
      kind: "concurrency",
      label: `${name} gate of ${o.gate}`,
      limit: o.gate,
      exact: true,
      reason: `${name}/gate`,
    });
  // Past maxKeys, idle keys' state is dropped and a returning key starts afresh: no bound then.
  if (keys > (o.maxKeys ?? 100_000)) return out;
  for (const l of o.limits ?? []) {
    const kind = l.kind ?? "bucket";
    const label = `${name} limit ${l.name} (${kind}, ${l.quota} per ${l.window} ms per key)`;
    const base = { label, scope, reason: `${name}/rate` } as const;
    if (kind === "bucket" || kind === "gcra")
      out.push({ ...base, kind: "rate", rate: (l.quota * 1_000) / l.window, burst: l.quota, exact: true });
    else if (kind === "sliding") out.push({ ...base, kind: "window", quota: l.quota, window: l.window, exact: true });
    else out.push({ ...base, kind: "window", quota: 2 * l.quota, window: l.window });
  }
  return out;
}
