// A single check of one key (token bucket, fixed window or GCRA) on Redis: the short form of
// quota.lua when it can be, the general form of a set of one when a request id, the server's clock
// or a replaced limit's earlier versions need it, and the denied-key cache before either.
import type { QuotaKey } from "@tideward/quota-engine";
import { badInstant } from "@tideward/limiters/math";
import {
  EXHAUSTED,
  GCRA,
  BUCKET,
  OK,
  costError,
  decide,
  freshAmount,
  freshInstant,
  isCost,
  isInstant,
  keyError,
  limitError,
  step,
} from "@tideward/quota-engine/internal";
import type { Kind } from "@tideward/quota-engine/internal";
import { bytes } from "./bytes";
import { SINGLE, isKey, requestIdOf } from "./call-options";
import type { CallOptions } from "./call-options";
import { RedisVerdict } from "./decision";
import type { RedisAtomicReport, RedisDecision } from "./decision";
import type { DeniedCache } from "./denied";
import type { Names } from "./names";
import { disagree, unknownVerdict, verdict } from "./rules";
import type { Rule } from "./rules";
import { ANSWERED } from "./runner";
import type { Outcome, Runner } from "./runner";
import { quota } from "./scripts";
import { Section, live } from "./versions";
import { COMMITTED, SHORT_STATES, STATE, singleArgs } from "./wire";
import type { SetCall } from "./wire";

/** What single checks work with: the engine's limits, connection and caches. */
export interface SingleParts {
  readonly rules: ReadonlyMap<string, Rule>;
  readonly names: Names;
  readonly runner: Runner;
  readonly denied: DeniedCache;
  readonly serverClock: boolean;
  /** The expiry margin as the scripts read it. */
  readonly marginArg: string;
  /** Sends a set (of one) through the general form. */
  send(call: SetCall, ridKey: string | undefined, rid: string | undefined): Promise<RedisAtomicReport>;
  /** The outage mode's decision when Redis did not answer. */
  outage(outcome: Outcome, kind: Kind, key: QuotaKey, rule: Rule, now: number, cost: number): RedisDecision;
}

/** The single checks of one Redis engine. */
export class Singles {
  readonly #p: SingleParts;

  constructor(parts: SingleParts) {
    this.#p = parts;
  }

  check(
    kind: Kind,
    key: QuotaKey,
    limit: string,
    now: number,
    cost: number,
    options: CallOptions | undefined,
  ): Promise<RedisDecision> {
    if (!isKey(key)) throw keyError(key, "key");
    if (!isInstant(now)) throw badInstant(now, "now");
    if (!isCost(cost)) throw costError(cost, "cost");
    const rid = requestIdOf(options, SINGLE[kind]);
    let rule = this.#p.rules.get(limit);
    if (rule === undefined) {
      if (typeof limit !== "string") throw limitError(limit, "limit");
      return Promise.resolve(unknownVerdict(kind, limit, cost));
    }
    if (rule.overrides !== undefined) rule = rule.overrides.get(key.id) ?? rule;
    const tag = this.#p.names.tag(key);
    const stateKey = this.#p.names.state(tag, kind, limit, key, rule.numbers.oneNumber, rule.suffix);
    const clock = this.#p.serverClock ? this.#p.runner.now() : now;
    const denied = this.#p.denied;
    if (denied.size > 0 && !rule.shadow && cost <= (kind === GCRA ? rule.spec.burst : rule.spec.capacity)) {
      const hit = denied.get(stateKey, clock, cost);
      if (hit !== undefined) {
        const reset = hit.reset - (clock - hit.at);
        return Promise.resolve(
          new RedisVerdict({
            allowed: false,
            reason: "exhausted",
            cost,
            remaining: hit.remaining,
            retryAfter: hit.until - clock,
            resetAfter: reset > 0 ? reset : 0,
            trace: rule.traces[kind * 5 + EXHAUSTED],
            path: "cache",
            shadow: undefined,
            replayed: false,
          }),
        );
      }
    }
    let versions: Section | undefined;
    if (rule.versions.length !== 0 && live(rule, now)) {
      versions = new Section();
      versions.add(1, rule, kind, now, 2, this.#p.names, tag, key);
    }
    if (rid !== undefined || this.#p.serverClock || versions !== undefined) {
      // A set of one: the general form, which reads the server's clock, keeps a request id's
      // answer and reads a replaced limit's earlier versions.
      const call: SetCall = {
        n: 1,
        charges: [key, limit, cost, kind, rule],
        names: [stateKey],
        oneTag: true,
        unknown: -1,
        now,
        commit: true,
        versions,
      };
      const ridKey = rid === undefined ? undefined : this.#p.names.request(key, rid);
      return this.#p.send(call, ridKey, rid).then((report) => {
        const d = report.decisions[0];
        if (d.reason === "exhausted" && denied.size > 0 && !report.replayed && d.path === "store")
          denied.add(stateKey, clock, cost, d.remaining, d.retryAfter, d.resetAfter);
        return d;
      });
    }
    // The short form: committed on the caller's clock, no request id (see wire.ts).
    return this.#p.runner
      .run(quota, [stateKey], singleArgs(now, this.#p.marginArg, cost, rule, kind))
      .then((outcome) => {
        if (outcome.status !== ANSWERED) return this.#p.outage(outcome, kind, key, rule, now, cost);
        const r = bytes(outcome.reply, quota.name, SHORT_STATES + STATE);
        return this.#decided(r[0] === COMMITTED, r, kind, rule, stateKey, clock, now, cost);
      });
  }

  // A single check's decision from the short form's reply (whether the set of one committed: it
  // fit, or its limit is in shadow mode; and the state it read): the figures from the in-process
  // formulas, at the caller's clock `now`.
  #decided(
    committed: boolean,
    r: Buffer,
    kind: Kind,
    rule: Rule,
    stateKey: string,
    clock: number,
    now: number,
    cost: number,
  ): RedisDecision {
    const sa = r.readDoubleLE(SHORT_STATES);
    const fresh = sa !== sa;
    const sb = fresh ? 0 : r.readDoubleLE(SHORT_STATES + 8);
    const t = kind === BUCKET && !fresh && sb > now && !rule.numbers.oneNumber ? sb : now;
    const code = fresh
      ? decide(kind, rule.numbers, freshAmount(kind, rule.numbers), freshInstant(kind, t), t, cost)
      : decide(kind, rule.numbers, sa, sb, t, cost);
    if ((code === OK || rule.shadow) !== committed) throw disagree(quota.name);
    const d = verdict({ rule, kind, cost, code, figures: step, now, at: t, path: "store", replayed: false });
    const denied = this.#p.denied;
    if (code === EXHAUSTED && denied.size > 0)
      denied.add(stateKey, clock, cost, d.remaining, d.retryAfter, d.resetAfter);
    return d;
  }
}
