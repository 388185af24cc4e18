// quota.lua's protocol: every argument list the engine sends the script is made here, and the
// layout of every reply it answers is named here (charge-set.ts, batch.ts and engine.ts read them
// with these names). The script, src/lua/quota.lua with its parts, reads and answers exactly this:
// change both together, then run `pnpm embed`.
//
// A limit crosses as two numbers, p1 and p2, whose signs say its kind (`Rule.wire`, made in
// rules.ts; parts/state.lua reads them):
//   p1 > 0, p2 > 0   a token bucket: p1 its capacity, p2 tokens a millisecond; or, when p1 is
//                    not whole, a token bucket of one number: p1 − 0.5 its capacity, p2 its tick
//   p1 > 0, p2 < 0   GCRA: p1 its burst, -p2 the emission interval (ms)
//   p1 < 0, p2 > 0   a fixed window: -p1 its capacity, p2 the window (ms)
//   p1 < 0, p2 < 0   an aligned fixed window, likewise
// A charge crosses as three arguments: its cost (negative for a shadow limit's charge, -cost made
// when it fits and never refusing the set), p1 and p2. Every number is the shortest decimal that
// reads back as its double, so nothing is rounded on the way in; every state comes back as the
// bytes of its doubles, so nothing is rounded on the way out.
//
// The short form, a set committed on the caller's clock with no request id (a single check is a
// set of one):
//   KEYS   the state each charge touches, in order (repeated when charges repeat a key)
//   ARGV   now (ms), the expiry margin (ms), then a charge's three arguments each
//   reply  COMMITTED or REFUSED, then STATE bytes a charge: the state its key held before the call
//          (two little-endian doubles; two NaNs when absent). A set of one commits when its charge
//          fits, or when its limit is in shadow mode.
// A reserve in the short form, under an id the engine made on the caller's clock, its time to live
// and the margin whole ms and no window among its charges (the bench's user + tenant + model):
//   KEYS   likewise, then its record's name
//   ARGV   now (ms), the expiry margin (ms), how long Redis keeps the record (`recordPx`: its time
//          to live, the margin and 1 ms), then a charge's three arguments each
//   reply  a set's in the short form. The set committed, its record is written as RESERVE_MADE
//          writes it below but for its head alone (see parts/state.lua): the process keeps the
//          charges and sends each one's cost to settle.lua, the only place it is read.
// The general form:
//   KEYS   likewise, then a request id's key when one is kept
//   ARGV   now (ms; '' for Redis's TIME), the mode (COMMIT, PEEK or BATCH), how long a request
//          id's answer is kept (ms; '0' for none), the expiry margin (ms), then
//          - a set (COMMIT, PEEK): a charge's three arguments each. Reply: COMMITTED (a peek's
//            always) or REFUSED, now (8 bytes), STATE bytes a charge; or, when the request id was
//            seen, REPLAYED and what was kept (the reply as first given, then each charge as sent:
//            cost, p1, p2, three doubles, STORED_CHARGE bytes), charging nothing; or OTHER_KEYS
//            when it was seen for charges to other keys or in another order.
//          - a reserve (RESERVE; ARGV[3] the reservation's time to live, ms of the decisions'
//            clock; KEYS ends with its record's name): a set committed as COMMIT commits it, and
//            its record written (see parts/state.lua). Reply: a set's; or, when an open record of
//            this id holds the same charges, REPLAYED, now and the instant it expires (two
//            doubles), charging nothing; or DUPLICATE when the id is taken otherwise.
//          - a reserve under an id the engine made (RESERVE_MADE): likewise, but no record is read
//            first (the id is unique and never sent twice) and the record keeps no digest of its
//            keys (NO_DIGEST; settle.lua then compares none). Reply: a set's.
//          - a batch (BATCH; KEYS[i] the state input i touches): its one limit's p1 and p2, then two
//            arguments an input: its cost and its now ('' for the batch's). Each input is charged
//            on its own, in order. Reply: COMMITTED, now (8 bytes), STATE bytes for each distinct
//            key in the order first met.
//
// A replaced limit's earlier versions (versions.ts, parts/versions.lua): a set, a reserve or a
// batch any of whose limits has earlier versions still read is sent in the general form with its
// mode in upper case; its KEYS then hold, after the charges' own (before a request id's), each
// charge's name in those versions, and its ARGV ends with the section of versions (an entry a
// charge that has them: its index, its number of versions, then five arguments a version, newest
// first: the index in KEYS of its name, 0 when not read; its p1 and p2; the instant it was
// replaced at; '1' when that replace kept the charge's numbers) and the count of names it added.
//
// settle.lua, which settles or cancels a reservation:
//   KEYS   its record, then the state of each charge it made, in order (as its reserve sent them)
//   ARGV   now (ms; '' for Redis's TIME), the expiry margin (ms), DEBT or CAP (what a top-up that
//          does not fit does), SETTLED or CANCELLED (the status it closes with), then four
//          arguments a charge: the units it comes to ('' when its limit is gone: nothing to do),
//          the units it reserved (read only when the record is its head alone: a record of its
//          charges is the truth), its limit's p1 and p2 now. With the status in upper case (a limit replaced or a key
//          overridden since the reserve), KEYS hold each charge's name now, then the names as
//          reserved (whose digest the record keeps), then the section's, and ARGV ends with the
//          section of versions and the count of names after the charges' own.
//   reply  SETTLED_NOW and a double a charge: the units of its top-up not taken (forgiven); or
//          UNKNOWN_ID (no record, or past its expiry), SETTLED or CANCELLED (closed already), or
//          OTHER_CHARGES (the record was made for other keys): nothing changed.
import { WINDOW } from "@tideward/quota-engine/internal";
import type { Kind } from "@tideward/quota-engine/internal";
import { sameSlot } from "./names";
import { costArg } from "./rules";
import type { Rule } from "./rules";
import { sameNumbers } from "./versions";
import type { Section } from "./versions";

