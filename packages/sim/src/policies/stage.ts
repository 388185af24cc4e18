// A stage of the guard's pipeline as a simulated policy: the one adapter every policy the guard
// composes runs through in the simulator, so a simulated breaker, shedder or gate decides by the
// very code a guard's does (`@tideward/guard`'s stages), not by a wrapper of the simulator's own.
import { STAGES } from "@tideward/guard/internal";
import type { Stage, StageDef } from "@tideward/guard/internal";
import { check } from "@tideward/time/internal";
import type { Adapter, PolicyContext, PolicySpec } from "../policy";
import { nameOf } from "./name";

/** What an adapter adds to its stage: its envelopes, its count and its figures. */
export type Extras = Pick<Adapter, "envelopes" | "held" | "stats">;

/** Told after each admission (`refused` when refused), settlement and release of a stage at `now` (ms). */
type Observe = (now: number, refused: boolean) => void;

/** A policy's own stage as the chain runs it, and where it notes the latest clock reading it was asked at. */
export interface OwnStage {
  readonly stage: Stage;
  readonly last: Float64Array;
  /** Whether the chain may run the stage bare (see {@link StageRun.direct}). */
  readonly direct: boolean;
}

// The stage behind each adapter made by `stageAdapter`: the chain runs it in the guard's pipeline
// directly, not through the adapter's methods (those stay for an adapter driven by hand).
const owned = new WeakMap<Adapter, OwnStage>();

/** The stage `adapter` was made from by {@link stageAdapter}, if it was. */
export function ownStage(adapter: Adapter): OwnStage | undefined {
  return owned.get(adapter);
}

/** `stage` told to `observe` as it is asked: itself, when nothing observes it. */
function heard(stage: Stage, observe: Observe | undefined): Stage {
  if (observe === undefined) return stage;
  const settle = stage.settle?.bind(stage);
  const release = stage.release?.bind(stage);
  return {
    // Read at each refusal: a stage with more than one reason names its latest here.
    get kind() {
      return stage.kind;
    },
    enter(now, ask) {
      const token = stage.enter(now, ask);
      try {
        observe(now, token === undefined);
      } catch (error) {
        // The run stops with the error; a limiter shared beyond it keeps no place for this call.
        if (token !== undefined) release?.(token, now);
        throw error;
      }
      return token;
    },
    settle(token, now, outcome) {
      settle?.(token, now, outcome);
      observe(now, false);
    },
    release(token, now) {
      release?.(token, now);
      observe(now, false);
    },
    ...(stage.readings === undefined ? {} : { readings: stage.readings }),
  };
}

/**
 * The reason of each refusal kind of `stage`, for a policy named `name`: the name; for a stage of
 * several reasons, `name/kind` (`"gradient2/reserved"`), or the name alone for the kind it is
 * named as (a policy named `"limit"` refuses `"limit"` or `"limit/reserved"`).
 */
function reasonsOf(stage: Stage, name: string): ((kind: string) => string) | undefined {
  const kinds = STAGES.find((d) => d.kind === stage.kind)?.reasons;
  if (kinds === undefined || kinds.length < 2) return undefined;
  // Made once: a refusal's reason allocates nothing.
  const named: Record<string, string> = {};
  for (const k of kinds) named[k] = k === name ? name : `${name}/${k}`;
  return (kind) => named[kind] ?? `${name}/${kind}`;
}

/**
 * `stage` as the simulator drives a policy, named `name`, on `side`. The chain enters the stage at
 * the policy's place in its pipeline (it keeps its own order, and spends nothing last), settles
 * it (see `Chain.settle`), and releases it on a later policy's refusal. A refusal's reason is
 * `name`, or `name/kind` for a stage with several (see `reasonsOf`). `last`
 * holds the latest clock reading (ms) it was asked at, for the figures and the readings made
 * between admissions.
 */
export function stageAdapter(
  stage: Stage,
  name: string,
  side: "client" | "server",
  last: Float64Array,
  extras: Extras,
  keyName: (key: number) => string,
  observe?: Observe,
  direct = false,
): Adapter {
  const run = heard(stage, observe);
  // One scratch ask an adapter: asking allocates nothing.
  const ask: {
    cost: number;
    hedge: boolean;
    first: boolean;
    retryAfter: number;
    priority: number | string | undefined;
    key: string;
  } = {
    cost: 1,
    hedge: false,
    first: false,
    retryAfter: 0,
    priority: undefined,
    key: "",
  };
  const settle = run.settle?.bind(run);
  const release = run.release?.bind(run);
  const reasons = reasonsOf(stage, name);
  const adapter: Adapter = {
    name,
    side,
    get reason() {
      return reasons === undefined ? name : reasons(stage.kind);
    },
    ...extras,
    admit: (now, key, cost, priority) => {
      last[0] = now;
      ask.cost = cost;
      ask.priority = priority;
      ask.key = keyName(key);
      return run.enter(now, ask);
    },
    settle: settle === undefined ? () => {} : (token, now, ok) => settle(token, now, ok ? "success" : "failure"),
    ...(release === undefined ? {} : { release: (token: unknown, now: number) => release(token, now) }),
  };
  owned.set(adapter, { stage: run, last, direct: direct && observe === undefined });
  return adapter;
}

