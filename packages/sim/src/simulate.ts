import { Backoff, RetryBudget } from "@tideward/backoff";
import type { BackoffPolicy, Budget } from "@tideward/backoff";
import { check } from "@tideward/time/internal";
import type { Random, Span } from "@tideward/time";
import { Backend, backendSpec } from "./backend";
import type { BackendOptions } from "./backend";
import { InvariantError } from "./invariant-error";
import { monitor } from "./monitor";
import type { Monitor } from "./monitor";
import type { Adapter, PolicySpec } from "./policy";
import { BUSY, FIRST, HEDGE, IN_FLIGHT, QUEUE, RETRY, Recorder } from "./recorder";
import type { PolicyReport, RunResult } from "./result";
import { Simulator } from "./simulator";
import type { Arrivals, Traffic } from "./traffic";

/** How the client retries a failed attempt. */
export interface RetryOptions {
  /** When to retry and how often (`attempts` counts the first one): a `Backoff` or its fields. @defaultValue the `backoff` preset: 3 attempts, 100 ms doubling to 1 s, spread by a fifth */
  readonly backoff?: Backoff | Partial<BackoffPolicy>;
  /** A retry budget shared by every call (`@tideward/backoff`'s `RetryBudget`), or none. @defaultValue none */
  readonly budget?: Partial<Budget> | false;
  /** Retry attempts a policy refused, too (not only failures). @defaultValue false */
  readonly refusals?: boolean;
}

/** Options of {@link HedgeOptions}. */
export interface HedgeOptions {
  /** Milliseconds to wait for an answer before sending a second copy of the attempt, above 0. */
  readonly after: Span;
  /** Hedged copies a call may send, a whole number from 1. @defaultValue 1 */
  readonly max?: number;
}

/** How the calling side behaves. */
export interface ClientOptions {
  /** Milliseconds the client waits for an attempt before counting it failed; the backend keeps working on it. @defaultValue Infinity */
  readonly timeout?: Span;
  /** Retries, or none. @defaultValue none */
  readonly retry?: RetryOptions | false;
  /** Hedging: a second copy after a delay, the first success winning. @defaultValue none */
  readonly hedge?: HedgeOptions | false;
}

/** One run. */
export interface SimulationOptions {
  /** How results name the run. @defaultValue the policies' names, or "no policy" */
  readonly label?: string;
  /** @defaultValue 1 */
  readonly seed?: number;
  /** The clock reading the run starts at, ms: 0, or `Date.now()`-scale. @defaultValue 0 */
  readonly start?: number;
  /** How long traffic is offered, ms, above 0. */
  readonly duration: Span;
  /** The series' resolution, ms per bucket. @defaultValue 1 000 for runs of ten seconds or more, a hundredth of the run otherwise */
  readonly step?: Span;
  readonly traffic: Traffic;
  /** @defaultValue 10 ms a call, never failing, no capacity limit */
  readonly backend?: BackendOptions;
  /** @defaultValue no timeout, no retries, no hedging */
  readonly client?: ClientOptions;
  /** The policies every attempt must pass, asked in this order. @defaultValue none */
  readonly policies?: readonly PolicySpec[];
  /** Check every policy's envelopes and counts at every step, throwing an `InvariantError` on the first breach. @defaultValue false */
  readonly invariants?: boolean;
  /** How long after the traffic stops in-flight work may finish, ms. @defaultValue Infinity (until nothing is left) */
  readonly drain?: Span;
  /** Keep per-key totals in the result (`keys`). @defaultValue false */
  readonly perKey?: boolean;
}

const FIELDS = [
  "label",
  "seed",
  "start",
  "duration",
  "step",
  "traffic",
  "backend",
  "client",
  "policies",
  "invariants",
  "drain",
  "perKey",
] as const;

// Slot references carried by events: a generation times SPAN plus the slot, so an event that
// outlived its attempt (a timeout after the answer) is recognised and ignored.
const SPAN = 4_194_304;
const CLIENT_DONE = 1;
const SERVER_DONE = 2;

