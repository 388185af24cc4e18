// Reserve, then settle, on Redis: a reserve is a charge set committed by quota.lua with its record
// written beside it (same script call, same slot), a settle or cancel is one settle.lua call that
// applies every charge's difference and closes the record. The record is the truth — its status,
// its expiry on the decisions' clock, each charge's cost and window — and lives in Redis with its
// time to live, so a process that dies after reserving leaks nothing: the reservation expires,
// settled as reserved. What the process keeps is what it needs to call settle.lua: each
// reservation's charges as read (their keys' names, limits, kinds and costs), until it expires.
import { until } from "@tideward/limiters/math";
import type {
  QuotaCharge,
  QuotaKey,
  ReserveCode,
  ReserveReport,
  SettleResult,
  SettledCharge,
} from "@tideward/quota-engine";
import {
  KIND_NAMES,
  actualsOf,
  alreadyClosed,
  checkId,
  checkReserveId,
  checkReserveOptions,
  checkReserveTtl,
  isInstant,
  readActual,
  replayed,
  unknownDimension,
  unknownReservation,
  unreserved,
} from "@tideward/quota-engine/internal";
import type { Kind, Reserved } from "@tideward/quota-engine/internal";
import { badInstant } from "@tideward/limiters/math";
import { bytes } from "./bytes";
import type { SetReports } from "./charge-set";
import { readSet } from "./charge-set";
import type { RedisAtomicReport } from "./decision";
import type { Names } from "./names";
import type { Path } from "./policy";
import { sameSlot } from "./names";
import type { RedisQuotaPolicy } from "./quota-policy";
import type { Rule } from "./rules";
import { ANSWERED } from "./runner";
import type { Outcome, Runner } from "./runner";
import { quota, settle } from "./scripts";
import { Section, live } from "./versions";
import { DUPLICATE, OTHER_CHARGES, REPLAYED, SETTLED, SETTLED_NOW, UNKNOWN_ID, setWire, settleWire } from "./wire";
import type { SetCall } from "./wire";

/** A {@link @tideward/quota-engine#ReserveReport | ReserveReport} of a Redis-backed engine. */
export interface RedisReserveReport extends ReserveReport {
  /** One decision a charge, as `checkAtomic` answers them; empty when the reserve evaluated nothing (see `code`). */
  readonly decisions: RedisAtomicReport["decisions"];
  /** Which part answered (see {@link Path}). */
  readonly path: Path;
  /** Whether an open reservation of this id and these charges answered (`code` `"replayed"`): nothing was charged again. */
  readonly replayed: boolean;
}

/** Records past expiry dropped from the process's book each time a reservation is made. */
const EXPIRE_STEP = 2;

/** A reservation this process made, as its settle reads it: its charges as its reserve read them. */
class Held implements Reserved {
  /** Whether it is open as far as this process knows (a settle that got no answer leaves it so). */
  open = true;
  /** Once closed: whether it was settled, else cancelled. */
  settled = false;

  constructor(
    readonly id: string,
    readonly call: SetCall,
    /** Its record's name; undefined for a reservation of no charges, which lives here only. */
    readonly record: string | undefined,
    /** When it expires, on the caller's clock (ms). */
    readonly expiresAt: number,
  ) {}

  get size(): number {
    return this.call.n;
  }

  key(i: number): QuotaKey {
    return this.call.charges[i * 5] as QuotaKey;
  }

  limit(i: number): string {
    return this.call.charges[i * 5 + 1] as string;
  }

  kind(i: number): Kind {
    return this.call.charges[i * 5 + 3] as Kind;
  }

  cost(i: number): number {
    return this.call.charges[i * 5 + 2] as number;
  }

  /** Kept in the record, not here. */
  end(): number {
    return 0;
  }
}