/** A reply's first byte: the set was committed (a peek's and a batch's, always). ("1") */
export const COMMITTED = 0x31;
/** A reply's first byte: an enforced charge did not fit, so nothing was charged. ("0") */
export const REFUSED = 0x30;
/** A reply's first byte: a request id's kept answer follows; nothing was charged again. ("R") */
export const REPLAYED = 0x52;
/** A reply's first byte: the request id was first used for charges to other keys, or in another order. ("N") */
export const OTHER_KEYS = 0x4e;
/** A reserve's reply: the id is taken (an open reservation of other charges, or one closed). ("D") */
export const DUPLICATE = 0x44;
/** settle.lua's reply: settled or cancelled now; a double a charge follows. ("O") */
export const SETTLED_NOW = 0x4f;
/** settle.lua's reply: no reservation of that id is open or closed (never made, or past its expiry). ("U") */
export const UNKNOWN_ID = 0x55;
/** A reservation's status, and settle.lua's reply: settled before. ("s") */
export const SETTLED = "s";
/** A reservation's status, and settle.lua's reply: cancelled before. ("c") */
export const CANCELLED = "c";
/** settle.lua's reply: the record was made for other keys. ("x") */
export const OTHER_CHARGES = 0x78;
/** Bytes of one key's state in a reply: two little-endian doubles. */
export const STATE = 16;
/** Where the states start in a short form's reply: after its first byte. */
export const SHORT_STATES = 1;
/** Where the states start in a general form's reply: after its first byte and the clock (a double). */
export const GENERAL_STATES = 9;
/** Bytes a request id's kept answer holds a charge: its cost and its limit's two numbers, as sent. */
export const STORED_CHARGE = 24;

const COMMIT = "c";
const PEEK = "p";
const BATCH = "s";
const RESERVE = "v";
/** A reserve under an id the engine made: no record read first, no digest kept (see quota.lua). */
const RESERVE_MADE = "w";
const DEBT = "d";
const CAP = "k";
/** `ARGV[3]` when no request id's answer is kept. */
const NO_REQUEST_ID = "0";

/** A charge set as read, once, from the caller's objects: everything the call uses after. */
export interface SetCall {
  readonly n: number;
  /** Per charge, five entries: the key, the limit's name, the cost, the kind, the rule (undefined: unknown). */
  readonly charges: unknown[];
  /** The Redis key of each charge to a known limit, in order. */
  readonly names: string[];
  /** Whether every name has the same hash tag (so one slot, with nothing hashed). */
  readonly oneTag: boolean;
  /** The index of the first charge naming an unknown limit, or -1. */
  readonly unknown: number;
  readonly now: number;
  readonly commit: boolean;
  /** The names and arguments of the charges' earlier versions (see versions.ts); undefined when no limit of the set has any read. */
  readonly versions?: Section | undefined;
}

/**
 * How long Redis keeps a reservation's record (PX, ms of its clock) that is open `ttl` ms of the
 * decisions' clock, with the expiry margin: quota.lua's general form computes the same.
 */