/**
 * Runs traffic through a client, policies and a backend over simulated time, and returns the
 * record: time series, a summary, and the trace hash. Deterministic: the same options give the
 * same result, bit for bit.
 *
 * Each call from the traffic is a first attempt; the client may retry it (with backoff and a
 * budget) or hedge it. Every attempt asks each policy in order; the first refusal ends the
 * attempt, and the places the policies before it gave are released. An admitted attempt goes
 * to the backend. Client-side policies settle when the client sees the answer (or gives up
 * waiting), server-side ones when the backend finishes.
 *
 * @example
 * import { minutes } from "@tideward/time";
 * const run = simulate({
 *   duration: minutes(5),
 *   traffic: traffic.poisson({ rate: 200 }),
 *   backend: { latency: latency.exponential(20), failures: failures.outage({ from: 60_000, to: 120_000 }) },
 *   policies: [policy.breaker()],
 * });
 * run.summary.refusedBy.breaker; // calls the breaker spared the dead backend
 * @throws TypeError/RangeError naming the option for bad input; InvariantError when `invariants` finds a breach
 */
export function simulate(options: SimulationOptions): RunResult {
  return new Run(options).result();
}

class Run {
  readonly sim: Simulator;
  readonly #label: string;
  readonly #start: number;
  readonly #end: number;
  readonly #duration: number;
  readonly #drain: number;
  readonly #traffic: Traffic;
  readonly #arrivals: Arrivals;
  readonly #backend: Backend;
  // Whether the backend has a capacity model: only then are its busy workers and queue levels.
  readonly #limited: boolean;
  readonly #rec: Recorder;
  readonly #adapters: Adapter[];
  readonly #client: Adapter[] = [];
  readonly #clientIndex: number[] = [];
  readonly #server: Adapter[] = [];
  readonly #serverIndex: number[] = [];
  readonly #delays: boolean;
  readonly #monitors: Monitor[][] | undefined;
  readonly #holders: number[] = [];
  readonly #inside: number[];
  readonly #reasonCache: string[];
  readonly #reasonIndex: number[];

  readonly #timeout: number;
  readonly #backoff: Backoff | undefined;
  readonly #budget: RetryBudget | undefined;
  readonly #retryRefused: boolean;
  readonly #hedgeAfter: number;
  readonly #hedgeMax: number;
  readonly #clientRandom: Random;

  // Calls.
  #cKey = new Int32Array(256);
  #cCost = new Float64Array(256);
  #cAttempts = new Int32Array(256);
  #cHedges = new Int32Array(256);
  #cOut = new Int32Array(256);
  #cDone = new Uint8Array(256);
  #cPrev = new Float64Array(256);
  #cGen = new Float64Array(256);
  #cFree = new Int32Array(256);
  #cFreeN = 0;
  #cUsed = 0;
  #cLive = 0;
  // Attempts.
  #aCall = new Int32Array(256);
  #aKey = new Int32Array(256);
  #aStart = new Float64Array(256);
  #aFlags = new Uint8Array(256);
  #aGen = new Float64Array(256);
  #aFree = new Int32Array(256);
  #aFreeN = 0;
  #aUsed = 0;
  #tokens: unknown[][];
  #inFlight = 0;

