// The adaptive concurrency limits of `@tideward/concurrency`, and the shedder judging calls by
// priority, as the scenarios run them: the guard's own limit and shedder stages through the
// simulator's stage adapter (`policies/stage.ts`), the same code `policy.stage("limit", …)` and
// `policy.shedder` run. What is left here is what a scenario chooses: the algorithm by name (Vegas
// seeded from the run), the limit's envelope and figures, and the trace of the limit over the run. Each call's priority is the run's (its key's, from the traffic),
// given to the stage in the chain's ask.
import { AimdLimit, FixedLimit, Gradient2Limit, Limiter, Priorities, VegasLimit } from "@tideward/concurrency";
import type { Aimd, Gradient2, Limit, SampleWindow, Vegas } from "@tideward/concurrency";
import { Shedder } from "@tideward/shedder";
import type { Shed } from "@tideward/shedder";
import { check } from "@tideward/time/internal";
import { stagePolicy } from "../policies/stage";
import type { PolicyContext, PolicySpec } from "../policy";
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
 * An adaptive concurrency limit on the server: the guard's limit stage over a {@link Limiter} of
 * AIMD, Vegas or Gradient2. Each attempt that reaches the server asks it for a place at its key's
 * priority; the place is passed with the round trip when the backend answers a success, and
 * ignored otherwise (as admit's limit is): when it answers a failure (a full queue included),
 * drops the call unserved because its caller gave up, or a policy after the limit refused it.
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
  return stagePolicy("limit", name, "server", name, (context) => {
    const limiter = new Limiter(algorithm(kind, o.policy, context), {
      ...(priorities === undefined ? {} : { priorities }),
      ...(o.window === undefined ? {} : { window: o.window }),
      now: context.start,
    });
    const a = limiter.algorithm;
    const max = a instanceof FixedLimit ? a.limit : a.policy.max;
    return {
      options: { limit: limiter },
      extras: {
        envelopes: [{ kind: "concurrency", label: `${name} (at most its max, ${max})`, limit: max }],
        held: () => limiter.flying,
        stats: () => ({ limit: limiter.limit, flying: limiter.flying }),
      },
      ...(trace === undefined
        ? {}
        : {
            hearing: {
              observe: (now: number, refused: boolean) => {
                trace.note(now, limiter.limit);
                if (refused && a.probing) trace.refusedProbing(now);
              },
            },
          }),
    };
  });
}

/** Options of {@link prioritisedShedder}. */
export interface PrioritisedShedderOptions {
  /** Fields laid over the `shed` preset. @defaultValue the preset */
  readonly policy?: Partial<Shed>;
  /** The levels calls are judged by, each at its key's priority (a traffic's `keys.priority`). */
  readonly priorities: Priorities;
  /** @defaultValue "shedder" */
  readonly name?: string;
}

/**
 * `@tideward/shedder`'s `Shedder` on the server's CPU, as `policy.shedder` runs it (the guard's
 * shedder stage), with levels: each attempt is judged at its key's priority, and when hot and
 * full the least important are refused first.
 */
export function prioritisedShedder(options: PrioritisedShedderOptions): PolicySpec {
  const o = check.options(options, ["policy", "priorities", "name"], "prioritisedShedder");
  new Shedder(o.policy);
  if (!(o.priorities instanceof Priorities))
    throw new TypeError(`prioritisedShedder priorities must be a Priorities, got ${check.describe(o.priorities)}`);
  const { priorities, policy } = o;
  const name = check.or(o.name, "shedder");
  return stagePolicy("shed", name, "server", name, (context, last) => {
    const s = new Shedder(policy, context.start, priorities);
    // The stage reads the load as it admits, after the chain has noted the reading.
    return { options: { shedder: s, load: (): number => context.cpu(last[0]) }, extras: { held: () => s.flying } };
  });
}
