// A charge set on Redis: read once from the caller's objects, sent as one script call, and its
// report made from the script's reply with the in-process engine's own staging (repeated charges
// to one bucket add up on staged state; a set's wait is when the whole set fits).
import { badInstant, firstAfter, until } from "@tideward/limiters/math";
import type { QuotaCharge, QuotaKey } from "@tideward/quota-engine";
import {
  BUCKET,
  NOT_COMMITTED,
  OK,
  costError,
  decide,
  freshAmount,
  freshInstant,
  isCost,
  isInstant,
  keyError,
  kindError,
  kindOf,
  limitError,
  step,
} from "@tideward/quota-engine/internal";
import type { Kind, Rule as Numbers } from "@tideward/quota-engine/internal";
import { check } from "@tideward/time/internal";
import { shortReply } from "./bytes";
import { RedisVerdict } from "./decision";
import type { RedisAtomicReport, RedisDecision } from "./decision";
import type { Names } from "./names";
import { sameSlot } from "./names";
import { disagree, unknownVerdict, verdict } from "./rules";
import type { Rule } from "./rules";
import { quota } from "./scripts";
import { Section, live } from "./versions";
import { COMMITTED, GENERAL_STATES, OTHER_KEYS, REPLAYED, SHORT_STATES, STATE, STORED_CHARGE } from "./wire";
import type { SetCall } from "./wire";

/** Charge sets larger than this find repeated buckets with a Map instead of a scan (the script does the same). */
const SMALL_SET = 16;

/**
 * Reads each charge once, into the call's own array, and checks it there: nothing after reads the
 * caller's objects again.
 *
 * @throws TypeError or RangeError naming `charges[i]` and the field; a {@link CrossSlotError}
 *   when the keys cannot share a slot
 */
export function readSet(
  charges: readonly QuotaCharge[],
  now: number,
  commit: boolean,
  rules: ReadonlyMap<string, Rule>,
  names: Names,
  isKey: (key: unknown) => key is QuotaKey,
): SetCall {
  if (!Array.isArray(charges))
    throw new TypeError(`charges must be an array of QuotaCharge, got ${check.describe(charges)}`);
  if (!isInstant(now)) throw badInstant(now, "now");
  const n = charges.length;
  const copy = new Array<unknown>(n * 5);
  const stateNames: string[] = [];
  // Per charge whose limit has earlier versions to read: its index, its place among the names, its tag.
  let older: (number | string)[] | undefined;
  let unknown = -1;
  let firstTag: string | undefined;
  let oneTag = true;
  for (let i = 0; i < n; i++) {
    const c = charges[i] as QuotaCharge | undefined;
    if (c === null || typeof c !== "object")
      throw new TypeError(`charges[${i}] must be a QuotaCharge, got ${check.describe(c)}`);
    const { key, limit, cost, kind } = c;
    if (!isKey(key)) throw keyError(key, `charges[${i}].key`);
    if (typeof limit !== "string") throw limitError(limit, `charges[${i}].limit`);
    if (!isCost(cost)) throw costError(cost, `charges[${i}].cost`);
    const k = kindOf(kind);
    if (k === -1) throw kindError(kind, `charges[${i}].kind`);
    let rule = rules.get(limit);
    if (rule !== undefined && rule.overrides !== undefined) rule = rule.overrides.get(key.id) ?? rule;
    copy[i * 5] = key;
    copy[i * 5 + 1] = limit;
    copy[i * 5 + 2] = cost;
    copy[i * 5 + 3] = k;
    copy[i * 5 + 4] = rule;
    if (rule === undefined) {
      if (unknown < 0) unknown = i;
      continue;
    }
    const tag = names.tag(key);
    if (firstTag === undefined) firstTag = tag;
    else if (tag !== firstTag) oneTag = false;
    stateNames.push(names.state(tag, k, limit, key, rule.numbers.oneNumber, rule.suffix));
    if (rule.versions.length !== 0 && live(rule, now)) (older ??= []).push(i, stateNames.length, tag);
  }
  if (!oneTag) sameSlot(stateNames);
  let versions: Section | undefined;
  if (older !== undefined) {
    // Each charge's names in its limit's earlier versions, after the charges' own in KEYS.
    versions = new Section();
    for (let j = 0; j < older.length; j += 3) {
      const i = older[j] as number;
      const rule = copy[i * 5 + 4] as Rule;
      const key = copy[i * 5] as QuotaKey;
      versions.add(
        older[j + 1] as number,
        rule,
        copy[i * 5 + 3] as Kind,
        now,
        stateNames.length + 1,
        names,
        older[j + 2] as string,
        key,
      );
    }
  }
  return { n, charges: copy, names: stateNames, oneTag, unknown, now, commit, versions };
}