  constructor(options: SimulationOptions) {
    const o = check.options(options, [...FIELDS], "simulate");
    this.#start = check.finite(o.start ?? 0, "simulate start (ms)");
    this.#duration = check.positive(o.duration, "simulate duration (ms)");
    const step =
      o.step === undefined
        ? this.#duration >= 10_000
          ? 1_000
          : this.#duration / 100
        : check.positive(o.step, "simulate step (ms)");
    this.#drain = o.drain === undefined ? Infinity : check.nonNegative(o.drain, "simulate drain (ms)");
    const traffic = o.traffic;
    if (typeof traffic?.open !== "function")
      throw new TypeError(
        `simulate traffic must be a traffic model (traffic.poisson, …), got ${check.describe(traffic)}`,
      );
    this.#traffic = traffic;
    const specs: readonly PolicySpec[] = o.policies ?? [];
    if (!isArray(specs))
      throw new TypeError(`simulate policies must be an array of policies, got ${check.describe(specs)}`);
    specs.forEach((p: PolicySpec, i) => {
      if (typeof p?.create !== "function")
        throw new TypeError(`simulate policies[${i}] must be a policy (policy.breaker(), …), got ${check.describe(p)}`);
    });
    this.#label = o.label ?? (specs.length === 0 ? "no policy" : specs.map((p) => p.name).join(" + "));
    this.sim = new Simulator({ seed: o.seed ?? 1, start: this.#start });
    this.#end = this.#start + this.#duration;
    const spec = backendSpec(o.backend);
    this.#backend = new Backend(spec, this.sim.random("backend"), this.#start, (time, slot) =>
      this.sim.at(time, this.#onService, slot),
    );
    this.#limited = spec.workers !== Infinity;
    const keys = traffic.keys;
    const cpu = (now: number): number => this.#backend.cpu(now);
    this.#rec = new Recorder(this.#start, this.#duration, step, o.perKey === true ? keys.count : 0, cpu);

    const client = check.options(o.client, ["timeout", "retry", "hedge"], "simulate client");
    this.#timeout =
      client.timeout === undefined ? Infinity : check.positive(client.timeout, "simulate client timeout (ms)");
    const retry =
      client.retry === undefined || client.retry === false
        ? undefined
        : check.options(client.retry, ["backoff", "budget", "refusals"], "simulate client retry");
    this.#backoff =
      retry === undefined
        ? undefined
        : retry.backoff instanceof Backoff
          ? retry.backoff
          : new Backoff(retry.backoff ?? {});
    this.#budget =
      retry?.budget === undefined || retry.budget === false ? undefined : new RetryBudget(retry.budget, this.#start);
    this.#retryRefused = retry?.refusals === true;
    const hedge =
      client.hedge === undefined || client.hedge === false
        ? undefined
        : check.options(client.hedge, ["after", "max"], "simulate client hedge");
    this.#hedgeAfter = hedge === undefined ? Infinity : check.positive(hedge.after, "simulate client hedge after (ms)");
    this.#hedgeMax = hedge === undefined ? 0 : check.integer(hedge.max ?? 1, "simulate client hedge max", 1);
    this.#clientRandom = this.sim.random("client");

    this.#adapters = specs.map((p, i) =>
      p.create({
        start: this.#start,
        random: this.sim.random(`policy ${i} ${p.name}`),
        keys: keys.count,
        keyName: (k: number) => keys.name(k),
        cpu,
      }),
    );
    this.#adapters.forEach((a, i) => {
      if (a.side === "server") {
        this.#server.push(a);
        this.#serverIndex.push(i);
      } else {
        this.#client.push(a);
        this.#clientIndex.push(i);
      }
      if (typeof a.held === "function") this.#holders.push(i);
    });
    this.#delays = this.#adapters.some((a) => "delay" in a);
    this.#tokens = this.#adapters.map(() => new Array<unknown>(256).fill(undefined));
    this.#inside = this.#adapters.map(() => 0);
    this.#reasonCache = this.#adapters.map(() => "");
    this.#reasonIndex = this.#adapters.map(() => -1);
    this.#monitors = o.invariants === true ? this.#adapters.map((a) => (a.envelopes ?? []).map(monitor)) : undefined;

    this.#arrivals = traffic.open({ start: this.#start, end: this.#end, random: this.sim.random("traffic") });
    const first = this.#arrivals.next();
    if (first < this.#end) this.sim.lane(first, this.#onArrival);
  }

  result(): RunResult {
    const sim = this.sim;
    const invariants = this.#monitors !== undefined;
    const each = invariants && this.#holders.length > 0 ? this.#checkHeld : undefined;
    sim.run(this.#end + this.#drain, each);
    this.#rec.finish();
    if (invariants && this.#cLive === 0) {
      for (const i of this.#holders) {
        const held = (this.#adapters[i].held as () => number)();
        if (held !== 0) this.#violation(i, "held", `holds ${held} after the traffic stopped and every call ended`);
      }
    }
    const policies: PolicyReport[] = this.#adapters.map((a) => ({
      name: a.name,
      side: a.side,
      stats: { ...(a.stats?.() ?? {}) },
    }));
    const keys = this.#rec.keys((i) => this.#traffic.keys.name(i));
    return {
      label: this.#label,
      seed: sim.seed,
      start: this.#start,
      duration: this.#duration,
      step: this.#rec.step,
      traffic: this.#traffic.label,
      backend: this.#backend.spec.label,
      policies,
      series: this.#rec.series(),
      summary: this.#rec.summary(sim.events, this.#cLive),
      ...(keys === undefined ? {} : { keys }),
    };
  }

