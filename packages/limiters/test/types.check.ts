// Type-level tests of the public API: compiled by `tsc -p .` (typecheck), never run. An
// `@ts-expect-error` that stops being an error fails the typecheck.
import { Bucket, Gate, Gcra, Period, Sliding } from "@tideward/limiters";
import type { BucketOptions, GcraOptions, PeriodOptions, PeriodAnswer, RateLimit } from "@tideward/limiters";

// Every limiter answers rateLimit(now) with the one shared record.
const reports: ((now: number) => RateLimit)[] = [
  (t) => new Bucket(1).rateLimit(t),
  (t) => new Sliding(1, 1).rateLimit(t),
  (t) => new Period(1, 1).rateLimit(t),
  (t) => new Gcra(1).rateLimit(t),
  (t) => new Gate(1).rateLimit(t),
];
void reports;

// A PeriodAnswer is exactly three strings, and a switch over them is exhaustive.
function admitted(q: PeriodAnswer): boolean {
  switch (q) {
    case "under":
    case "hit":
      return true;
    case "over":
      return false;
  }
}
void admitted(new Period(1, 1).take(0));
void admitted(new Period(1, 1).peek(0));

// take, peek and next read like each other across limiters.
const b: boolean =
  new Bucket(1).take(0, 0.5) && new Gcra(1).peek(0) && new Sliding(1, 1).take(0) && new Gate(0).enter();
const waits: number[] = [
  new Bucket(1).next(0, 2),
  new Sliding(1, 1).next(0),
  new Period(1, 1).next(0),
  new Gcra(1).next(0),
];
void b;
void waits;

// The report is read-only, and so are the options and the configuration a limiter exposes.
const r = new Bucket(1).rateLimit(0);
// @ts-expect-error remaining is readonly
r.remaining = 5;
const bucket = new Bucket(1);
// @ts-expect-error rate is readonly
bucket.rate = 2;
const options: BucketOptions & GcraOptions & PeriodOptions = { burst: 2, now: 0, align: true };
void options;
// @ts-expect-error a gate's held count is read-only
new Gate(1).held = 3;
// @ts-expect-error Period.take takes no cost
new Period(1, 1).take(0, 2);