/** What a stage policy is built from for one run: the stage's options as the guard takes them, and what the adapter adds. */
export interface StageRun {
  /** The stage's options (`{ breaker }`, `{ shedder, load }`, `{ limit }`). */
  readonly options: Readonly<Record<string, unknown>>;
  /** Its envelopes, count and figures. @defaultValue its readings, by metric name, as figures */
  readonly extras?: Extras;
  /** What is told as it is asked. @defaultValue nothing */
  readonly observe?: Observe;
  /**
   * Whether the stage never throws and reads nothing as it is asked but the ask (not `last`):
   * the chain then runs it bare in its pipeline, with no adapter of its own around it, and notes
   * `last` once the pipeline has decided (a tideward breaker or bucket the policy built itself).
   * @defaultValue false
   */
  readonly direct?: boolean;
}

/**
 * The one shape of every policy that is a stage of the guard's: named `name`, on `side`, its stage
 * of kind `kind` built for each run from what `build(context, last)` gives (`last`: the latest
 * clock reading, ms, it was asked at, which the chain keeps). `owner` names it in the stage's errors.
 */
export function stagePolicy(
  kind: string,
  name: string,
  side: "client" | "server",
  owner: string,
  build: (context: PolicyContext, last: Float64Array) => StageRun,
): PolicySpec {
  return {
    name,
    create(context: PolicyContext): Adapter {
      const last = new Float64Array([context.start]);
      const made = build(context, last);
      // Built by its own module from its options as the guard takes them, rolling the policy's own stream.
      const def = STAGES.find((d) => d.kind === kind && d.place[side] !== undefined) as StageDef;
      const s = def.parse(made.options, { side, owner, now: context.start, random: context.random, retrying: false });
      if (s === undefined) throw new RangeError(`${owner}: its stage was not built`);
      const extras = made.extras ?? { stats: readingsOf(s, last) };
      return stageAdapter(s, name, side, last, extras, context.keyName, made.observe, made.direct);
    },
  };
}

/** A stage's readings at the latest clock reading it was asked at, by metric name. */
function readingsOf(s: Stage, last: Float64Array): () => Record<string, number> {
  const readings = s.readings ?? [];
  return () => {
    const out: Record<string, number> = {};
    for (const r of readings) out[r.metric] = r.read(last[0]);
    return out;
  };
}

/** Options of {@link stage}. */
export interface StagePolicyOptions {
  /** Where it sits (`"rate"`: the client's bucket, the server's per-key limits). @defaultValue the server, when the stage stands there; else the client */
  readonly side?: "client" | "server";
  /** How results name it and its refusals (of a stage of several reasons, `name/kind`: `"limit/reserved"`). @defaultValue the stage's kind */
  readonly name?: string;
  /** Told after each admission (`refused`), settlement and release at `now` (ms): to follow what the run's stage holds. @defaultValue nothing */
  readonly observe?: (now: number, refused: boolean) => void;
}

/**
 * Any stage of `@tideward/guard`'s pipeline as a policy: the stage of kind `kind` (`"limit"`,
 * `"shed"`, `"gate"`, `"breaker"`, `"rate"`, …: whatever the guard's stages list holds), built
 * for each run by the stage's own module from `options(context)`, its options as a guard or
 * `admit` takes them (`{ limit: new Limiter(aimd()) }`): a function, so that no two runs share an
 * instance. A new stage of the guard's is a policy here with no code of its own. A call asks it
 * with its key's text and priority, and settles it as a guard's attempt (client) or admit's
 * verdict (server) would. Its figures are its readings (by metric
 * name) at the latest clock reading it was asked at.
 */
export function stage(
  kind: string,
  options: (context: PolicyContext) => Readonly<Record<string, unknown>>,
  more: StagePolicyOptions = {},
): PolicySpec {
  const o = check.options(more, ["side", "name", "observe"], "policy.stage");
  const def = STAGES.find((d) => d.kind === kind);
  if (def === undefined)
    throw new RangeError(
      `policy.stage kind must be one of ${[...new Set(STAGES.map((d) => JSON.stringify(d.kind)))].join(", ")}, got ${check.describe(kind)}`,
    );
  const side = check.or(o.side, def.place.server === undefined ? "client" : "server");
  if (side !== "client" && side !== "server")
    throw new TypeError(`policy.stage side must be "client" or "server", got ${check.describe(side)}`);
  // A kind may name a stage a side (a client's bucket and a server's per-key limits refuse as "rate").
  if (!STAGES.some((d) => d.kind === kind && d.place[side] !== undefined))
    throw new RangeError(`policy.stage side: a stage of kind ${JSON.stringify(kind)} stands on no ${side} side`);
  check.fn(options, "policy.stage options");
  const observe = o.observe === undefined ? undefined : check.fn<Observe>(o.observe, "policy.stage observe");
  const name = nameOf(o.name, kind, "policy.stage name");
  return stagePolicy(kind, name, side, "policy.stage", (context) => ({ options: options(context), observe }));
}
