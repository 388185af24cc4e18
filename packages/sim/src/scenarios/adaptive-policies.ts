// The adaptive concurrency limits of `@tideward/concurrency`, and the shedder judging calls by
// priority, as simulator policies, so the scenarios can run them now.
//
// Temporary: once the pipeline of stages lands, an adaptive limit is one stage file that the
// guard, `admit`, otel and the simulator all run, and the generic stage wrapper replaces this
// file. What that wrapper must hand a stage here is the call's priority: the run reads it from
// the traffic's keys (`traffic.keys.priority(key)`, see `traffic.priority`) and passes it with
// each admission; until then the scenarios hand these policies that function themselves.
import { AimdLimit, FixedLimit, Gradient2Limit, Limiter, Priorities, VegasLimit } from "@tideward/concurrency";
import type { Aimd, Gradient2, Limit, Priority, Refusal, SampleWindow, Token, Vegas } from "@tideward/concurrency";
import { Shedder } from "@tideward/shedder";
import type { Shed, Ticket } from "@tideward/shedder";
import { check } from "@tideward/time/internal";
import type { Adapter, PolicyContext, PolicySpec } from "../policy";
import type { LimitTrace } from "./limit-trace";

/** The three adaptive algorithms, and a fixed limit (a static gate with the same priorities). */
export type AdaptiveKind = "aimd" | "vegas" | "gradient2" | "fixed";

/** Each algorithm's name as a scenario shows it. */
export const ADAPTIVE_LABELS: Readonly<Record<AdaptiveKind, string>> = Object.freeze({
  gradient2: "Gradient2",
  vegas: "Vegas",
  aimd: "AIMD",
  fixed: "fixed limit",
});

/** Options of {@link adaptiveLimit}. */
export interface AdaptiveOptions {
  /** Which algorithm moves the limit. */
  readonly kind: AdaptiveKind;
  /**
   * Fields laid over the algorithm's preset; for `"fixed"`, `{ limit }` (places, required).
   * @defaultValue the preset (Vegas's `seed` drawn from the run's seed)
   */
  readonly policy?: Partial<Aimd> | Partial<Vegas> | Partial<Gradient2> | { readonly limit: number };
  /** The levels calls are judged by; left out, every call alike. @defaultValue one level */
  readonly priorities?: Priorities;
  /** Each key's priority (a traffic's `keys.priority`); left out, every call gives none. */
  readonly priority?: (key: number) => Priority | undefined;
  /** How results name it; refusals are `${name}/limit` and `${name}/reserved`. @defaultValue the algorithm's kind */
  readonly name?: string;
  /** Where to note the limit over the run, and the refusals made while it probed (one trace a run). @defaultValue none */
  readonly trace?: LimitTrace;
  /** A sample window (see `Limiter`'s `window`), or none: a sample a call. @defaultValue none */
  readonly window?: Partial<SampleWindow>;
}

function algorithm(kind: AdaptiveKind, policy: object | undefined, context: PolicyContext | undefined): Limit {
  switch (kind) {
    case "aimd":
      return new AimdLimit(policy);
    case "vegas":
      // Each run's own probe jitter, drawn from its seed, as a fleet's instances would each have theirs.
      return new VegasLimit({
        ...(context === undefined ? {} : { seed: context.random() }),
        ...(policy as Partial<Vegas> | undefined),
      });
    case "gradient2":
      return new Gradient2Limit(policy);
    case "fixed":
      return new FixedLimit((policy as { limit?: number } | undefined)?.limit as number);
  }
}

/**
 * An adaptive concurrency limit on the server: a {@link Limiter} over AIMD, Vegas or Gradient2.
 * Each attempt that reaches the server asks it for a place at its key's priority; the place is
 * passed with the round trip when the backend answers a success, dropped when it answers a
 * failure (a full queue included) or drops it unserved because its caller gave up while it
 * waited (a timeout), and ignored when a policy after it refused the attempt.
 */
