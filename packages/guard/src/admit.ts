import type { Limiter, Priority, Queue } from "@tideward/concurrency";
import type { Gate } from "@tideward/limiters";
import type { Shedder } from "@tideward/shedder";
import { systemClock, systemRandom } from "@tideward/time";
import { check } from "@tideward/time/internal";
import type { Clock, Span } from "@tideward/time";
import type { KeyedLimits, LimitOverride } from "./keyed-limits";
import { MAX_KEY, wholeCost } from "./limits";
import type { Limit } from "./limits";
import { PROBLEM_JSON, problemBody } from "./problem";
import { seconds } from "./ratelimit-fields";
import { sfInteger } from "./structured";
import type { RefusalKind } from "./refusal";
import { Pipeline } from "./pipeline";
import type { Held } from "./pipeline";
import type { Ask, Stage } from "./stage";
import { stagesOf } from "./stages/index";
import type { ServerStageOptions } from "./stages/index";
import { GateStage } from "./stages/gate";
import { KeyedStage } from "./stages/keyed";
import { LimitStage } from "./stages/limit";
import { QuotaStage, parseBusy } from "./stages/quota";
import { ShedderStage } from "./stages/shedder";
import { realTimers } from "./timers";
import { NO_FIELDS } from "./field";
import { Answer } from "./verdict";
import { Line } from "./waiting";
import type { Entry } from "./waiting";
import type { Field, Verdict } from "./verdict";

export type { Field, Verdict } from "./verdict";
export type { QuotaAdmission } from "./quota-admission";
export type { Actual, ReserveOption, Settling } from "./quota-reservation";

/**
 * Options of {@link admit}; every policy is optional. Its policies' options are its stages'
 * ({@link ServerStageOptions}), the rest its own.
 */
export interface AdmitOptions extends ServerStageOptions {
  /**
   * A line to wait in for a place under {@link LimitOption.limit}, instead of being refused at
   * once: a `Queue` of `@tideward/concurrency` (CoDel with adaptive LIFO: `new Queue({ target: 5,
   * interval: 100 }, { priorities })`, with the limiter's priorities). A request waits at most the
   * queue's `interval` (ms), its `target` once the queue stands, and holds nothing while it waits;
   * its verdict is then a promise. A request the queue gives up on is refused as the limit refused
   * it; one whose signal aborts (see {@link Admission.check}) is taken out, its promise rejected
   * with the signal's reason. Needs a `limit`. @defaultValue none: refused at once
   */
  readonly wait?: Queue<unknown>;
  /** The `Retry-After` a shedder's or a gate's refusal carries, in milliseconds. @defaultValue 1000 */
  readonly busyRetryAfter?: Span;
  /** Refusals carry an RFC 9457 `application/problem+json` body. @defaultValue false */
  readonly problem?: boolean;
  /**
   * Which admitted responses carry the `RateLimit-Policy` and `RateLimit` fields (refusals always
   * do): `"always"`; `"low"`, only when some policy has a tenth of its quota or less left (the
   * draft's advice to an implementer concerned with performance; the README's "Speed" has what
   * the fields cost); or `"refused"`, never on admitted ones. @defaultValue "always"
   */
  readonly fields?: "always" | "low" | "refused";
  /** Reads the time, in milliseconds on the Unix-epoch scale. @defaultValue `systemClock` */
  readonly clock?: Clock;
}

/** The options admit reads itself; each stage reads its own (see `stages/`). */
const OWN_OPTIONS = [
  "wait",
  "busyRetryAfter",
  "problem",
  "fields",
  "clock",
] as const satisfies readonly (keyof AdmitOptions)[];

// Every option admit takes, as its check of misspelt names knows them: its stages' (in the order
// they are asked), then its own. The simulator's admission policy reads the list too, through the
// internal entry.
export const ADMIT_OPTIONS: readonly (keyof AdmitOptions)[] = [
  ...(stagesOf("server").flatMap((d) => d.options) as (keyof ServerStageOptions)[]),
  ...OWN_OPTIONS,
];

/** Each option named in one list above: what a field added without its name would break. */
type Named = (typeof OWN_OPTIONS)[number] | keyof ServerStageOptions;
const EVERY_OPTION_NAMED: [Exclude<keyof AdmitOptions, Named>] extends [never] ? true : never = true;
void EVERY_OPTION_NAMED;

