// The RateLimit-Policy and RateLimit fields admit answers. Each field is one line holding one
// list member per policy, joined as RFC 8941 joins lines: appended after another middleware's
// line, it extends that list, never replaces it.
import type { KeyedLimits } from "./keyed-limits";
import { MAX_LIMITS } from "./limits";
import type { Checked } from "./limits";
import { LIMIT_FIELD, POLICY_FIELD, limitMember, policyLine, seconds } from "./ratelimit-fields";
import type { PolicyState } from "./ratelimit-fields";
import { sfInteger, sfString } from "./structured";
import { NO_FIELDS } from "./field";
import type { Field } from "./field";

/** The two fields of `states`, none for none. */
export function fieldsOf(states: readonly PolicyState[]): Field[] {
  if (states.length === 0) return [];
  return [
    [POLICY_FIELD, policyLine(states)],
    [LIMIT_FIELD, states.map(limitMember).join(", ")],
  ];
}

/** A state as one number, -1 past what the cache keeps (it then writes the member afresh). */
function stateKey(r: number, t: number): number {
  return t < 4_096 && r < 2 ** 40 ? r * 4_096 + t : -1;
}

function remember<T>(cache: Map<number, T>, key: number, value: T): T {
  if (key < 0) return value;
  if (cache.size >= 1_024) cache.clear();
  cache.set(key, value);
  return value;
}

/**
 * The per-key limits asked for one request, and their fields.
 *
 * The policy line is written once for the limits every key is held to (again when they change).
 * Each policy's RateLimit member depends only on its state (units left, whole seconds until
 * more), so it is written once per state and kept, with the two fields, in a small cache: the
 * states requests meet repeat (every fresh client of a limit is in the same one), and then an
 * admitted request builds no string and no array. A key with an override of its own has its
 * fields written afresh.
 */
export class KeyedFields {
  readonly keyed: KeyedLimits;
  /** Units left of each limit, as the last {@link KeyedFields.ask} left them. */
  readonly remaining = new Float64Array(MAX_LIMITS);
  /** Milliseconds until each limit is full again, as the last ask left them. */
  readonly reset = new Float64Array(MAX_LIMITS);
  /** The names of the limits the last ask refused: copied only when one refuses. */
  readonly violated: string[] = [];
  #limits: readonly Checked[] = [];
  #policy = "";
  #prefix: string[] = [];
  #members: Map<number, string>[] = [];
  readonly #lines = new Map<number, readonly Field[]>();

  constructor(keyed: KeyedLimits) {
    this.keyed = keyed;
    this.#rebuild(keyed.limits);
  }

  #rebuild(now: readonly Checked[]): void {
    this.#limits = now;
    this.#policy = policyLine(now);
    // The member's start, written as limitMember writes it: the name as a String, then `r`.
    this.#prefix = now.map((l) => `${sfString(l.name)};r=`);
    this.#members = now.map(() => new Map<number, string>());
    this.#lines.clear();
  }

  /**
   * The limits of `key` asked at `now` (ms), charged `cost` when `commit`: as KeyedLimits.charge,
   * the figures left in `remaining`, `reset` and `violated`.
   */
  ask(key: string, now: number, cost: number, commit: boolean): number {
    if (this.violated.length > 0) this.violated.length = 0;
    return this.keyed.charge(key, now, cost, this.remaining, this.reset, this.violated, commit);
  }

  /** Whether a limit the last ask read has a tenth of its quota or less left. */
  low(): boolean {
    const held = this.keyed.current;
    for (let i = 0; i < held.length; i++) if (this.remaining[i] * 10 <= held[i].quota) return true;
    return false;
  }

  #member(i: number): string {
    const r = this.remaining[i];
    const t = seconds(this.reset[i]);
    const key = stateKey(r, t);
    const members = this.#members[i];
    return members.get(key) ?? remember(members, key, `${this.#prefix[i]}${sfInteger(r)};t=${sfInteger(t)}`);
  }

  /** The two fields of the last ask. */
  fields(): readonly Field[] {
    const held = this.keyed.current;
    if (held.length === 0) return NO_FIELDS;
    if (held !== this.#limits) {
      if (held !== this.keyed.limits)
        return fieldsOf(held.map((l, i) => ({ ...l, remaining: this.remaining[i], reset: this.reset[i] })));
      this.#rebuild(held);
    }
    const limits = this.#limits;
    const one = limits.length === 1 ? stateKey(this.remaining[0], seconds(this.reset[0])) : -1;
    const known = one < 0 ? undefined : this.#lines.get(one);
    if (known !== undefined) return known;
    let line = this.#member(0);
    for (let i = 1; i < limits.length; i++) line += `, ${this.#member(i)}`;
    return remember(
      this.#lines,
      one,
      Object.freeze([
        Object.freeze([POLICY_FIELD, this.#policy] as const),
        Object.freeze([LIMIT_FIELD, line] as const),
      ]),
    );
  }
}
