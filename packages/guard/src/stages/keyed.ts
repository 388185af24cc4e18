// Per-key limits as a stage: each client key's own limiters (a bucket, a GCRA flow, a sliding or a
// fixed window: see limits.ts), which admit's replaceLimit, removeLimit and overrides change at
// run time. Only in front of a server, where a request comes with its client's key. When a quota
// set follows, it is peeked at its place and charged once the set has committed (spent last), so
// a request the quota refuses spends none of it.
import { check } from "@tideward/time/internal";
import { KeyedFields } from "../keyed-fields";
import { KeyedLimits } from "../keyed-limits";
import { checkBytes, checkLimits } from "../limits";
import type { Limit } from "../limits";
import type { Ask, Host, Stage, StageDef } from "../stage";
import type { Field } from "../verdict";

/** admit's per-key limit options. */
export interface KeyedOption {
  /** Per-key limits, kept in process. */
  readonly limits?: readonly Limit[];
  /** The most client keys with limiter state at once. @defaultValue 100 000 */
  readonly maxKeys?: number;
  /**
   * The most bytes the per-key limiters may hold with `maxKeys` keys (each key's string counted at
   * its longest, 256 code units): a configuration past it is refused at once, saying what it
   * would hold. A sliding window holds 8 B a unit of quota for every key. @defaultValue 256 MiB
   */
  readonly maxBytes?: number;
}

/** Per-key limits in the pipeline: nothing is held once charged, so its token is `true`. */
export class KeyedStage implements Stage<true> {
  readonly kind = "rate";
  readonly status = 429;
  readonly last: boolean;
  readonly limits: KeyedLimits;
  /** The figures of its latest ask (units left, waits, the limits that refused), for the response's fields. */
  readonly asked: KeyedFields;

  /** @param last - peeked at its place and charged last (a quota set follows it) */
  constructor(limits: KeyedLimits, last: boolean) {
    this.limits = limits;
    this.asked = new KeyedFields(limits);
    this.last = last;
  }

  peek(now: number, ask: Ask): boolean {
    return this.#ask(now, ask, false);
  }

  enter(now: number, ask: Ask): true | undefined {
    return this.#ask(now, ask, true) ? true : undefined;
  }

  get violated(): readonly string[] {
    return this.asked.violated;
  }

  fields(): readonly Field[] {
    return this.asked.fields();
  }

  low(): boolean {
    return this.asked.low();
  }

  #ask(now: number, ask: Ask, commit: boolean): boolean {
    const wait = this.asked.ask(ask.key ?? "", now, ask.cost, commit);
    if (wait < 0) return true;
    ask.retryAfter = wait;
    return false;
  }
}

export const keyed: StageDef<KeyedOption, "server"> = {
  kind: "rate",
  options: ["limits", "maxKeys", "maxBytes"] satisfies (keyof KeyedOption)[],
  place: { server: 40 },
  parse(o, host: Host) {
    const maxKeys = o.maxKeys === undefined ? 100_000 : check.integer(o.maxKeys, `${host.owner} maxKeys`, 1);
    const maxBytes = o.maxBytes === undefined ? 2 ** 28 : check.positive(o.maxBytes, `${host.owner} maxBytes`);
    const checked = o.limits === undefined ? [] : checkLimits(o.limits, host.owner, host.now);
    // Refused before anything is allocated: what maxKeys keys would hold at most.
    checkBytes(checked, maxKeys, maxBytes, `${host.owner} limits`);
    if (checked.length === 0) return undefined;
    return new KeyedStage(new KeyedLimits(checked, maxKeys, maxBytes), o.quota !== undefined);
  },
};