/** The admission decision for one service: see {@link admit}. */
export interface Admission {
  /**
   * Decides one request from `key` costing `cost` units, before its handler runs. Synchronous
   * unless a quota store answers promises, or the request waits for a place (`wait`).
   * @param key - the client's identity (an address, an API key); "" when no limit is keyed
   * @param cost - units the request spends from each limit, a whole number from 1 @defaultValue 1
   * @param priority - how important the request is, to the concurrency limit and the shedder: a
   *   level's number (0 the most important) or name. One that is not a level of their priorities
   *   (an unknown name, a number out of range, NaN, a fraction) counts as the least important
   *   level, never as a more important one. @defaultValue the `priority` option, else the
   *   priorities' fallback level
   * @param signal - aborts a wait for a place: the request leaves the line holding nothing, and
   *   the promise rejects with the signal's reason (read only with `wait`)
   */
  check(key?: string, cost?: number, priority?: number | string, signal?: AbortSignal): Verdict | Promise<Verdict>;
  /** The gate, for reading `held`; `undefined` without one. */
  readonly gate: Gate | undefined;
  /** The concurrency limit, for reading `limit` and `flying`; `undefined` without one. */
  readonly limit: Limiter | undefined;
  /** Whether a request the limit refuses may wait for a place (`wait`): its verdict is then a promise. */
  readonly waits: boolean;
  /** How many requests wait for a place now. */
  readonly waiting: number;
  /** The shedder, for reading `flying`; `undefined` without one. */
  readonly shedder: Shedder | undefined;
  /** How many client keys have per-key limiter state. */
  readonly keys: number;
  /**
   * Replaces the per-key limit named `limit.name` at the clock's reading (`kind` left out is its
   * own, and cannot change): every key's state re-based, the fields advertising the new limit.
   * @throws TypeError/RangeError for bad input, naming it (nothing changes)
   */
  replaceLimit(limit: Limit): void;
  /** Removes the per-key limit named `name`, its state and overrides. @throws RangeError for a name admit lacks */
  removeLimit(name: string): void;
  /**
   * Gives `key` its own `quota` or `window` for the limit named `limit`, its state re-based; a
   * later `replaceLimit` keeps them. At most `maxKeys` keys have overrides.
   * @throws TypeError/RangeError for bad input, naming it (nothing changes)
   */
  setOverride(key: string, limit: string, fields: LimitOverride): void;
  /** Takes `key`'s override of `limit` away, its state re-based. @throws RangeError when it has none */
  removeOverride(key: string, limit: string): void;
}

type Peek = NonNullable<Stage["peek"]>;
type Fields = NonNullable<Stage["fields"]>;

/** The server side's stages, in the order they are asked. */
const SERVER_STAGES = stagesOf("server");

/** What a request holds when no stage keeps a token: nothing is ever written to it. */
const NO_HELD: Held = Object.freeze({ t0: undefined, t1: undefined, t2: undefined, t3: undefined });

/**
 * The queue `value` gives for admit's `wait`; `undefined` for none.
 * @throws TypeError naming `admit wait` for anything but a `Queue`, or a wait without a limit;
 *   RangeError for a queue whose levels are not the limit's
 */
function parseWait(value: unknown, stage: LimitStage | undefined): Queue<Entry> | undefined {
  if (value === undefined) return undefined;
  if (!(check.has(value, "push") && check.has(value, "dropped") && check.has(value, "due")))
    throw check.typeError(
      "admit wait",
      `must be a Queue of @tideward/concurrency (new Queue({ target: 5, interval: 100 })), got ${check.describe(value)}`,
      value,
    );
  if (stage === undefined)
    throw check.typeError("admit wait", "needs a limit: requests wait for a place under admit limit", undefined);
  const queue = value as Queue<Entry>;
  const ours = stage.limiter.priorities.names;
  const theirs = queue.priorities.names;
  if (ours.length !== theirs.length || ours.some((n, i) => n !== theirs[i]))
    throw check.rangeError(
      "admit wait",
      `must wait by the limit's priorities (${ours.join(", ")}), got a queue of ${theirs.join(", ")}: new Queue(policy, { priorities: limiter.priorities })`,
      value,
    );
  return queue;
}

/**
 * Admission in front of a server: decides each request before its handler runs, in a fixed order
 * — the shedder on a load signal, then the gate on concurrency, then the per-key limits or the
 * quota charge set — and answers a {@link Verdict}: allowed, or 503 (shedder, gate:
 * "temporary-reduced-capacity") or 429 (limit, quota: "quota-exceeded") with `Retry-After` in
 * whole seconds rounded up, and the `RateLimit-Policy` and `RateLimit` fields of
 * {@link RATELIMIT_DRAFT}, one list member per policy.
 *
 * The local, keyless checks come first, so a request refused for capacity spends none of its
 * client's quota; quota is charged only for requests that will run.
 *
 * @example
 * import type { Verdict } from "@tideward/guard";
 * const admission = admit({ gate: 64, limits: [{ name: "burst", quota: 100, window: 60_000 }] });
 * const handle = async () => "hello"; // the request's handler
 * const v = admission.check("203.0.113.7") as Verdict; // synchronous: no quota store
 * if (!v.allowed) throw new Error(`${v.status} ${v.body}`); // a server answers v.status, v.headers, v.body
 * try { await handle(); } finally { v.release(); }
 * v.status; // 200
 * @throws TypeError/RangeError at once for a bad option, naming it and the value
 */
