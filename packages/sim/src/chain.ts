import { Pipeline } from "@tideward/guard/internal";
import type { Outcome } from "@tideward/guard";
import type { Ask, Held, Stage } from "@tideward/guard/internal";
import { check } from "@tideward/time/internal";
import { byName } from "./by-name";
import { monitors } from "./monitor";
import type { Monitor } from "./monitor";
import { ownStage } from "./policies/stage";
import type { Adapter, PolicyContext, PolicySpec } from "./policy";
import type { Recorder } from "./recorder";
import type { PolicyReport } from "./result";

/** What a policy was being asked when it threw: `doing` is its index times 8 plus one of these. */
export const CREATE = 0;
export const ADMIT = 1;
export const SETTLE = 2;
export const RELEASE = 3;
export const HELD = 4;
export const STATS = 5;
const METHODS = ["create", "admit", "settle", "release", "held", "stats", "delay", "reason"];
export const DELAY = 6;
export const REASON = 7;

/** Which side of the network a policy sits on. */
export const CLIENT_SIDE = 0;
export const SERVER_SIDE = 1;

/** Reports a broken invariant of policy `i`: throws. */
export type Violation = (i: number, invariant: string, detail: string, now: number) => never;

/**
 * What an attempt asks of a side's stages: the guard's ask (its key's text, read by the stages
 * kept per key, as admit's carries it, and its priority), and the key an adapter is asked with
 * (its number).
 */
interface KeyedAsk extends Ask {
  index: number;
  priority: number | string | undefined;
}

/** A stage a side runs bare: its place, and where it notes the latest clock reading it was asked at. */
interface Bare {
  readonly place: number;
  readonly last: Float64Array;
}

/** Each key's text (`keys.name`), checked to be text. */
export type KeyName = (key: number) => string;

/** Each key's priority, as the traffic's `keys.priority` gives it. */
export type PriorityOf = (key: number) => number | string | undefined;

/** What an attempt holds of one side's stages: a slot a policy (every policy settles). */
function held(): Held {
  return { t0: undefined, t1: undefined, t2: undefined, t3: undefined, more: undefined };
}

/**
 * The policies every attempt must pass, and what each holds for each attempt in flight.
 *
 * Each side is one of the guard's pipelines (`@tideward/guard`'s `Pipeline`, the one a guard and
 * an admission run) over its policies as stages: a policy made from a guard's stage is that stage
 * (entered at its place: the chain spends nothing last), any other adapter is asked through a
 * stage of its own. Client-side policies are asked when the client sends an attempt, in their
 * order; server-side ones when it reaches the server, in theirs. The first refusal ends the
 * attempt, and the places the policies before it on that side gave are released, last first (on a
 * server refusal, the client side's too, once the client hears of it). With `invariants`, every
 * admission is also checked against each policy's envelopes, and every refusal against the exact
 * ones. Each policy's stage here also notes which policy is being asked (for a report when it
 * throws) and, with invariants, how many attempts it holds; without them, a tideward breaker or
 * bucket the policy built itself runs bare, its stage called by the pipeline directly (it never
 * throws: see `StageRun.direct`).
 */
export class Chain {
  readonly adapters: readonly Adapter[];
  readonly #names: readonly string[];
  readonly #sides: readonly (readonly number[])[];
  /** Client-side policies. */
  readonly clients: number;
  /** Server-side policies. */
  readonly servers: number;
  /** Per side, the pipeline of its policies' stages. */
  readonly #pipes: readonly Pipeline[];
  /** Per side, what each attempt slot holds of its stages. */
  readonly #held: readonly Held[][];
  /**
   * Per side, the stages it runs bare (see `StageRun.direct`), in order: each one's place, and
   * where it notes the latest clock reading it was asked at (noted once the pipeline decided).
   */
  readonly #bare: readonly (readonly Bare[])[];
  /** The one ask every admission fills in: asking allocates nothing. */
  readonly #ask: KeyedAsk;
  /** Each key's priority, or none for traffic without priorities. */
  readonly #priority: PriorityOf | undefined;
  /** The key of the attempt being settled or released, for the monitors. */
  #key = 0;
  /** Whether the attempt being settled was dropped unserved (see {@link Chain.drop}). */
  #dropping = false;
  /**
   * Per policy: its admitted attempts not yet settled or released. Read only with invariants
   * (see {@link Chain.checkHeld}): without them, a policy that is its own stage is not counted.
   */
  readonly inside: number[];
  readonly monitors: readonly (readonly Monitor[])[] | undefined;
  /** Policies that say how many they hold (`held`). */
  readonly holders: readonly number[];
  readonly #reasonCache: string[];
  readonly #reasonIndex: number[];
  readonly #rec: Recorder;
  readonly #violation: Violation;
  /** The policy being asked and how, for a report when it throws: index × 8 + method. */
  doing = -1;
  /** Set by {@link Chain.admit}: the delay the admissions asked for, ms. */
  delay = 0;
  #delaySum = 0;
  /** Set by {@link Chain.admit} on a refusal: the reason's index in the recorder. */
  reason = 0;

