// The adaptive concurrency limits of `@tideward/concurrency` as the scenarios run them: the guard's
// own limit stage as `policy.stage("limit", …)` runs it (the shedder judging by priority is
// `policy.shedder` with levels). What is left here is what a scenario chooses: the algorithm by
// name (Vegas seeded from the run), the limit's envelope, and the trace of the limit over the run.
// Each call's priority is the run's (its key's, from the traffic), given to the stage in the
// chain's ask.
import { AimdLimit, FixedLimit, Gradient2Limit, Limiter, Priorities, VegasLimit } from "@tideward/concurrency";
import type { Aimd, Gradient2, Limit, SampleWindow, Vegas } from "@tideward/concurrency";
import { check } from "@tideward/time/internal";
import { stage } from "../policies/stage";
import type { Adapter, Envelope, PolicyContext, PolicySpec } from "../policy";
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
  /** The levels calls are judged by, each at its key's priority (a traffic's `keys.priority`); left out, every call alike. @defaultValue one level */
  readonly priorities?: Priorities;
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
 * An adaptive concurrency limit on the server: `policy.stage("limit", …)` over a {@link Limiter}
 * of AIMD, Vegas or Gradient2 made for each run. Each attempt that reaches the server asks it for
 * a place at its key's priority; the place is passed with the round trip when the backend answers
 * a success, and ignored otherwise (as admit's limit is): when it answers a failure (a full queue
 * included), drops the call unserved because its caller gave up, or a policy after the limit
 * refused it. With invariants, the simulator checks its count of places and that it stays under
 * its max.
 */
export function adaptiveLimit(options: AdaptiveOptions): PolicySpec {
  const o = check.options(options, ["kind", "policy", "priorities", "name", "trace", "window"], "adaptiveLimit");
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
  const name = check.or(o.name, kind);
  const trace = o.trace;
  // The limiter of the run being made (runs are made and run one at a time).
  let limiter: Limiter | undefined;
  const spec = stage(
    "limit",
    (context) => {
      limiter = new Limiter(algorithm(kind, o.policy, context), {
        ...(priorities === undefined ? {} : { priorities }),
        ...(o.window === undefined ? {} : { window: o.window }),
        now: context.start,
      });
      return { limit: limiter };
    },
    {
      name,
      side: "server",
      ...(trace === undefined
        ? {}
        : {
            observe: (now: number, refused: boolean) => {
              const l = limiter as Limiter;
              trace.note(now, l.limit);
              if (refused && l.algorithm.probing) trace.refusedProbing(now);
            },
          }),
    },
  );
  return {
    name,
    create(context: PolicyContext): Adapter {
      const adapter = spec.create(context);
      const l = limiter as Limiter;
      const a = l.algorithm;
      const max = a instanceof FixedLimit ? a.limit : a.policy.max;
      // What the simulator checks with invariants: its count of places, and its max.
      const envelopes: Envelope[] = [{ kind: "concurrency", label: `${name} (at most its max, ${max})`, limit: max }];
      return Object.assign(adapter, { envelopes, held: () => l.flying });
    },
  };
}