/** What the reservations use of their engine. */
export interface Engine {
  readonly policy: RedisQuotaPolicy;
  readonly runner: Runner;
  readonly names: Names;
  readonly rules: ReadonlyMap<string, Rule>;
  readonly reports: SetReports;
  readonly serverClock: boolean;
  readonly margin: string;
  readonly isKey: (key: unknown) => key is QuotaKey;
  /** A set's report from the outage mode, for a call Redis did not answer. */
  readonly outage: (outcome: Outcome, call: SetCall) => RedisAtomicReport;
  /** A set sent as a plain charge set (a peek when a limit is unknown). */
  readonly send: (call: SetCall) => Promise<RedisAtomicReport>;
}

export class Reservations {
  readonly #engine: Engine;
  // By id, in the order made (which is, at one time to live, the order they expire).
  readonly #held = new Map<string, Held>();
  #open = 0;
  #made = 0;
  // Ids this engine makes: `#`, a random stem of its own (ids are unique across processes), a count.
  readonly #stem = `#${Math.floor(Math.random() * 2 ** 52).toString(36)}.`;

  constructor(engine: Engine) {
    this.#engine = engine;
  }

  /** Reservations open, as far as this process knows. */
  get open(): number {
    return this.#open;
  }

  reserve(charges: readonly QuotaCharge[], now: number, options: unknown): Promise<RedisReserveReport> {
    const e = this.#engine;
    let call: SetCall;
    let id: string;
    let ttl: number;
    // Whether the engine made the id (then unique, and never sent twice).
    let made: boolean;
    try {
      checkReserveOptions(options);
      const o = options as { id?: unknown; ttl?: unknown } | undefined;
      const given = o?.id;
      const life = o?.ttl;
      if (given !== undefined) checkReserveId(given);
      if (life !== undefined) checkReserveTtl(life);
      ttl = life ?? e.policy.reservationTtl;
      call = readSet(charges, now, true, e.rules, e.names, e.isKey);
      made = given === undefined;
      id = given ?? this.#stem + (++this.#made).toString(36);
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    if (!this.#room(now)) return Promise.resolve(report(unreserved(id, "reservation_limit", 0)));
    if (call.unknown >= 0)
      // A limit of no such name: refused as the charge set is, nothing sent to be reserved.
      return e.send(call).then((r) => reserved(r, id, "refused", 0));
    if (call.n === 0) {
      this.#keep(new Held(id, call, undefined, now + ttl));
      return Promise.resolve({
        ...e.reports.report(call, undefined, false, undefined),
        id,
        code: "reserved",
        expiresAfter: ttl,
      });
    }
    let record: string;
    let wire;
    try {
      record = e.names.record(call.charges[0] as QuotaKey, id);
      if (!call.oneTag) sameSlot([...call.names, record]);
      wire = setWire(call, e.serverClock, e.margin, record, String(ttl), true, made);
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    return e.runner.run(quota, wire.keys, wire.args).then((outcome): RedisReserveReport => {
      if (outcome.status !== ANSWERED) {
        // Unanswered: the outage mode decides. When it admits, the reservation is kept here so
        // that its settle reaches Redis, which settles it if the script did run and else answers
        // that it knows no such id.
        const r = e.outage(outcome, call);
        if (!r.allowed) return reserved(r, id, "refused", 0);
        this.#keep(new Held(id, call, record, now + ttl));
        return reserved(r, id, "reserved", ttl);
      }
      const r = bytes(outcome.reply, quota.name, 1);
      if (r[0] === DUPLICATE) return report(unreserved(id, "duplicate_id", Infinity));
      if (r[0] === REPLAYED) {
        if (r.length !== 17)
          throw new RangeError(`[tideward] [redis] a reserve's replay has ${r.length} bytes, not 17`);
        const at = r.readDoubleLE(1);
        if (!this.#held.has(id)) this.#keep(new Held(id, call, record, now + (r.readDoubleLE(9) - at)));
        return {
          ...replayed,
          decisions: [],
          id,
          expiresAfter: until(at, at, r.readDoubleLE(9)),
          path: "store",
          replayed: true,
        };
      }
      const set = e.reports.report(call, r, wire.short, undefined);
      if (!set.committed) return reserved(set, id, "refused", 0);
      this.#keep(new Held(id, call, record, now + ttl));
      return reserved(set, id, "reserved", until(now, now, now + ttl));
    });
  }

  /** Settles (`given` defined) or cancels reservation `id` at `now`. */
  close(id: string, actual: unknown, now: number, settling: boolean): Promise<SettleResult> {
    const e = this.#engine;
    let held: Held | undefined;
    let units: number[] | string;
    try {
      checkId(id, "id");
      const given = settling ? readActual(actual) : undefined;
      if (!isInstant(now)) throw badInstant(now, "now");
      held = this.#find(id, now);
      if (held === undefined) return Promise.resolve(unknownReservation(id));
      // Closed, as Redis answered: it answers so again, before the actual is read against it.
      if (!held.open) return Promise.resolve(alreadyClosed(id, held.settled));
      units = actualsOf(held, given);
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    if (typeof units === "string") return Promise.resolve(unknownDimension(held, units));
    const h = held;
    const actuals = units;
    if (h.record === undefined) {
      // No charges: nothing in Redis to settle.
      this.#closed(h, settling);
      return Promise.resolve({ ok: true as const, id, charges: [] });
    }
    const n = h.size;
    const rules = new Array<Rule | undefined>(n);
    const kinds = new Array<Kind>(n);
    const reserved = new Array<number>(n);
    let moved: { names: string[]; versions: Section } | undefined;
    for (let i = 0; i < n; i++) {
      const base = e.rules.get(h.limit(i));
      const rule = base?.overrides === undefined ? base : (base.overrides.get(h.key(i).id) ?? base);
      rules[i] = rule;
      kinds[i] = h.kind(i);
      reserved[i] = h.cost(i);
      // A limit replaced or a key overridden since the reserve: its state has a name of the rule's now.
      if (rule !== undefined && (rule.version !== 0 || rule.own !== undefined)) moved = this.#moved(h, rules, now);
    }
    const wire = settleWire(
      {
        record: h.record,
        names: h.call.names,
        now,
        debt: e.policy.topUp === "debt",
        settled: settling,
        units: actuals,
        reserved,
        rules,
        kinds,
        moved,
      },
      e.serverClock,
      e.margin,
    );
    return e.runner.run(settle, wire.keys, wire.args).then((outcome) => {
      if (outcome.status !== ANSWERED) throw unanswered(id, outcome);
      const r = bytes(outcome.reply, settle.name, 1);
      const code = r[0];
      if (code === UNKNOWN_ID) {
        this.#drop(h);
        return unknownReservation(id);
      }
      if (code === OTHER_CHARGES)
        throw new RangeError(
          `[tideward] [redis] reservation ${JSON.stringify(id)} in Redis was made for other keys than this process reserved: nothing changed`,
        );
      if (code !== SETTLED_NOW) {
        const settled = String.fromCharCode(code) === SETTLED;
        this.#closed(h, settled);
        return alreadyClosed(id, settled);
      }
      if (r.length !== 1 + 8 * n)
        throw new RangeError(`[tideward] [redis] a settle's reply has ${r.length} bytes, not ${1 + 8 * n}`);
      this.#closed(h, settling);
      const out = new Array<SettledCharge>(n);
      for (let i = 0; i < n; i++) {
        const reserved = h.cost(i);
        const delta = actuals[i] - reserved;
        const known = rules[i] !== undefined;
        const forgiven = known ? r.readDoubleLE(1 + 8 * i) : delta > 0 ? delta : 0;
        out[i] = {
          key: h.key(i),
          limit: h.limit(i),
          kind: KIND_NAMES[h.kind(i)],
          reserved,
          actual: actuals[i],
          refunded: delta < 0 && known ? -delta : 0,
          toppedUp: delta > forgiven ? delta - forgiven : 0,
          forgiven,
        };
      }
      return { ok: true as const, id, charges: out };
    });
  }

  // Each charge's name under its rule now (the reserve's when its limit is gone), and the section
  // of their earlier versions; undefined when every name is the reserve's.
  #moved(
    h: Held,
    rules: readonly (Rule | undefined)[],
    now: number,
  ): { names: string[]; versions: Section } | undefined {
    const e = this.#engine;
    const n = h.size;
    const names = h.call.names.slice();
    const versions = new Section();
    let changed = false;
    for (let i = 0; i < n; i++) {
      const rule = rules[i];
      if (rule === undefined) continue;
      const key = h.key(i);
      const tag = e.names.tag(key);
      names[i] = e.names.state(tag, h.kind(i), h.limit(i), key, rule.numbers.oneNumber, rule.suffix);
      if (names[i] !== h.call.names[i]) changed = true;
      if (rule.versions.length !== 0 && live(rule, now))
        versions.add(i + 1, rule, h.kind(i), now, 2 + 2 * n, e.names, tag, key);
    }
    return changed ? { names, versions } : undefined;
  }

  // The reservation of `id` this process keeps, unless past its expiry at `now` (then dropped).
  #find(id: string, now: number): Held | undefined {
    const h = this.#held.get(id);
    if (h === undefined || now < h.expiresAt) return h;
    this.#drop(h);
    return undefined;
  }

  // Whether one more may open at `now`: a few past expiry dropped (all of them when at the most).
  #room(now: number): boolean {
    this.#expire(now, EXPIRE_STEP);
    if (this.#open < this.#engine.policy.maxReservations) return true;
    this.#expire(now, Infinity);
    return this.#open < this.#engine.policy.maxReservations;
  }

  #expire(now: number, budget: number): void {
    let n = 0;
    for (const h of this.#held.values()) {
      if (n >= budget) break;
      if (now < h.expiresAt) {
        if (budget !== Infinity) break;
        continue;
      }
      this.#drop(h);
      n++;
    }
  }

  #keep(h: Held): void {
    const old = this.#held.get(h.id);
    if (old !== undefined) this.#drop(old);
    // Closed ones are kept until they expire so a second settle finds Redis's answer; at most as
    // many as may be open.
    if (this.#held.size >= 2 * this.#engine.policy.maxReservations) {
      const first = this.#held.values().next().value;
      if (first !== undefined) this.#drop(first);
    }
    this.#held.set(h.id, h);
    this.#open++;
  }

  // Marks `h` closed (settled, or else cancelled), as Redis answered.
  #closed(h: Held, settled: boolean): void {
    if (h.open) {
      h.open = false;
      h.settled = settled;
      this.#open--;
    }
  }

