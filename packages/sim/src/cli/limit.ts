import { formatSpan, parseSpan } from "@tideward/time";
import { check } from "@tideward/time/internal";
import { byName } from "../by-name";
import { bucket, gcra, period, sliding } from "../policies/limiters";
import type { PolicySpec } from "../policy";

/** Which limiter a candidate limit is tried with. */
export type Algorithm = "sliding" | "bucket" | "gcra" | "period";

/** A candidate limit, as read from text such as `"100/min per key"`. */
export interface CandidateLimit {
  /** Calls allowed per `per` milliseconds. */
  readonly count: number;
  /** The length of the stretch, ms. */
  readonly per: number;
  /** One limit per key, or one for all traffic. */
  readonly perKey: boolean;
  /** Calls a bucket or GCRA lets through back to back (the count by default). */
  readonly burst: number;
  readonly algorithm: Algorithm;
}

// Looked up by the text typed, so no prototype: "100/constructor" is an unknown unit, not Object.
const UNITS: Readonly<Record<string, number>> = Object.assign(byName<number>(), {
  ms: 1,
  s: 1_000,
  sec: 1_000,
  second: 1_000,
  m: 60_000,
  min: 60_000,
  minute: 60_000,
  h: 3_600_000,
  hr: 3_600_000,
  hour: 3_600_000,
  d: 86_400_000,
  day: 86_400_000,
});

/** The unit words a limit's `<count>/<unit>` can use (each also with an "s"), and their spans. */
export const UNIT_WORDS: readonly string[] = Object.keys(UNITS);

/** The words a limit's "per" takes, and whether each means one limit a key. */
const PER: Readonly<Record<string, boolean>> = Object.assign(byName<boolean>(), {
  key: true,
  all: false,
  everyone: false,
});
/** The words a limit's "per" takes: `per key`, `per all`, `per everyone`. */
export const PER_WORDS: readonly string[] = Object.keys(PER);

/** The algorithms a limit can name. */
export const ALGORITHMS: readonly Algorithm[] = ["sliding", "bucket", "gcra", "period"];

/**
 * Reads a candidate limit: `<count>/<unit or span> [per key|per all|per everyone] [burst <n>] [sliding|bucket|gcra|period]`,
 * such as `"100/min per key"`, `"10/s burst 20 bucket"` or `"5000/1h"`. Units: ms, s, min, h,
 * day (and their long forms, plural or not); a span such as `10s` or `1h30m` also works.
 *
 * @throws RangeError naming the part that could not be read; TypeError when `text` is not text or
 *   `algorithm` is not one of the four
 */
export function parseLimit(text: string, algorithm?: Algorithm): CandidateLimit {
  if (typeof text !== "string")
    throw new TypeError(`a limit must be text such as "100/min per key", got ${check.describe(text)}`);
  if (algorithm !== undefined && !ALGORITHMS.includes(algorithm))
    throw new TypeError(
      `parseLimit algorithm must be "sliding", "bucket", "gcra" or "period", got ${check.describe(algorithm)}`,
    );
  const words = text.trim().toLowerCase().split(/\s+/);
  const head = words.shift() ?? "";
  const m = /^(\d+(?:\.\d+)?)\/(.+)$/.exec(head);
  if (m === null)
    throw new RangeError(`cannot read the limit ${JSON.stringify(text)}: start with <count>/<unit>, such as "100/min"`);
  const count = Number(m[1]);
  if (!Number.isSafeInteger(count) || count < 1)
    throw new RangeError(`the limit's count must be a whole number from 1, got ${m[1]}`);
  const unit = m[2].replace(/s$/, "");
  let per = UNITS[m[2]] ?? UNITS[unit];
  if (per === undefined) {
    try {
      per = parseSpan(m[2]);
    } catch {
      throw new RangeError(
        `cannot read the limit's unit ${JSON.stringify(m[2])}: use ms, s, min, h or day, or a span such as 10s`,
      );
    }
  }
  if (!(per > 0)) throw new RangeError(`the limit's span must be above 0, got ${JSON.stringify(m[2])}`);
  let perKey = false;
  let burst = count;
  let burstGiven = false;
  let algo: Algorithm | undefined = algorithm;
  let named: string | undefined;
  while (words.length > 0) {
    const w = words.shift() as string;
    if (w === "per") {
      const what = words.shift();
      if (what === undefined)
        throw new RangeError(`"per" needs a word after it in ${JSON.stringify(text)}, such as "per key"`);
      const one = PER[what];
      if (one === undefined)
        throw new RangeError(
          `cannot read "per ${what}" in the limit ${JSON.stringify(text)}: write "per key" (one limit a key) or "per all" (one for everyone)`,
        );
      perKey = one;
    } else if (w === "burst") {
      const n = Number(words.shift());
      if (!(n >= 1) || !Number.isFinite(n))
        throw new RangeError(`"burst" needs a number of at least 1 after it in ${JSON.stringify(text)}`);
      burst = n;
      burstGiven = true;
    } else if ((ALGORITHMS as readonly string[]).includes(w)) {
      if (named !== undefined && named !== w)
        throw new RangeError(`the limit ${JSON.stringify(text)} names two algorithms, ${named} and ${w}: keep one`);
      if (algorithm !== undefined && algorithm !== w)
        throw new RangeError(`the limit ${JSON.stringify(text)} says ${w}, and --algorithm ${algorithm}: keep one`);
      named = algo = w as Algorithm;
    } else {
      throw new RangeError(
        `cannot read ${JSON.stringify(w)} in the limit ${JSON.stringify(text)}; write e.g. "100/min per key", "10/s burst 20 bucket"`,
      );
    }
  }
  const chosen = algo ?? "sliding";
  if (burstGiven && (chosen === "sliding" || chosen === "period"))
    throw new RangeError(
      `cannot use "burst": it applies to the bucket and GCRA only, and the limit ${JSON.stringify(text)} is a ${chosen === "sliding" ? "sliding window" : "fixed window (period)"}${algo === undefined ? " (the default)" : ""}: add "bucket" or "gcra", or leave burst out`,
    );
  const limit = { count, per, perKey, burst, algorithm: chosen };
  // The limiter's own bounds (a sliding window of at most 2^24 calls, a span of at least 2^-4 ms…)
  // are checked here, by making one, so that a limit past them is refused as the text it was
  // typed as rather than when the log is replayed, and named in the limit's words.
  made(limit, undefined);
  return limit;
}