export function recordPx(ttl: number, margin: number): number {
  return Math.floor(ttl + margin) + 1;
}

/** The arguments of a single check in the short form (a set of one; its key is the state's). */
export function singleArgs(now: number, margin: string, cost: number, rule: Rule, kind: Kind): string[] {
  const limit = rule.args[kind];
  return [String(now), margin, costArg(cost, rule.shadow), limit[0], limit[1]];
}

/** The script call of a set: its keys and arguments, and whether it is the short form. */
export interface SetWire {
  readonly keys: string[];
  readonly args: string[];
  readonly short: boolean;
}

/**
 * The keys and arguments of `call`: the short form when it commits on the caller's clock with no
 * request id, else the general one (`ridKey`: the request id's name, or undefined; `ttl` how long
 * its answer is kept, ms). With `reserve`, a reserve: `ridKey` is the record's name, `ttl` the
 * reservation's time to live; with `made` too, under an id the engine made.
 *
 * @throws a {@link CrossSlotError} when the request id's key cannot share the charges' slot
 */
export function setWire(
  call: SetCall,
  serverClock: boolean,
  margin: string,
  ridKey: string | undefined,
  ttl: string,
  reserve = false,
  made = false,
): SetWire {
  const m = call.names.length;
  const committing = call.commit && call.unknown < 0;
  let keys = call.names;
  let args: string[];
  let at: number;
  const versions = call.versions;
  // A reserve under an id the engine made, on the caller's clock, goes in the short form too.
  const short =
    committing &&
    !serverClock &&
    versions === undefined &&
    (reserve
      ? made && Number.isInteger(Number(ttl)) && Number.isInteger(Number(margin)) && !windowed(call)
      : ridKey === undefined);
  if (short) {
    // A reserve's: its record's name after the charges' keys, its record's PX before the charges.
    const record = reserve ? ridKey : undefined;
    at = record === undefined ? 2 : 3;
    args = new Array<string>(at + 3 * m);
    args[0] = String(call.now);
    args[1] = margin;
    if (record !== undefined) {
      keys = [...keys, record];
      sameSlot(keys);
      args[2] = String(recordPx(Number(ttl), Number(margin)));
    }
  } else {
    let keep = NO_REQUEST_ID;
    if (versions !== undefined) keys = [...keys, ...versions.keys];
    if (ridKey !== undefined && committing) {
      keys = [...keys, ridKey];
      sameSlot(keys);
      keep = ttl;
    }
    args = new Array<string>(4 + 3 * m);
    args[0] = serverClock ? "" : String(call.now);
    const mode = !committing ? PEEK : reserve ? (made ? RESERVE_MADE : RESERVE) : COMMIT;
    // A mode in upper case: the call ends with its section of versions (see versions.ts).
    args[1] = versions === undefined ? mode : mode.toUpperCase();
    args[2] = keep;
    args[3] = margin;
    at = 4;
  }
  const c = call.charges;
  for (let i = 0; i < call.n; i++) {
    const rule = c[i * 5 + 4] as Rule | undefined;
    if (rule === undefined) continue;
    const limit = rule.args[c[i * 5 + 3] as Kind];
    args[at] = costArg(c[i * 5 + 2] as number, rule.shadow);
    args[at + 1] = limit[0];
    args[at + 2] = limit[1];
    at += 3;
  }
  if (versions !== undefined) args.push(...versions.args, String(versions.keys.length));
  return { keys, args, short };
}

/** Whether a charge of `call` is a window's. */
function windowed(call: SetCall): boolean {
  for (let i = 0; i < call.n; i++) if (call.charges[i * 5 + 3] === WINDOW) return true;
  return false;
}

/** The inputs of a batch, read once (see `readInputs`), with each one's Redis key. */
export interface BatchInputs {
  readonly nows: Float64Array;
  readonly costs: Float64Array;
  readonly names: readonly string[];
}

/** The keys and arguments of one batch call of the inputs `list` (indexes into `inputs`). */
export function batchWire(
  kind: Kind,
  rule: Rule,
  list: readonly number[],
  inputs: BatchInputs,
  serverClock: boolean,
  margin: string,
  versions?: Section,
): { keys: string[]; args: string[] } {
  const limit = rule.args[kind];
  const { nows, costs, names } = inputs;
  const first = nows[list[0]];
  const keys = new Array<string>(list.length);
  const args = new Array<string>(6 + 2 * list.length);
  args[0] = serverClock ? "" : String(first);
  args[1] = versions === undefined ? BATCH : BATCH.toUpperCase();
  args[2] = NO_REQUEST_ID;
  args[3] = margin;
  args[4] = limit[0];
  args[5] = limit[1];
  for (let x = 0; x < list.length; x++) {
    const i = list[x];
    keys[x] = names[i];
    args[6 + 2 * x] = costArg(costs[i], false); // in a batch every input stands alone
    args[7 + 2 * x] = serverClock || nows[i] === first ? "" : String(nows[i]);
  }
  if (versions !== undefined) {
    keys.push(...versions.keys);
    args.push(...versions.args, String(versions.keys.length));
  }
  return { keys, args };
}