// Per-charge working space for evaluating a set's reply, kept between calls: a reply is evaluated
// synchronously in its callback, so one scratch serves every call in flight.
class Scratch {
  size = 0;
  names: string[] = [];
  numbers: Numbers[] = [];
  kinds = new Uint8Array(0);
  shadow = new Uint8Array(0);
  present = new Uint8Array(0);
  codes = new Uint8Array(0);
  costs = new Float64Array(0);
  a = new Float64Array(0);
  b = new Float64Array(0);
  sa = new Float64Array(0);
  sb = new Float64Array(0);
  rem = new Float64Array(0);
  retry = new Float64Array(0);
  reset = new Float64Array(0);

  fit(n: number): this {
    if (n > this.size) {
      const size = Math.max(8, n, this.size * 2);
      this.kinds = new Uint8Array(size);
      this.shadow = new Uint8Array(size);
      this.present = new Uint8Array(size);
      this.codes = new Uint8Array(size);
      this.costs = new Float64Array(size);
      this.a = new Float64Array(size);
      this.b = new Float64Array(size);
      this.sa = new Float64Array(size);
      this.sb = new Float64Array(size);
      this.rem = new Float64Array(size);
      this.retry = new Float64Array(size);
      this.reset = new Float64Array(size);
      this.size = size;
    }
    return this;
  }
}

/**
 * Whether a request id's stored answer `r` (from byte `o`, after the "R") was made by charges to
 * the limits of `call`, in order: its charges are stored after the states, each as the cost and
 * the limit's two numbers as sent (the script has already compared the keys, by their digest).
 * Resolves the costs to replay into `costs` (the first call's).
 */
function storedCosts(call: SetCall, r: Buffer, o: number, costs: Float64Array): boolean {
  const m = call.names.length;
  if (r.length !== o + GENERAL_STATES + m * (STATE + STORED_CHARGE)) return false;
  const c = call.charges;
  let at = o + GENERAL_STATES + m * STATE;
  let j = 0;
  for (let i = 0; i < call.n; i++) {
    const rule = c[i * 5 + 4] as Rule | undefined;
    if (rule === undefined) continue;
    const numbers = rule.wire[c[i * 5 + 3] as Kind];
    if (r.readDoubleLE(at + 8) !== numbers[0] || r.readDoubleLE(at + 16) !== numbers[1]) return false;
    const cost = r.readDoubleLE(at);
    costs[j++] = cost < 0 ? -cost : cost;
    at += STORED_CHARGE;
  }
  return true;
}

/** Makes a set's report from the script's reply. */
export class SetReports {
  readonly #scratch = new Scratch();
  readonly #serverClock: boolean;

  constructor(serverClock: boolean) {
    this.#serverClock = serverClock;
  }