  #drop(h: Held): void {
    this.#closed(h, false);
    if (this.#held.get(h.id) === h) this.#held.delete(h.id);
  }
}

// A charge set's report as a reserve's: one object of one shape, its fields written out (a spread
// of the report would copy it into a second object a call).
function reserved(r: RedisAtomicReport, id: string, code: ReserveCode, expiresAfter: number): RedisReserveReport {
  return {
    allowed: r.allowed,
    committed: r.committed,
    failedIndex: r.failedIndex,
    retryAfter: r.retryAfter,
    decisions: r.decisions,
    id,
    code,
    expiresAfter,
    path: r.path,
    replayed: r.replayed,
  };
}

// A reserve answered without a script call: from the store's side, with nothing charged.
function report(r: ReserveReport): RedisReserveReport {
  return { ...r, decisions: [], path: "store", replayed: false };
}

// A settle Redis did not answer: it may have run (a retry answers `already_settled` if it did).
function unanswered(id: string, outcome: Outcome): Error {
  const why = outcome.error instanceof Error ? `: ${outcome.error.message}` : "";
  return new Error(
    `[tideward] [redis] settle of reservation ${JSON.stringify(id)} got no answer from Redis${why}; settle again with the same id (it settles once)`,
    { cause: outcome.error },
  );
}