export function adaptiveLimit(options: AdaptiveOptions): PolicySpec {
  const o = check.options(
    options,
    ["kind", "policy", "priorities", "priority", "name", "trace", "window"],
    "adaptiveLimit",
  );
  const kind = o.kind;
  if (kind !== "aimd" && kind !== "vegas" && kind !== "gradient2" && kind !== "fixed")
    throw new TypeError(
      `adaptiveLimit kind must be "aimd", "vegas", "gradient2" or "fixed", got ${check.describe(kind)}`,
    );
  // Checked once here: a policy the algorithm refuses fails when the scenario is defined, not mid-run.
  algorithm(kind, o.policy, undefined);
  const priorities = o.priorities;
  if (priorities !== undefined && !(priorities instanceof Priorities))
    throw new TypeError(`adaptiveLimit priorities must be a Priorities, got ${check.describe(priorities)}`);
  const priority = o.priority;
  if (priority !== undefined && typeof priority !== "function")
    throw new TypeError(`adaptiveLimit priority must be a function of the key, got ${check.describe(priority)}`);
  const name = check.or(o.name, kind);
  const trace = o.trace;
  const reasons = { limit: `${name}/limit`, reserved: `${name}/reserved` } as const;
  return {
    name,
    create(context: PolicyContext): Adapter {
      const limiter = new Limiter(algorithm(kind, o.policy, context), {
        ...(priorities === undefined ? {} : { priorities }),
        ...(o.window === undefined ? {} : { window: o.window }),
        now: context.start,
      });
      const a = limiter.algorithm;
      const max = a instanceof FixedLimit ? a.limit : a.policy.max;
      const adapter: Adapter & { reason: string } = {
        name,
        side: "server",
        reason: reasons.limit,
        envelopes: [{ kind: "concurrency", label: `${name} (at most its max, ${max})`, limit: max }],
        admit: (now, key) => {
          const t: Token | Refusal = limiter.acquire(now, priority === undefined ? undefined : priority(key));
          trace?.note(now, limiter.limit);
          if (t.ok) return t;
          if (trace !== undefined && limiter.algorithm.probing) trace.refusedProbing(now);
          adapter.reason = reasons[t.reason];
          return undefined;
        },
        settle: (token, now, ok) => {
          if (ok) (token as Token).pass(now);
          else (token as Token).drop(now);
          trace?.note(now, limiter.limit);
        },
        release: (token, now) => {
          const t = token as Token;
          // Released later than it was let in: the backend dropped it unserved, having held it
          // past its caller's timeout — a timeout, which the limit must learn of. Released at the
          // instant it was let in: a policy after this one refused it, which says nothing.
          if (now > t.start) t.drop(now);
          else t.ignore();
          trace?.note(now, limiter.limit);
        },
        held: () => limiter.flying,
        stats: () => ({ limit: limiter.limit, flying: limiter.flying }),
      };
      return adapter;
    },
  };
}

/** Options of {@link prioritisedShedder}. */
export interface PrioritisedShedderOptions {
  /** Fields laid over the `shed` preset. @defaultValue the preset */
  readonly policy?: Partial<Shed>;
  /** The levels calls are judged by. */
  readonly priorities: Priorities;
  /** Each key's priority (a traffic's `keys.priority`). */
  readonly priority: (key: number) => Priority | undefined;
  /** @defaultValue "shedder" */
  readonly name?: string;
}

/**
 * `@tideward/shedder`'s `Shedder` on the server's CPU, as `policy.shedder` runs it, judging each
 * attempt at its key's priority: when hot and full, the least important are refused first.
 */
export function prioritisedShedder(options: PrioritisedShedderOptions): PolicySpec {
  const o = check.options(options, ["policy", "priorities", "priority", "name"], "prioritisedShedder");
  new Shedder(o.policy);
  if (!(o.priorities instanceof Priorities))
    throw new TypeError(`prioritisedShedder priorities must be a Priorities, got ${check.describe(o.priorities)}`);
  if (typeof o.priority !== "function")
    throw new TypeError(`prioritisedShedder priority must be a function of the key, got ${check.describe(o.priority)}`);
  const { priorities, priority, policy } = o;
  const name = check.or(o.name, "shedder");
  return {
    name,
    create(context: PolicyContext): Adapter {
      const s = new Shedder(policy, context.start, priorities);
      return {
        name,
        side: "server",
        reason: name,
        admit: (now, key) => s.allow(now, context.cpu(now), priority(key)),
        settle: (ticket, now, ok) => {
          if (ok) (ticket as Ticket).pass(now);
          else (ticket as Ticket).fail();
        },
        release: (ticket) => (ticket as Ticket).fail(),
        held: () => s.flying,
      };
    },
  };
}