  /**
   * The report of `call` from the script's reply `r` (undefined when nothing was sent; `short`
   * for the short form's reply, with no clock in it): the states staged as the in-process engine
   * stages them, at the script's clock. A replayed answer is staged with the first call's costs.
   *
   * @throws RangeError when a request id's stored answer was made by charges to other limits
   *   (`requestId` names it); a ScriptError when the script and the formulas disagree
   */
  report(call: SetCall, r: Buffer | undefined, short: boolean, requestId: string | undefined): RedisAtomicReport {
    const m = call.names.length;
    const s = this.#scratch.fit(m);
    const c = call.charges;
    let now = call.now;
    let t = now;
    let replayed = false;
    let failedKnown = -1;
    if (r !== undefined) {
      const o = r[0] === REPLAYED ? 1 : 0;
      replayed = o === 1;
      if (r[0] === OTHER_KEYS || (replayed && !storedCosts(call, r, o, s.costs))) {
        throw new RangeError(
          `[tideward] [redis] requestId ${JSON.stringify(requestId)} was first used for charges to other limits: its stored answer is replayed only for charges to the same limits, in the same order`,
        );
      }
      const states = short ? SHORT_STATES : o + GENERAL_STATES;
      if (!replayed && r.length !== states + STATE * m) throw shortReply(quota.name, r.length, states + STATE * m);
      // The general form's clock, after the first byte: the server's, or the first call's.
      if (!short && (replayed || this.#serverClock)) now = r.readDoubleLE(o + 1);
      t = now;
      let j = 0;
      for (let i = 0; i < call.n; i++) {
        const rule = c[i * 5 + 4] as Rule | undefined;
        if (rule === undefined) continue;
        const kind = c[i * 5 + 3] as Kind;
        const at = states + j * STATE;
        const a = r.readDoubleLE(at);
        s.names[j] = call.names[j];
        s.numbers[j] = rule.numbers;
        s.kinds[j] = kind;
        s.shadow[j] = rule.shadow ? 1 : 0;
        if (!replayed) s.costs[j] = c[i * 5 + 2] as number;
        s.present[j] = a === a ? 1 : 0;
        s.a[j] = a;
        s.b[j] = a === a ? r.readDoubleLE(at + 8) : 0;
        // A bucket of two numbers is never read behind its own reading (one of one number has none).
        if (kind === BUCKET && a === a && s.b[j] > t && !rule.numbers.oneNumber) t = s.b[j];
        j++;
      }
      failedKnown = this.#stage(m, t);
      const committed = r[o] === COMMITTED;
      if (committed !== (failedKnown < 0 || !call.commit || call.unknown >= 0)) throw disagree(quota.name);
    }
    const decisions: RedisDecision[] = new Array<RedisDecision>(call.n);
    let failed = -1;
    let j = 0;
    for (let i = 0; i < call.n; i++) {
      const rule = c[i * 5 + 4] as Rule | undefined;
      const kind = c[i * 5 + 3] as Kind;
      if (rule === undefined) {
        if (failed < 0) failed = i;
        decisions[i] = unknownVerdict(kind, c[i * 5 + 1] as string, c[i * 5 + 2] as number);
        continue;
      }
      const cost = r === undefined ? (c[i * 5 + 2] as number) : s.costs[j];
      if (j === failedKnown && failed < 0) failed = i;
      decisions[i] = verdict({
        rule,
        kind,
        cost,
        code: s.codes[j],
        figures: { remaining: s.rem[j], passAt: s.retry[j], resetAt: s.reset[j] },
        now,
        at: t,
        path: "store",
        replayed,
      });
      j++;
    }
    if (failed >= 0) {
      // Charges that fit in a set that did not commit say so, as in process.
      for (let i = 0; i < call.n; i++) {
        const d = decisions[i];
        if (d.allowed && d.shadow === undefined)
          decisions[i] = new RedisVerdict({
            ...d,
            allowed: false,
            reason: "not_committed",
            retryAfter: 0,
            trace: (c[i * 5 + 4] as Rule).traces[(c[i * 5 + 3] as Kind) * 5 + NOT_COMMITTED],
          });
      }
    }
    // Computed last: it stages the set again at later instants, over the scratch.
    const retryAfter = failed < 0 ? 0 : call.unknown >= 0 ? Infinity : this.#setRetry(m, t, now);
    return {
      allowed: failed < 0,
      committed: call.commit && failed < 0,
      failedIndex: failed,
      retryAfter,
      decisions,
      path: "store",
      replayed,
    };
  }

  // Evaluates the scratch's m charges at `t` on staged state, as the in-process engine's #stage
  // does: each charge sees its bucket after the latest earlier charge to it that fit. Returns the
  // index of the first enforced charge that did not fit, or -1.
  #stage(m: number, t: number): number {
    const s = this.#scratch;
    const latest = m > SMALL_SET ? new Map<string, number>() : undefined;
    let failed = -1;
    for (let j = 0; j < m; j++) {
      const name = s.names[j];
      const kind = s.kinds[j] as Kind;
      const numbers = s.numbers[j];
      let p = -1;
      if (latest !== undefined) p = latest.get(name) ?? -1;
      else {
        for (let q = j - 1; q >= 0; q--) {
          if (s.codes[q] === OK && s.names[q] === name) {
            p = q;
            break;
          }
        }
      }
      let a: number;
      let b: number;
      if (p >= 0) {
        a = s.sa[p];
        b = s.sb[p];
      } else if (s.present[j] === 1) {
        a = s.a[j];
        b = s.b[j];
      } else {
        a = freshAmount(kind, numbers);
        b = freshInstant(kind, t);
      }
      const code = decide(kind, numbers, a, b, t, s.costs[j]);
      s.codes[j] = code;
      s.sa[j] = step.amount;
      s.sb[j] = step.instant;
      s.rem[j] = step.remaining;
      s.retry[j] = step.passAt;
      s.reset[j] = step.resetAt;
      if (code === OK) latest?.set(name, j);
      else if (failed < 0 && s.shadow[j] === 0) failed = j;
    }
    return failed;
  }

  // When the whole set would fit, as a wait from `now`: the in-process engine's #setRetry — the
  // latest, over the buckets the enforced charges touch, of the first instant each holds the
  // set's total demand on it, then confirmed by staging the set there when a bucket is charged
  // twice (their staged roundings can differ from their total's by a float step).
  #setRetry(m: number, t: number, now: number): number {
    const s = this.#scratch;
    let worst = t;
    let repeated = false;
    for (let j = 0; j < m; j++) {
      if (s.shadow[j] === 1) continue;
      const name = s.names[j];
      let first = true;
      for (let q = 0; q < j && first; q++) if (s.names[q] === name) first = false;
      if (!first) continue;
      let total = s.costs[j];
      for (let q = j + 1; q < m; q++) {
        if (s.names[q] === name) {
          total += s.costs[q];
          repeated = true;
        }
      }
      const kind = s.kinds[j] as Kind;
      if (s.present[j] === 1) decide(kind, s.numbers[j], s.a[j], s.b[j], t, total);
      else decide(kind, s.numbers[j], freshAmount(kind, s.numbers[j]), freshInstant(kind, t), t, total);
      if (step.passAt > worst) worst = step.passAt;
    }
    if (worst === Infinity) return Infinity;
    if (repeated && this.#stage(m, worst) >= 0) worst = firstAfter(worst, (x) => this.#stage(m, x) < 0);
    return until(now, t, worst);
  }
}
