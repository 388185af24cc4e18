// A stage: one policy as the pipeline runs it, for the client guard, the server admit, the
// simulator and otel alike. Each policy is one module in `stages/` holding its parser (an
// instance, or fields over a preset, checked once and named by the path the user typed) and its
// stage (peek, enter, settle, release). See `pipeline.ts` for the order they run in.
import type { Random } from "@tideward/time";
import type { Outcome } from "./events";
import type { Field } from "./field";

/**
 * What one call's attempt, or one request, asks of the stages: read by them, and written by the
 * one that refuses. One object an attempt (the guard's `Pass`) or a scratch one reused (admit,
 * the simulator), so asking allocates nothing.
 */
export interface Ask {
  /** Units it weighs, a whole number from 1 (a guard's attempt weighs 1). */
  cost: number;
  /** Whether it is a hedge, started while another attempt of its call is in flight. */
  hedge: boolean;
  /** Whether it is a fresh call's first attempt. */
  first: boolean;
  /**
   * How important it is: a level's number (0 the most important) or name, read by the stages
   * that judge by priority (a concurrency limit, a shedder with levels); `undefined` for the
   * holder's own (a guard's `priority` option, else the levels' fallback). A guard's call
   * carries its `priority` function's answer, read by the same rule as admit's.
   */
  readonly priority?: number | string;
  /** The client's identity, for the stages kept per key; "" or left out for none. */
  key?: string;
  /**
   * Written by a stage as it refuses: milliseconds until it could admit (0 when it does not know,
   * `Infinity` when it never will).
   */
  retryAfter: number;
}

/**
 * A figure a stage reports about itself at any time, as a gauge `@tideward/otel` reads when its
 * meter collects (otel's table of instruments holds each one's kind, unit and description).
 */
export interface Reading {
  /** The metric's OpenTelemetry name: `"tideward.breaker.drop_ratio"`. */
  readonly metric: string;
  /** The figure at `now` (ms); not finite when there is none yet (it is then left out). */
  read(now: number): number;
}

/**
 * One policy in the pipeline. Every method but `enter` may be left out where the policy has
 * nothing to do: a bucket's token is spent once and never settled, a breaker's permit is not given
 * back when a later stage refuses.
 *
 * The pipeline asks each stage in turn. A stage spent `last` is asked with `peek` at its place
 * and entered once every other stage has let the call through; any other is entered at its place.
 * A stage that refuses writes the wait it knows into `ask.retryAfter`.
 */
export interface Stage<T = unknown> {
  /**
   * Which policy refused, as a refusal names it: `"rate"`, `"gate"`, `"shed"`, `"breaker"`. Read
   * right after `enter` or `peek` refused: a stage with more than one reason (the concurrency
   * limit: `"limit"` or `"reserved"`) names the reason of its latest refusal here.
   */
  readonly kind: string;
  /**
   * The HTTP status of a server's refusal by it, read right after it refused (as `kind`): 429, a
   * client over its quota (with the wait it wrote and the RateLimit fields of the stages asked);
   * 503, short of capacity (with admit's `busyRetryAfter`). @defaultValue 503
   */
  readonly status?: 429 | 503;
  /** Of a stage refusing with 429: the names of its policies the refused request went over. */
  readonly violated?: readonly string[];
  /** Its `RateLimit-Policy` and `RateLimit` fields as its latest ask left them, if it reports any. */
  fields?(): readonly Field[];
  /** Whether a policy of its latest ask has a tenth of its quota or less left (admit's `fields: "low"`). */
  low?(): boolean;
  /** Whether it is peeked at its place and spent once every other stage has admitted (it has `peek`). */
  readonly last?: boolean;
  /** Whether `enter` would admit at `now`, spending nothing: for a stage spent last. */
  peek?(now: number, ask: Ask): boolean;
  /**
   * Admits at `now` (ms): what the call holds of this stage until it settles (anything but
   * `undefined`), or `undefined` to refuse, the wait written into `ask.retryAfter`.
   */
  enter(now: number, ask: Ask): T | undefined;
  /**
   * `enter` for a stage that may answer later (a store over the network), at a waiting holder's
   * last place: hands `go` the token (`late` once the store answered), `fail` what is thrown.
   */
  enterThen?<R>(
    now: number,
    ask: Ask,
    go: (token: T | undefined, late: boolean) => R,
    fail: (error: unknown) => R,
  ): R | Promise<R>;
  /** The admitted call ended at `now` (ms): how it went. */
  settle?(token: T, now: number, outcome: Outcome): void;
  /** The admitted call never ran (a later stage refused it): give back what it holds. */
  release?(token: T, now: number): void;
  /** Figures it reports about itself. */
  readonly readings?: readonly Reading[];
}

/** What a stage is built with, from the guard or admission that holds it (or a simulated run). */
export interface Host {
  /** Where it runs: a client guard's attempts, or a server's requests. */
  readonly side: Side;
  /** How errors name the holder: `"guard"`, `"admit"`, `"guardFetch"`. */
  readonly owner: string;
  /** The clock's reading at construction (ms): where windows open. */
  readonly now: number;
  /** Draws in [0, 1), for the stages that roll (a breaker while it throttles). */
  readonly random: Random;
  /** Whether the holder retries or hedges (a retry budget is then built unless turned off). */
  readonly retrying: boolean;
}

/** Where a stage stands: among a client guard's attempts, or a server's requests. */
export type Side = "client" | "server";

/**
 * One policy's module as a guard and an admission read it: the refusal it names, the options it
 * owns, where it stands in each, and how it reads its options.
 *
 * @typeParam O - the options it owns, as users see them (each field with its TSDoc): they join the
 *   options of each side it stands on (`ClientStageOptions`, `ServerStageOptions`)
 * @typeParam S - the sides it stands on, which its `place` names and no other; none for a module
 *   of either side
 */
export interface StageDef<O extends object = object, S extends Side = never> {
  /** The refusal kind its stage names. */
  readonly kind: string;
  /**
   * Every kind its stage's refusals name, when there is more than one (the concurrency limit's
   * `["limit", "reserved"]`): a holder that names refusals by policy adds the kind to the name.
   * @defaultValue `[kind]`
   */
  readonly reasons?: readonly string[];
  /** The options it owns, its own first: `["shedder", "load"]` (each a key of `O`). */
  readonly options: readonly string[];
  /**
   * Where it stands on each side, asked in ascending order: the client guard's attempts, the
   * server's requests. Left out on a side where it is not offered.
   */
  readonly place: [S] extends [never]
    ? Partial<Record<Side, number>>
    : Record<S, number> & Partial<Record<Exclude<Side, S>, undefined>>;
  /** Type only, never set (as Standard Schema's `~types`): its options' type, read by each side's. */
  "~options"?: O;
  /**
   * Reads its options from `o` (the holder's whole options record, read once), checking them and
   * naming `host.owner` and the option in every error: its stage, or `undefined` when not given.
   */
  parse(o: Readonly<Record<string, unknown>>, host: Host): Stage | undefined;
}

/** The options of the stage modules `D` (a union) on side `S`, intersected: each keeps its TSDoc. */
export type OptionsOn<D, S extends Side> = (
  D extends StageDef<infer O> & { place: Record<S, number> } ? (o: O) => void : never
) extends (o: infer I) => void
  ? I
  : never;