/** A reservation as its settle sends it: its record's name, its keys and what each charge comes to. */
export interface SettleCall {
  readonly record: string;
  /** The state of each charge, in order, as the reserve sent them. */
  readonly names: readonly string[];
  readonly now: number;
  /** Whether a top-up that does not fit is owed (else forgiven). */
  readonly debt: boolean;
  /** Whether the reservation is settled (else cancelled). */
  readonly settled: boolean;
  /** The units each charge comes to. */
  readonly units: readonly number[];
  /** The units each charge reserved (the record's own, when it keeps its charges). */
  readonly reserved: readonly number[];
  /** Each charge's limit now, undefined when it is gone, and its kind. */
  readonly rules: readonly (Rule | undefined)[];
  readonly kinds: readonly Kind[];
  /**
   * When a charge's state has a name other than its reserve's now (its limit replaced, or its key
   * overridden, since): each charge's name now, and the section of their earlier versions.
   */
  readonly moved?: { readonly names: readonly string[]; readonly versions: Section } | undefined;
}

/** The keys and arguments of settle.lua for `call`. */
export function settleWire(call: SettleCall, serverClock: boolean, margin: string): { keys: string[]; args: string[] } {
  const m = call.names.length;
  const moved = call.moved;
  const keys =
    moved === undefined
      ? [call.record, ...call.names]
      : [call.record, ...moved.names, ...call.names, ...moved.versions.keys];
  const args = new Array<string>(4 + 4 * m);
  args[0] = serverClock ? "" : String(call.now);
  args[1] = margin;
  args[2] = call.debt ? DEBT : CAP;
  // In upper case: the names as reserved follow the names now, then the section of versions.
  const status = call.settled ? SETTLED : CANCELLED;
  args[3] = moved === undefined ? status : status.toUpperCase();
  for (let i = 0; i < m; i++) {
    const rule = call.rules[i];
    const at = 4 + 4 * i;
    if (rule === undefined) {
      args[at] = "";
      args[at + 1] = "0";
      args[at + 2] = "0";
      args[at + 3] = "0";
      continue;
    }
    const limit = rule.args[call.kinds[i]];
    args[at] = String(call.units[i]);
    args[at + 1] = String(call.reserved[i]);
    args[at + 2] = limit[0];
    args[at + 3] = limit[1];
  }
  if (moved !== undefined) args.push(...moved.versions.args, String(m + moved.versions.keys.length));
  return { keys, args };
}

/** One key's state of one limit moved from the names of `from` to those of `to`, of each kind (see move.lua). */
export interface MoveCall {
  /** Its names under `to`, then under `from`, by kind. */
  readonly into: readonly string[];
  readonly from: readonly string[];
  readonly rules: readonly [Rule, Rule];
  readonly now: number;
  /** The section of `from`'s earlier versions, its entries by kind (1 to 3). */
  readonly versions: Section;
}

/**
 * The keys and arguments of move.lua: KEYS the key's three names under the rule it moves to, its
 * three under the rule it moves from, then the section's; ARGV the instant (ms; '' for Redis's
 * TIME), the expiry margin (ms), five arguments a kind (the two rules' p1 and p2, and '1' when
 * they keep that kind's numbers), the section, and its names' count. The reply: how many states
 * were moved.
 */
export function moveWire(call: MoveCall, serverClock: boolean, margin: string): { keys: string[]; args: string[] } {
  const [from, to] = call.rules;
  const args = [serverClock ? "" : String(call.now), margin];
  for (let k = 0; k < 3; k++) {
    const [s1, s2] = from.args[k];
    const [d1, d2] = to.args[k];
    args.push(s1, s2, d1, d2, sameNumbers(from.numbers, to.numbers, k as Kind) ? "1" : "");
  }
  args.push(...call.versions.args, String(call.versions.keys.length));
  return { keys: [...call.into, ...call.from, ...call.versions.keys], args };
}