  readonly #checkHeld = (now: number): void => {
    for (const i of this.#holders) {
      const held = (this.#adapters[i].held as () => number)();
      if (held !== this.#inside[i])
        this.#violation(
          i,
          "held",
          `holds ${held} where ${this.#inside[i]} of its admitted attempts are unsettled`,
          now,
        );
    }
  };

  #violation(i: number, invariant: string, detail: string, now = this.sim.now()): never {
    throw new InvariantError(this.#adapters[i].name, invariant, detail, now, now - this.#start, this.sim.seed);
  }

  // ---- arrivals and calls -------------------------------------------------------------------

  readonly #onArrival = (now: number): void => {
    const arrivals = this.#arrivals;
    const key = arrivals.key;
    const cost = arrivals.cost;
    const next = arrivals.next();
    if (next < this.#end) this.sim.lane(next, this.#onArrival);
    this.#rec.offer(now, key);
    const c = this.#newCall(key, cost);
    this.#budget?.recordAttempt(now);
    this.#attempt(c, now, FIRST);
  };

  #newCall(key: number, cost: number): number {
    let c: number;
    if (this.#cFreeN > 0) c = this.#cFree[--this.#cFreeN];
    else {
      c = this.#cUsed++;
      if (c >= this.#cKey.length) this.#growCalls();
    }
    this.#cKey[c] = key;
    this.#cCost[c] = cost;
    this.#cAttempts[c] = 0;
    this.#cHedges[c] = 0;
    this.#cOut[c] = 0;
    this.#cDone[c] = 0;
    this.#cPrev[c] = 0;
    this.#cLive++;
    return c;
  }

  #freeCall(c: number): void {
    this.#cGen[c]++;
    if (this.#cFreeN === this.#cFree.length) this.#cFree = growI32(this.#cFree, this.#cFreeN + 1);
    this.#cFree[this.#cFreeN++] = c;
    this.#cLive--;
  }

  readonly #onRetry = (now: number, ref: number): void => {
    const c = ref % SPAN;
    if (this.#cGen[c] !== (ref - c) / SPAN) return;
    this.#attempt(c, now, RETRY);
  };

  readonly #onHedge = (now: number, ref: number): void => {
    const c = ref % SPAN;
    if (this.#cGen[c] !== (ref - c) / SPAN || this.#cDone[c] === 1 || this.#cOut[c] === 0) return;
    if (this.#cHedges[c] >= this.#hedgeMax) return;
    if (this.#budget !== undefined && !this.#budget.tryRetry(now)) return;
    this.#cHedges[c]++;
    this.#attempt(c, now, HEDGE);
  };

  /** The client has heard how one of call `c`'s attempts went. */
  #resolve(c: number, now: number, ok: boolean, refused: boolean): void {
    this.#cOut[c]--;
    if (this.#cDone[c] === 1) {
      if (this.#cOut[c] === 0) this.#freeCall(c);
      return;
    }
    const key = this.#cKey[c];
    if (ok) {
      this.#cDone[c] = 1;
      this.#rec.done(now, key, true);
      if (this.#cOut[c] === 0) this.#freeCall(c);
      return;
    }
    // A hedged copy is still out: wait for it.
    if (this.#cOut[c] > 0) return;
    const backoff = this.#backoff;
    const made = this.#cAttempts[c];
    if (
      backoff !== undefined &&
      (!refused || this.#retryRefused) &&
      made < backoff.attempts &&
      (this.#budget === undefined || this.#budget.tryRetry(now))
    ) {
      const delay = backoff.delay(made, {
        random: this.#clientRandom(),
        previous: made === 1 ? backoff.base : this.#cPrev[c],
      }) as number;
      this.#cPrev[c] = delay;
      this.sim.at(now + delay, this.#onRetry, this.#cGen[c] * SPAN + c);
      return;
    }
    this.#cDone[c] = 1;
    this.#rec.done(now, key, false);
    this.#freeCall(c);
  }

  // ---- attempts -----------------------------------------------------------------------------

  #attempt(c: number, now: number, kind: number): void {
    const rec = this.#rec;
    rec.attempt(now, kind);
    if (kind !== HEDGE) this.#cAttempts[c]++;
    this.#cOut[c]++;
    const key = this.#cKey[c];
    const cost = this.#cCost[c];
    let a: number;
    if (this.#aFreeN > 0) a = this.#aFree[--this.#aFreeN];
    else {
      a = this.#aUsed++;
      if (a >= this.#aCall.length) this.#growAttempts();
      if (a >= SPAN) throw new RangeError(`simulate: more than ${SPAN} attempts in flight at once`);
    }
    this.#aCall[a] = c;
    this.#aKey[a] = key;
    this.#aStart[a] = now;
    this.#aFlags[a] = 0;
    const adapters = this.#adapters;
    const monitors = this.#monitors;
    let delay = 0;
    for (let i = 0; i < adapters.length; i++) {
      const ad = adapters[i];
      const token = ad.admit(now, key, cost);
      if (token === undefined) {
        if (monitors !== undefined) this.#checkRefusal(i, now, key, cost);
        for (let j = i - 1; j >= 0; j--) this.#release(j, a, now, key);
        rec.refuse(now, key, this.#reasonOf(i, ad.reason));
        this.#freeAttempt(a);
        this.#resolve(c, now, false, true);
        return;
      }
      this.#tokens[i][a] = token;
      this.#inside[i]++;
      if (monitors !== undefined) {
        for (const m of monitors[i]) {
          const broken = m.admit(now, key, cost);
          if (broken !== undefined) this.#violation(i, m.label, broken, now);
        }
      }
      if (this.#delays) {
        const d = ad.delay;
        if (d !== undefined && d > 0) delay += d;
      }
    }
    rec.admit(now, key);
    rec.gauge(IN_FLIGHT, ++this.#inFlight, now);
    const ref = this.#aGen[a] * SPAN + a;
    if (this.#timeout !== Infinity) this.sim.at(now + this.#timeout, this.#onTimeout, ref);
    if (kind !== HEDGE && this.#hedgeMax > 0 && this.#cHedges[c] < this.#hedgeMax)
      this.sim.at(now + this.#hedgeAfter, this.#onHedge, this.#cGen[c] * SPAN + c);
    if (delay > 0) this.sim.at(now + delay, this.#onDispatch, ref);
    else this.#dispatch(a, now);
  }

  #reasonOf(i: number, reason: string): number {
    if (this.#reasonCache[i] === reason) return this.#reasonIndex[i];
    const r = this.#rec.reason(reason);
    this.#reasonCache[i] = reason;
    this.#reasonIndex[i] = r;
    return r;
  }

  /**
   * A refusal by policy `i` is a charge counted twice when the envelope it answers for is exact
   * and had room: the envelope of the refusal's reason, if the policy tags its envelopes with
   * reasons, or else every envelope (all of them exact).
   */
  #checkRefusal(i: number, now: number, key: number, cost: number): void {
    const monitors = (this.#monitors as Monitor[][])[i];
    if (monitors.length === 0) return;
    let checked: Monitor[];
    if (monitors.some((m) => m.reason !== undefined)) {
      const reason = this.#adapters[i].reason;
      checked = monitors.filter((m) => m.reason === reason);
    } else checked = monitors;
    if (checked.length === 0 || checked.some((m) => !m.exact)) return;
    let first: string | undefined;
    for (const m of checked) {
      const roomy = m.refuse(now, key, cost);
      if (roomy === undefined) return;
      first ??= `${m.label}: ${roomy}`;
    }
    this.#violation(i, "refused with room", first as string, now);
  }

  #release(i: number, a: number, now: number, key: number): void {
    const token = this.#tokens[i][a];
    this.#tokens[i][a] = undefined;
    this.#inside[i]--;
    this.#adapters[i].release?.(token, now);
    if (this.#monitors !== undefined) for (const m of this.#monitors[i]) m.leave(key);
  }

  #settle(i: number, a: number, now: number, ok: boolean): void {
    const token = this.#tokens[i][a];
    this.#tokens[i][a] = undefined;
    this.#inside[i]--;
    this.#adapters[i].settle(token, now, ok);
    if (this.#monitors !== undefined) for (const m of this.#monitors[i]) m.leave(this.#aKey[a]);
  }

  readonly #onDispatch = (now: number, ref: number): void => {
    const a = ref % SPAN;
    // The request was sent: it reaches the backend even if the client has stopped waiting.
    if (this.#aGen[a] === (ref - a) / SPAN) this.#dispatch(a, now);
  };

  #dispatch(a: number, now: number): void {
    this.#rec.arrive(now);
    const backend = this.#backend;
    if (!backend.accept(a, now)) {
      // Queue full: the server turns it away at once.
      this.#serverDone(a, now, false);
      return;
    }
    if (this.#limited) {
      this.#rec.gauge(BUSY, backend.busy, now);
      this.#rec.gauge(QUEUE, backend.queued, now);
    }
  }

  readonly #onService = (now: number, a: number): void => {
    const backend = this.#backend;
    backend.finish(now);
    if (this.#limited) {
      this.#rec.gauge(BUSY, backend.busy, now);
      this.#rec.gauge(QUEUE, backend.queued, now);
    }
    this.#serverDone(a, now, backend.outcome(a));
  };

  #serverDone(a: number, now: number, ok: boolean): void {
    const server = this.#serverIndex;
    for (let j = 0; j < server.length; j++) this.#settle(server[j], a, now, ok);
    const flags = (this.#aFlags[a] |= SERVER_DONE);
    if ((flags & CLIENT_DONE) !== 0) this.#freeAttempt(a);
    else this.#clientDone(a, now, ok, false);
  }

  readonly #onTimeout = (now: number, ref: number): void => {
    const a = ref % SPAN;
    if (this.#aGen[a] !== (ref - a) / SPAN || (this.#aFlags[a] & CLIENT_DONE) !== 0) return;
    this.#clientDone(a, now, false, true);
  };

  #clientDone(a: number, now: number, ok: boolean, timedOut: boolean): void {
    const client = this.#clientIndex;
    for (let j = 0; j < client.length; j++) this.#settle(client[j], a, now, ok);
    const c = this.#aCall[a];
    const key = this.#aKey[a];
    const rec = this.#rec;
    rec.gauge(IN_FLIGHT, --this.#inFlight, now);
    if (ok) rec.success(now, key, now - this.#aStart[a]);
    else rec.failure(now, key, timedOut);
    const flags = (this.#aFlags[a] |= CLIENT_DONE);
    if ((flags & SERVER_DONE) !== 0) this.#freeAttempt(a);
    this.#resolve(c, now, ok, false);
  }

  #freeAttempt(a: number): void {
    this.#aGen[a]++;
    if (this.#aFreeN === this.#aFree.length) this.#aFree = growI32(this.#aFree, this.#aFreeN + 1);
    this.#aFree[this.#aFreeN++] = a;
  }

  // ---- growth -------------------------------------------------------------------------------

  #growCalls(): void {
    const n = this.#cKey.length * 2;
    this.#cKey = growI32(this.#cKey, n);
    this.#cCost = growF64(this.#cCost, n);
    this.#cAttempts = growI32(this.#cAttempts, n);
    this.#cHedges = growI32(this.#cHedges, n);
    this.#cOut = growI32(this.#cOut, n);
    this.#cDone = growU8(this.#cDone, n);
    this.#cPrev = growF64(this.#cPrev, n);
    this.#cGen = growF64(this.#cGen, n);
  }

  #growAttempts(): void {
    const n = this.#aCall.length * 2;
    this.#aCall = growI32(this.#aCall, n);
    this.#aKey = growI32(this.#aKey, n);
    this.#aStart = growF64(this.#aStart, n);
    this.#aFlags = growU8(this.#aFlags, n);
    this.#aGen = growF64(this.#aGen, n);
    for (const t of this.#tokens) while (t.length < n) t.push(undefined);
  }
}

function isArray(value: unknown): boolean {
  return Array.isArray(value);
}

function growI32(a: Int32Array, min: number): Int32Array<ArrayBuffer> {
  let n = a.length;
  while (n < min) n *= 2;
  const b = new Int32Array(n);
  b.set(a);
  return b;
}

function growF64(a: Float64Array, min: number): Float64Array<ArrayBuffer> {
  let n = a.length;
  while (n < min) n *= 2;
  const b = new Float64Array(n);
  b.set(a);
  return b;
}

function growU8(a: Uint8Array, min: number): Uint8Array<ArrayBuffer> {
  let n = a.length;
  while (n < min) n *= 2;
  const b = new Uint8Array(n);
  b.set(a);
  return b;
}