/**
 * The policy for `l`, checked by {@link checkLimit} as `what` (`"replayLog limit"`); the limiter's
 * own bounds (a sliding window of at most 2^24 calls, a span of at least 2^-4 ms…) refused naming
 * the limit's field as `what`'s: `replayLog limit count (a sliding window's count) must be at
 * most 16777216 …, got 20000000`.
 */
export function policyOf(l: unknown, what: string): PolicySpec {
  return made(checkLimit(l, what), what);
}

/**
 * The policy for the checked limit `l`, a limiter's refusal of its numbers put in the limit's
 * words: `what`'s field (`replayLog limit count`) when the limit was handed in as a value, the
 * text's own words (`a sliding window's count`) when `what` is undefined.
 */
function made(l: CandidateLimit, what: string | undefined): PolicySpec {
  try {
    return make(l);
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
    const m = /^(Sliding|Period|Bucket|Gcra) (\w+)(?: \([^)]*\))? (.*)$/s.exec(e.message);
    if (m === null) throw e;
    const how = `${HOW[l.algorithm]}'s ${FIELDS[m[2]] ?? m[2]}`;
    const field = LIMIT_FIELDS[m[2]] ?? m[2];
    throw new RangeError(what === undefined ? `${how} ${m[3]}` : `${what} ${field} (${how}) ${m[3]}`, { cause: e });
  }
}

/** The limit's fields that set each of the limiters' fields. */
const LIMIT_FIELDS: Readonly<Record<string, string>> = {
  quota: "count",
  window: "per",
  period: "per",
  rate: "count and per",
  burst: "burst",
};

/** The limiters' fields in the limit's own words, for their messages. */
const FIELDS: Readonly<Record<string, string>> = {
  quota: "count",
  window: "span (ms)",
  period: "span (ms)",
  rate: "rate (calls a second)",
  burst: "burst",
};
const HOW: Readonly<Record<Algorithm, string>> = {
  sliding: "a sliding window",
  bucket: "a token bucket",
  gcra: "GCRA",
  period: "a fixed window",
};

/**
 * A limit handed to a function by `what` (`"replayLog limit"`), checked as parseLimit makes them:
 * a count that is a whole number from 1, a span (`per`) above 0, and for a bucket or GCRA a burst
 * of 1 or more. The limiter's own bounds are checked as it is made (see {@link policyOf}).
 */
export function checkLimit(value: unknown, what: string): CandidateLimit {
  const l = value as Partial<CandidateLimit> | null | undefined;
  if (l === null || typeof l !== "object")
    throw new TypeError(`${what} must be a limit from parseLimit("100/min per key"), got ${check.describe(l)}`);
  if (!(ALGORITHMS as readonly unknown[]).includes(l.algorithm))
    throw new TypeError(
      `${what} algorithm must be "sliding", "bucket", "gcra" or "period", got ${check.describe(l.algorithm)}`,
    );
  if (typeof l.perKey !== "boolean")
    throw new TypeError(`${what} perKey must be true or false, got ${check.describe(l.perKey)}`);
  for (const field of ["count", "per", "burst"] as const)
    if (typeof l[field] !== "number")
      throw new TypeError(`${what} ${field} must be a number, got ${check.describe(l[field])}`);
  check.integer(l.count, `${what} count`, 1);
  check.positive(l.per, `${what} per (ms)`);
  if (l.algorithm === "bucket" || l.algorithm === "gcra") {
    const burst = check.finite(l.burst, `${what} burst`);
    if (burst < 1) throw new RangeError(`${what} burst must be 1 or more, got ${burst}`);
  }
  return l as CandidateLimit;
}

/** The limit in words: `"100 per 1m per key (sliding window)"`. */
export function describeLimit(l: CandidateLimit): string {
  checkLimit(l, "describeLimit limit");
  const how = {
    sliding: "sliding window",
    bucket: `token bucket, burst ${l.burst}`,
    gcra: `GCRA, burst ${l.burst}`,
    period: "fixed window",
  }[l.algorithm];
  return `${l.count} per ${formatSpan(l.per)}${l.perKey ? " per key" : " in all"} (${how})`;
}

/**
 * The candidate limit as a policy to replay through.
 *
 * @throws TypeError or RangeError naming the field of `l` that is not what parseLimit makes, or
 *   that the limiter cannot hold
 */
export function limitPolicy(l: CandidateLimit): PolicySpec {
  return policyOf(l, "limitPolicy limit");
}

/** The checked limit `l` as a policy: its limiter's errors in the limiter's words. */
function make(l: CandidateLimit): PolicySpec {
  const rate = (l.count * 1_000) / l.per;
  const options = { perKey: l.perKey, name: "limit" };
  switch (l.algorithm) {
    case "sliding":
      return sliding(l.count, l.per, options);
    case "bucket":
      return bucket(rate, { ...options, burst: l.burst });
    case "gcra":
      return gcra(rate, { ...options, burst: l.burst });
    case "period":
      return period(l.count, l.per, { ...options, align: true });
  }
}