export function admit(options?: AdmitOptions): Admission {
  const o = check.options(options, ADMIT_OPTIONS, "admit");
  const clock = o.clock ?? systemClock;
  if (typeof clock !== "function") throw new TypeError(`admit clock must be a function, got ${check.describe(clock)}`);
  const start = check.finite(clock(), "admit clock()");
  // Every policy (the shedder, the gate, the concurrency limit, the per-key limits, the quota
  // charge set), each read by its own module, asked in their order by one pipeline; a request
  // holds what they gave it until its verdict is released.
  const host = { side: "server", owner: "admit", now: start, random: systemRandom, retrying: false } as const;
  const stages: Stage[] = [];
  for (const def of SERVER_STAGES) {
    const stage = def.parse(o, host);
    if (stage !== undefined) stages.push(stage);
  }
  const pipeline = new Pipeline(stages, true);
  const holds = stages.some((st) => typeof st.settle === "function" || typeof st.release === "function");
  const shedder = stages.find((st): st is ShedderStage => st instanceof ShedderStage)?.shedder;
  const gate = stages.find((st): st is GateStage => st instanceof GateStage)?.gate;
  const limitStage = stages.find((st): st is LimitStage => st instanceof LimitStage);
  const keyed = stages.find((st): st is KeyedStage => st instanceof KeyedStage)?.limits;
  const quotaStage = stages.find((st): st is QuotaStage => st instanceof QuotaStage);
  // The places of the stages that report RateLimit fields.
  const reporting = stages.flatMap((st, i) => (typeof st.fields === "function" ? [i] : []));
  // A release reads the clock only for a stage that counts a response time (a gate's place needs none).
  const timed = stages.some((st) => typeof st.settle === "function" && !(st instanceof GateStage)) ? clock : undefined;
  const busy = parseBusy(o.busyRetryAfter, "admit");
  const problem = o.problem ?? false;
  if (typeof problem !== "boolean")
    throw new TypeError(`admit problem must be true or false, got ${check.describe(problem)}`);
  const show = o.fields ?? "always";
  if (show !== "always" && show !== "low" && show !== "refused")
    throw new TypeError(`admit fields must be "always", "low" or "refused", got ${check.describe(show)}`);
  const queue = parseWait(o.wait, limitStage);
  // The one request being asked of the stages when nothing answers later: they read it
  // synchronously, so one serves all (with a quota set, each request has its own).
  const ask: Ask & { priority: Priority | undefined } = {
    cost: 1,
    hedge: false,
    first: true,
    retryAfter: 0,
    priority: undefined,
    key: "",
  };
  const later = (): number => check.finite(clock(), "admit clock()");

  const refuse = (
    status: 429 | 503,
    reason: RefusalKind,
    retryAfter: number,
    fields: readonly Field[],
    violated: readonly string[],
  ): Verdict => {
    // A copy: the fields may be the ones admitted requests share.
    // Whole seconds as an Integer is written (no exponent, however long the wait).
    const all = retryAfter < Infinity ? [...fields, ["Retry-After", sfInteger(seconds(retryAfter))] as const] : fields;
    const body = problem
      ? problemBody(status, violated, retryAfter)
      : status === 429
        ? "Too Many Requests\n"
        : "Service Unavailable\n";
    return new Answer(
      false,
      status,
      all,
      reason,
      retryAfter,
      body,
      problem ? PROBLEM_JSON : "text/plain; charset=utf-8",
      undefined,
      undefined,
      clock,
    );
  };

  // The verdict of a request the pipeline decided at `now` (`late`: once a quota store answered):
  // its status and reason as the stage that refused gives them, and the RateLimit fields of the
  // stages that report them (the per-key limits, the quota set).
  const verdict = (
    admitted: boolean,
    late: boolean,
    now: number,
    a: Ask,
    held: Held | undefined,
    signal: AbortSignal | undefined,
    waits: boolean,
  ): Verdict | Promise<Verdict> => {
    if (!admitted) {
      const r = pipeline.refusedBy;
      const by = stages[r];
      const kind = by.kind as RefusalKind;
      if (by.status !== 429) {
        // Refused by the concurrency limit, a request may wait for a place, holding nothing.
        if (waits && line !== undefined && by === limitStage)
          return line.wait(now, a.key ?? "", a.cost, a.priority, limitStage.kind, signal);
        return refuse(503, kind, busy, [], []);
      }
      // Over a client's quota: the fields of each reporting stage the request reached (all of
      // them when it refused as it was spent last, after the quota set committed); one only
      // peeked at its place is looked at again, as it stands now.
      const spending = pipeline.refusedSpending;
      const fields: Field[] = [];
      for (const i of reporting) {
        if (i > r && !spending) break;
        const st = stages[i];
        if (i !== r && st.last === true && !(spending && i < r)) (st.peek as Peek)(late ? later() : now, a);
        fields.push(...(st.fields as Fields)());
      }
      return refuse(429, kind, a.retryAfter, fields, by.violated ?? []);
    }
    // With "low", every reporting stage's fields once any of them is low on quota.
    let fields: readonly Field[] = NO_FIELDS;
    let shown = show === "always";
    if (show === "low") for (const i of reporting) if ((shown = (stages[i].low as () => boolean)())) break;
    if (shown)
      for (const i of reporting)
        fields = fields === NO_FIELDS ? (stages[i].fields as Fields)() : [...fields, ...(stages[i].fields as Fields)()];
    return new Answer(
      true,
      200,
      fields,
      undefined,
      0,
      undefined,
      undefined,
      held,
      pipeline,
      timed,
      quotaStage?.reservation,
    );
  };

  const checkOne = (
    key: string,
    cost: number,
    priority: Priority | undefined,
    signal: AbortSignal | undefined,
    waits: boolean,
  ): Verdict | Promise<Verdict> => {
    const now = clock();
    if (typeof now !== "number" || now - now !== 0) check.finite(now, "admit clock()");
    const held: Held | undefined = holds ? { t0: undefined, t1: undefined, t2: undefined, t3: undefined } : undefined;
    if (quotaStage === undefined) {
      ask.key = key;
      ask.cost = cost;
      ask.priority = priority;
      const admitted = pipeline.admit(now, ask, held ?? NO_HELD);
      return verdict(admitted, false, now, ask, held, signal, waits);
    }
    // A store may answer later, when another request may have asked: this one's own.
    const a: Ask = { cost, hedge: false, first: true, retryAfter: 0, priority, key };
    // (A promise of a promise of a verdict, once a line was waited in, is a promise of the verdict.)
    return pipeline.admitThen(now, a, held ?? NO_HELD, later, (admitted, late) =>
      verdict(admitted, late, now, a, held, signal, waits),
    ) as Verdict | Promise<Verdict>;
  };
  const line =
    queue === undefined
      ? undefined
      : new Line(queue, limitStage as LimitStage, clock, realTimers, {
          run: (e) => checkOne(e.key, e.cost, e.priority, undefined, false),
          refused: (e) => refuse(503, e.reason, busy, [], []),
        });

  const clientKey = (key: unknown, what: string): string => {
    if (typeof key !== "string")
      throw new TypeError(`${what} must be a string, got ${typeof key} ${check.describe(key)}`);
    // Its state is kept under it: a key is bounded as the bytes of maxBytes assume.
    if (keyed !== undefined && key.length > MAX_KEY)
      throw new RangeError(`${what} must be at most ${MAX_KEY} characters (hash a longer identity), got ${key.length}`);
    return key;
  };
  const limitsFor = (method: string): KeyedLimits => {
    if (keyed === undefined)
      throw new RangeError(`admit ${method}: this admission has no per-key limits (give them in its limits option)`);
    return keyed;
  };
  const now = (): number => check.finite(clock(), "admit clock()");

  return {
    check: (key = "", cost = 1, priority?: Priority, signal?: AbortSignal) => {
      const k = clientKey(key, "admit check key");
      if (signal !== undefined && !check.has(signal, "addEventListener"))
        throw check.typeError("admit check signal", `must be an AbortSignal, got ${check.describe(signal)}`, signal);
      if (signal?.aborted === true && line !== undefined) return Promise.reject(signal.reason as Error);
      return checkOne(k, wholeCost(cost, "admit check cost"), priority, signal, true);
    },
    gate,
    shedder,
    limit: limitStage?.limiter,
    waits: line !== undefined,
    get waiting() {
      return line?.queue.length ?? 0;
    },
    get keys() {
      return keyed?.size ?? 0;
    },
    replaceLimit: (limit) => limitsFor("replaceLimit").replace(limit, now()),
    removeLimit: (name) => limitsFor("removeLimit").remove(name, now()),
    setOverride: (key, limit, fields) =>
      limitsFor("setOverride").override(clientKey(key, "admit setOverride key"), limit, fields, now()),
    removeOverride: (key, limit) =>
      limitsFor("removeOverride").unoverride(clientKey(key, "admit removeOverride key"), limit, now()),
  };
}
