import { check } from "@tideward/time/internal";
import { byName } from "./by-name";
import { monitors } from "./monitor";
import type { Monitor } from "./monitor";
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
 * The policies every attempt must pass, and what each holds for each attempt in flight.
 *
 * Client-side policies are asked when the client sends an attempt, in their order; server-side
 * ones when it reaches the server, in theirs. The first refusal ends the attempt, and the
 * places the policies before it on that side gave are released (on a server refusal, the
 * client side's too, once the client hears of it). With `invariants`, every admission is also
 * checked against each policy's envelopes, and every refusal against the exact ones.
 */
export class Chain {
  readonly adapters: readonly Adapter[];
  readonly #names: readonly string[];
  readonly #sides: readonly (readonly number[])[];
  /** Client-side policies. */
  readonly clients: number;
  /** Server-side policies. */
  readonly servers: number;
  // Per policy, the token it gave each attempt slot.
  readonly #tokens: unknown[][];
  /** Per policy: its admitted attempts not yet settled or released. */
  readonly inside: number[];
  readonly monitors: readonly (readonly Monitor[])[] | undefined;
  /** Policies that say how many they hold (`held`). */
  readonly holders: readonly number[];
  readonly #delays: boolean;
  readonly #reasonCache: string[];
  readonly #reasonIndex: number[];
  readonly #rec: Recorder;
  readonly #violation: Violation;
  /** The policy being asked and how, for a report when it throws: index × 8 + method. */
  doing = -1;
  /** Set by {@link Chain.admit}: the delay the admissions asked for, ms. */
  delay = 0;
  /** Set by {@link Chain.admit} on a refusal: the reason's index in the recorder. */
  reason = 0;

  /**
   * @param adapters - the policies' adapters for this run, made and checked by the run
   * @param invariants - whether to check every admission against the policies' envelopes
   */
  constructor(adapters: readonly Adapter[], invariants: boolean, rec: Recorder, violation: Violation) {
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
    this.#delays = adapters.some((a) => "delay" in a);
    this.#tokens = adapters.map(() => new Array<unknown>(256).fill(undefined));
    this.inside = adapters.map(() => 0);
    this.#reasonCache = adapters.map(() => "");
    this.#reasonIndex = adapters.map(() => -1);
    this.#rec = rec;
    this.#violation = violation;
    // Checked as each policy was made (see Chain.adapters): this does not throw.
    this.monitors = invariants ? adapters.map((a) => monitors(a.envelopes, a.name)) : undefined;
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
    for (const t of this.#tokens) while (t.length < n) t.push(undefined);
  }

  /**
   * Asks every policy on `side` to admit attempt `a` at `now` (ms): true when all did. On a
   * refusal, the places the ones before it on that side gave are released, and `reason` is set.
   */
  admit(side: number, a: number, now: number, key: number, cost: number): boolean {
    const list = this.#sides[side];
    const adapters = this.adapters;
    const monitors = this.monitors;
    let delay = 0;
    for (let j = 0; j < list.length; j++) {
      const i = list[j];
      const ad = adapters[i];
      this.doing = i * 8 + ADMIT;
      const token = ad.admit(now, key, cost);
      if (token === undefined) {
        if (monitors !== undefined) this.#checkRefusal(i, now, key, cost);
        for (let k = j - 1; k >= 0; k--) this.#release(list[k], a, now, key);
        this.reason = this.#reasonOf(i);
        return false;
      }
      this.#tokens[i][a] = token;
      this.inside[i]++;
      if (monitors !== undefined) {
        for (const m of monitors[i]) {
          const broken = m.admit(now, key, cost);
          if (broken !== undefined) this.#violation(i, m.label, broken, now);
        }
      }
      if (this.#delays) {
        this.doing = i * 8 + DELAY;
        const d = ad.delay;
        if (d !== undefined) {
          if (!(typeof d === "number" && d >= 0 && d < Infinity))
            throw new RangeError(
              `policy ${ad.name} delay must be a finite number of milliseconds, 0 or more, got ${check.describe(d)}`,
            );
          delay += d;
        }
      }
    }
    this.delay = delay;
    return true;
  }

  /** Releases what every policy on `side` holds for attempt `a` (it never ran). */
  release(side: number, a: number, now: number, key: number): void {
    const list = this.#sides[side];
    for (let k = list.length - 1; k >= 0; k--) this.#release(list[k], a, now, key);
  }

  /** Tells every policy on `side` how attempt `a` went at `now` (ms). */
  settle(side: number, a: number, now: number, key: number, ok: boolean): void {
    const list = this.#sides[side];
    for (let j = 0; j < list.length; j++) {
      const i = list[j];
      const token = this.#tokens[i][a];
      this.#tokens[i][a] = undefined;
      this.inside[i]--;
      this.doing = i * 8 + SETTLE;
      this.adapters[i].settle(token, now, ok);
      if (this.monitors !== undefined) for (const m of this.monitors[i]) m.leave(key);
    }
  }

  #release(i: number, a: number, now: number, key: number): void {
    const token = this.#tokens[i][a];
    this.#tokens[i][a] = undefined;
    this.inside[i]--;
    this.doing = i * 8 + RELEASE;
    this.adapters[i].release?.(token, now);
    if (this.monitors !== undefined) for (const m of this.monitors[i]) m.leave(key);
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