  /**
   * @param adapters - the policies' adapters for this run, made and checked by the run
   * @param invariants - whether to check every admission against the policies' envelopes
   * @param keyName - each key's text, read from the ask by the stages kept per key
   * @param priority - each key's priority, put in every ask (none: every call gives none)
   */
  constructor(
    adapters: readonly Adapter[],
    invariants: boolean,
    rec: Recorder,
    violation: Violation,
    keyName: KeyName,
    priority?: PriorityOf,
  ) {
    let named = -1;
    let text = "";
    this.#ask = {
      cost: 1,
      hedge: false,
      first: false,
      retryAfter: 0,
      index: 0,
      priority: undefined,
      // Named only when a stage reads it (once a key, as long as its calls follow one another).
      get key() {
        if (this.index !== named) {
          text = keyName(this.index);
          named = this.index;
        }
        return text;
      },
    };
    this.#priority = priority;
    this.#names = adapters.map((a) => a.name);
    this.adapters = adapters;
    const client: number[] = [];
    const server: number[] = [];
    const holders: number[] = [];
    adapters.forEach((a, i) => {
      (a.side === "server" ? server : client).push(i);
      if (typeof a.held === "function") holders.push(i);
    });
    this.#sides = [client, server];
    this.clients = client.length;
    this.servers = server.length;
    this.holders = holders;
    this.inside = adapters.map(() => 0);
    this.#reasonCache = adapters.map(() => "");
    this.#reasonIndex = adapters.map(() => -1);
    this.#rec = rec;
    this.#violation = violation;
    // Checked as each policy was made (see Chain.adapters): this does not throw.
    this.monitors = invariants ? adapters.map((a) => monitors(a.envelopes, a.name)) : undefined;
    const bare = this.#sides.map((): Bare[] => []);
    this.#bare = bare;
    // Each policy entered at its place (the chain spends nothing last); none answers later.
    this.#pipes = this.#sides.map(
      (list, side) =>
        new Pipeline(
          list.map((i, place) => this.#stage(i, place, bare[side])),
          /* waits */ false,
          /* inOrder */ true,
        ),
    );
    this.#held = this.#sides.map(() => Array.from({ length: 256 }, held));
  }

  /**
   * Policy `i`, at `place` on its side, as a stage of its side's pipeline: its own stage, or its
   * adapter asked, settled and released; either way noting which policy is asked and what it
   * holds, and checking its envelopes with `invariants`. Without invariants, a stage that may run
   * bare (see `StageRun.direct`) is itself, listed in `bare`: nothing is noted as it is asked,
   * and `admit` notes the clock reading it was asked at once the pipeline has decided.
   */
  #stage(i: number, place: number, bare: Bare[]): Stage {
    const ad = this.adapters[i];
    const own = ownStage(ad);
    const monitors = this.monitors?.[i];
    const inside = this.inside;
    const ADMITTING = i * 8 + ADMIT;
    const SETTLING = i * 8 + SETTLE;
    const RELEASING = i * 8 + RELEASE;
    const delays = "delay" in ad;
    const admitted = (token: unknown, now: number, ask: KeyedAsk): unknown => {
      if (token === undefined) {
        if (monitors !== undefined) this.#checkRefusal(i, now, ask.index, ask.cost);
        return undefined;
      }
      inside[i]++;
      if (monitors !== undefined)
        for (const m of monitors) {
          const broken = m.admit(now, ask.index, ask.cost);
          if (broken !== undefined) this.#violation(i, m.label, broken, now);
        }
      if (delays) this.#delay(i, ad);
      return token;
    };
    const left =
      monitors === undefined
        ? (): void => {
            inside[i]--;
          }
        : (): void => {
            inside[i]--;
            for (const m of monitors) m.leave(this.#key);
          };
    // Without invariants or a delay, an admission only counts what an adapter holds.
    const plain = monitors === undefined && !delays;
    const giveBack = own === undefined ? ad.release?.bind(ad) : own.stage.release?.bind(own.stage);
    const release = (token: unknown, now: number): void => {
      left();
      const doing = this.doing;
      this.doing = RELEASING;
      giveBack?.(token, now);
      // A release after another policy threw leaves that one named.
      this.doing = doing;
    };
    if (own !== undefined) {
      const { stage, last } = own;
      if (plain && own.direct) {
        bare.push({ place, last });
        return stage;
      }
      if (plain) {
        // Nothing reads what it holds without invariants: only which policy is asked is noted,
        // and a stage with nothing to settle or give back (a bucket) gets no slot in the
        // pipeline, so its token is neither kept nor handed back.
        return {
          kind: stage.kind,
          enter: (now, ask) => {
            this.doing = ADMITTING;
            last[0] = now;
            return stage.enter(now, ask);
          },
          settle:
            stage.settle === undefined
              ? undefined
              : (token, now, outcome) => {
                  this.doing = SETTLING;
                  stage.settle?.(token, now, outcome);
                },
          release:
            stage.release === undefined
              ? undefined
              : (token, now) => {
                  const doing = this.doing;
                  this.doing = RELEASING;
                  stage.release?.(token, now);
                  // A release after another policy threw leaves that one named.
                  this.doing = doing;
                },
        };
      }
      return {
        kind: stage.kind,
        enter: (now, ask) => {
          this.doing = ADMITTING;
          last[0] = now;
          return admitted(stage.enter(now, ask), now, ask as KeyedAsk);
        },
        settle: (token, now, outcome) => {
          left();
          this.doing = SETTLING;
          stage.settle?.(token, now, outcome);
        },
        release,
      };
    }
    return {
      kind: ad.name,
      enter: plain
        ? (now, ask) => {
            this.doing = ADMITTING;
            const token = ad.admit(now, (ask as KeyedAsk).index, ask.cost, ask.priority);
            if (token !== undefined) inside[i]++;
            return token;
          }
        : (now, ask) => {
            this.doing = ADMITTING;
            const a = ask as KeyedAsk;
            return admitted(ad.admit(now, a.index, a.cost, a.priority), now, a);
          },
      // A call the backend dropped unserved (see Chain.drop): an adapter hears a release, the
      // attempt never having run.
      settle: (token, now, outcome) => {
        if (this.#dropping) return release(token, now);
        left();
        this.doing = SETTLING;
        ad.settle(token, now, outcome === "success");
      },
      release,
    };
  }

  /** Adds the delay policy `i` just asked for to the admission's. */
  #delay(i: number, ad: Adapter): void {
    this.doing = i * 8 + DELAY;
    const d = ad.delay;
    if (d === undefined) return;
    if (!(typeof d === "number" && d >= 0 && d < Infinity))
      throw new RangeError(
        `policy ${ad.name} delay must be a finite number of milliseconds, 0 or more, got ${check.describe(d)}`,
      );
    this.#delaySum += d;
  }

  /**
   * Makes each policy's adapter for a run, checking what it made (with `invariants`, its
   * envelopes too). `making` hears the index of the policy about to be made, so a policy whose
   * `create` throws, or answers garbage, can be named.
   */
  static adapters(
    specs: readonly PolicySpec[],
    context: (i: number, spec: PolicySpec) => PolicyContext,
    making: (i: number) => void,
    invariants: boolean,
  ): Adapter[] {
    return specs.map((spec, i) => {
      making(i);
      const a = spec.create(context(i, spec));
      if (a === null || typeof a !== "object" || typeof a.admit !== "function" || typeof a.settle !== "function")
        throw new TypeError(
          `policy ${spec.name} create must return an adapter (an object with admit and settle), got ${check.describe(a)}`,
        );
      if (a.side !== "client" && a.side !== "server")
        throw new TypeError(`policy ${spec.name} side must be "client" or "server", got ${check.describe(a.side)}`);
      if (typeof a.name !== "string")
        throw new TypeError(`policy ${spec.name} adapter name must be text, got ${check.describe(a.name)}`);
      // Optional methods: absent, or functions (called later, they would fail far from here).
      for (const m of ["release", "held", "stats"] as const) {
        const f = (a as unknown as Record<string, unknown>)[m];
        if (f !== undefined && typeof f !== "function")
          throw new TypeError(`policy ${spec.name} ${m} must be a function, got ${check.describe(f)}`);
      }
      if (invariants) monitors(a.envelopes, a.name);
      return a;
    });
  }

  /** The policy and method `doing` names, in words: `"policy breaker admit"`. */
  describe(doing: number): string {
    const i = doing >> 3;
    return `policy ${this.#names[i]} ${METHODS[doing & 7]}`;
  }

  /** Makes room for attempt slots up to `n`. */
  grow(n: number): void {
    for (const h of this.#held) while (h.length < n) h.push(held());
  }

  /**
   * Asks every policy on `side` to admit attempt `a` at `now` (ms): true when all did. On a
   * refusal, the places the ones before it on that side gave are released, and `reason` is set.
   */
  admit(side: number, a: number, now: number, key: number, cost: number): boolean {
    const ask = this.#ask;
    ask.cost = cost;
    ask.index = key;
    if (this.#priority !== undefined) ask.priority = this.#priority(key);
    this.#key = key;
    this.#delaySum = 0;
    const pipe = this.#pipes[side];
    const admitted = pipe.admit(now, ask, this.#held[side][a]);
    // The stages run bare that were asked (every one, or those up to the one that refused) note it.
    const upto = admitted ? Infinity : pipe.refusedBy;
    for (const b of this.#bare[side]) {
      if (b.place > upto) break;
      b.last[0] = now;
    }
    if (admitted) {
      this.delay = this.#delaySum;
      return true;
    }
    this.reason = this.#reasonOf(this.#sides[side][pipe.refusedBy]);
    return false;
  }

  /** Releases what every policy on `side` holds for attempt `a` (it never ran). */
  release(side: number, a: number, now: number, key: number): void {
    this.#key = key;
    this.#pipes[side].release(now, this.#held[side][a]);
  }

  /**
   * The backend dropped attempt `a` unserved at `now` (ms), having held it past its caller's
   * timeout: the guard's stages on `side` hear a failure (as admit's verdict is released when its
   * client has gone), the other adapters a release, as for an attempt that never ran.
   */
  drop(side: number, a: number, now: number, key: number): void {
    this.#dropping = true;
    this.settle(side, a, now, key, "failure");
    this.#dropping = false;
  }

  /**
   * Tells every policy on `side` how attempt `a` went at `now` (ms), in the guard's words: a
   * client's attempt as a guard's ends (`"timeout"` when the client stopped waiting), a server's
   * as admit's verdict is released (`"success"` or `"failure"`). An adapter hears whether it was a
   * success.
   */
  settle(side: number, a: number, now: number, key: number, outcome: Outcome): void {
    this.#key = key;
    this.#pipes[side].settle(now, outcome, this.#held[side][a]);
  }

  #reasonOf(i: number): number {
    this.doing = i * 8 + REASON;
    const reason = this.adapters[i].reason;
    if (this.#reasonCache[i] === reason) return this.#reasonIndex[i];
    if (typeof reason !== "string")
      throw new TypeError(`policy ${this.adapters[i].name} reason must be text, got ${check.describe(reason)}`);
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
    const monitors = (this.monitors as readonly (readonly Monitor[])[])[i];
    if (monitors.length === 0) return;
    let checked: readonly Monitor[];
    if (monitors.some((m) => m.reason !== undefined)) {
      const reason = this.adapters[i].reason;
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

  /** Checks every holder's own count against the attempts it admitted and has not heard of. */
  checkHeld(now: number, settled: boolean): void {
    for (const i of this.holders) {
      this.doing = i * 8 + HELD;
      const held = (this.adapters[i].held as () => number)();
      if (settled) {
        if (held !== 0)
          this.#violation(
            i,
            "held",
            `holds ${check.describe(held)} after the traffic stopped and every call ended`,
            now,
          );
      } else if (held !== this.inside[i]) {
        this.#violation(
          i,
          "held",
          `holds ${check.describe(held)} where ${this.inside[i]} of its admitted attempts are unsettled`,
          now,
        );
      }
    }
  }

  /** What each policy says about itself. */
  reports(): PolicyReport[] {
    return this.adapters.map((a, i) => {
      this.doing = i * 8 + STATS;
      const stats = a.stats?.() ?? {};
      if (stats === null || typeof stats !== "object")
        throw new TypeError(`policy ${a.name} stats must return a record of numbers, got ${check.describe(stats)}`);
      const copy = byName<number>();
      for (const [k, v] of Object.entries(stats)) {
        if (typeof v !== "number")
          throw new TypeError(`policy ${a.name} stats ${JSON.stringify(k)} must be a number, got ${check.describe(v)}`);
        copy[k] = v;
      }
      return { name: a.name, side: a.side, stats: copy };
    });
  }
}
