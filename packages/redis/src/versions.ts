// Limits that change while the service runs, on Redis. A replaced limit's keys keep their state
// under names of the new version (Rule.suffix), so a replace writes nothing and every process that
// makes it agrees: a key absent under the new names is read from the names of the versions before,
// newest first, and re-based by the script at the instant each version replaced the one before
// (parts/versions.lua). The old names are never written again, so each key's re-base is made
// exactly once, however many processes replace the limit; they are read only until any state
// left under them must have expired. A limit never replaced sends nothing of this.
import type { QuotaKey } from "@tideward/quota-engine";
import { BUCKET, WINDOW } from "@tideward/quota-engine/internal";
import type { Kind, Rule as Numbers } from "@tideward/quota-engine/internal";
import { check } from "@tideward/time/internal";
import type { Names } from "./names";
import type { Link, Rule } from "./rules";

/** A limit's version as given for the option `what` names: 0 to 2^53 - 1, else a RangeError or TypeError. */
export function readVersion(value: unknown, what: string): number {
  const n = check.finite(value, what);
  if (n < 0 || !Number.isSafeInteger(n))
    throw check.rangeError(what, `must be a whole number from 0 to 2^53 - 1, got ${check.describe(n)}`, n);
  return n + 0; // -0 is version 0
}

/**
 * The version a limit takes after one at `last`: `given`, or one more. Above `last` and at most
 * 2^53 - 1, else a RangeError naming `what`, `last` (which `was` says the version of) and `given`.
 */
export function nextVersion(given: number | undefined, last: number, what: string, was: string): number {
  const v = given ?? last + 1;
  if (v > last && v <= Number.MAX_SAFE_INTEGER) return v;
  throw check.rangeError(what, `must be above ${last} (${was}) and at most 2^53 - 1, got ${given}`, given);
}

/**
 * Whether a replace of `a` by `b` keeps the numbers of `kind`, as the quota engine's re-base
 * tells it (a bucket's capacity, refill and window; a window's capacity, window and alignment; a
 * flow's interval and burst): then a key's state is kept as it is.
 */
export function sameNumbers(a: Numbers, b: Numbers, kind: Kind): boolean {
  return kind === BUCKET
    ? a.capacity === b.capacity && a.refill === b.refill && a.window === b.window
    : kind === WINDOW
      ? a.capacity === b.capacity && a.window === b.window && a.align === b.align
      : a.interval === b.interval && a.burst === b.burst;
}

// The longest a state of `n` lasts after it was last written (ms): a bucket or a flow owing a whole
// limit's worth refilling, or a window closing.
function life(n: Numbers): number {
  return Math.max(n.bucketMost, n.window, n.gcraMost);
}

/**
 * Makes `next` the version after `old`, which it replaces at `at` (ms, the caller's clock):
 * `old` becomes its newest earlier version, before `old`'s own. An earlier version whose state
 * must have expired is kept (its numbers re-base the older ones) but never read; the oldest ones
 * that must have expired are dropped.
 */
export function succeed(old: Rule, next: Rule, at: number, margin: number): void {
  const link: Link = {
    suffix: old.suffix,
    numbers: old.numbers,
    args: old.args,
    same: [0, 1, 2].map((k) => sameNumbers(old.numbers, next.numbers, k as Kind)),
    at: String(at),
    until: at + life(old.numbers) + 2 * margin + 1,
  };
  const links = [link, ...old.versions];
  while (links.length > 0 && (links.at(-1) as Link).until < at) links.pop();
  next.versions = links;
  next.readUntil = links.reduce((most, l) => (l.until > most ? l.until : most), -Infinity);
}

/** Whether a call at `now` (ms) reads `rule`'s earlier versions; once none can hold state, it forgets them. */
export function live(rule: Rule, now: number): boolean {
  if (rule.versions.length === 0) return false;
  if (now <= rule.readUntil) return true;
  rule.versions = [];
  return false;
}

/**
 * A call's section of versions (parts/versions.lua): the names it adds to KEYS and the arguments
 * it adds to ARGV, one entry a charge whose limit has live earlier versions.
 */
export class Section {
  readonly keys: string[] = [];
  readonly args: string[] = [];

  /**
   * Adds the entry of charge `c` (its index among the call's charges, from 1): its key's name in
   * each earlier version of `rule` still read at `now`, the first going to KEYS[`first`].
   */
  add(c: number, rule: Rule, kind: Kind, now: number, first: number, names: Names, tag: string, key: QuotaKey): void {
    const limit = rule.spec.name;
    this.args.push(String(c), String(rule.versions.length));
    for (const link of rule.versions) {
      let k = "0";
      if (now <= link.until) {
        k = String(first + this.keys.length);
        this.keys.push(names.state(tag, kind, limit, key, link.numbers.oneNumber, link.suffix));
      }
      const limitArgs = link.args[kind];
      this.args.push(k, limitArgs[0], limitArgs[1], link.at, link.same[kind] ? "1" : "");
    }
  }
}
