// Bad input to the breaker, as a table: each case answers with its exact error (or, on the hot
// path, exactly what its documented equivalent answers) and leaves the breaker, the preset and
// the caller's policy object as they were.
import { describe, expect, it } from "vitest";
import { eachRefusal, eachTwin } from "../../../scripts/test-support/bad-input.ts";
import type { Refusal, Twin } from "../../../scripts/test-support/bad-input.ts";
import { Breaker, client, sre } from "@tideward/breaker";
import type { Permit, Sre } from "@tideward/breaker";
import { feed } from "./helpers";

const not = <T>(x: unknown): T => x as T;
const T0 = 1_700_000_000_000.25;

/** Twenty failures at T0: a drop of 15/21 with nothing to scale it. */
function failing(): Breaker {
  const b = new Breaker({}, T0);
  feed(b, T0, 0, 20);
  return b;
}

/** What can be read without changing anything: ratios now, half a window on and a window on. */
const snapshot = (b: Breaker): number[] => [b.ratio(T0), b.ratio(T0 + 5_000), b.ratio(T0 + 10_000)];

const construction: Refusal[] = [
  [
    "a policy given as text",
    () => new Breaker(not("abc")),
    TypeError,
    'Breaker policy must be an object, got string "abc"',
  ],
  [
    "a policy given as a number",
    () => new Breaker(not(5)),
    TypeError,
    "Breaker policy must be an object, got number 5",
  ],
  ["a null policy", () => new Breaker(not(null)), TypeError, "Breaker policy must be an object, got null"],
  [
    "a policy given as an array",
    () => new Breaker(not([1.5])),
    TypeError,
    "Breaker policy must be an object, got an array",
  ],
  ["a misspelt k", () => new Breaker(not({ kk: 2 })), TypeError, 'Breaker has no option "kk"; did you mean "k"?'],
  [
    "a misspelt window",
    () => new Breaker(not({ windw: 5_000 })),
    TypeError,
    'Breaker has no option "windw"; did you mean "window"?',
  ],
  [
    "an option nothing like any",
    () => new Breaker(not({ threshold: 0.5 })),
    TypeError,
    'Breaker has no option "threshold"; its options are "k", "floor", "protection", "probe", "size", "window", "halfOpen"',
  ],
  [
    "10^8 buckets",
    () => new Breaker({ size: 1e8, window: 1e9 }),
    RangeError,
    "Sre size must be at most 1000000 buckets, got 100000000",
  ],
  [
    "2^32 buckets",
    () => new Breaker({ size: 2 ** 32, window: 1e12 }),
    RangeError,
    "Sre size must be at most 1000000 buckets, got 4294967296",
  ],
  [
    "buckets under 0.01 ms",
    () => new Breaker({ window: 0.1 }),
    RangeError,
    "Sre window (ms) must be at least 0.4 for 40 buckets (0.01 ms a bucket), got 0.1",
  ],
  ["k under floor", () => new Breaker({ k: 1 }), RangeError, "Sre k must be at least floor (1.1), got 1"],
  [
    "a size given as text",
    () => new Breaker(not({ size: "40" })),
    TypeError,
    'Sre size must be a number, got string "40"',
  ],
  [
    "a NaN probe",
    () => new Breaker({ probe: Number.NaN }),
    RangeError,
    "Sre probe (ms) must be a finite number, got NaN",
  ],
  ["a fractional size", () => new Breaker({ size: 2.5 }), RangeError, "Sre size must be a whole number, got 2.5"],
  ["a null k", () => new Breaker(not({ k: null })), TypeError, "Sre k must be a number, got object null"],
  [
    "a null window",
    () => new Breaker(not({ window: null })),
    TypeError,
    "Sre window (ms) must be a number, got object null",
  ],
  [
    "halfOpen given as text",
    () => new Breaker(not({ halfOpen: "yes" })),
    TypeError,
    'Sre halfOpen must be true, false or { probes, share, inFlight, hold }, got string "yes"',
  ],
  [
    "halfOpen given as 1",
    () => new Breaker(not({ halfOpen: 1 })),
    TypeError,
    "Sre halfOpen must be true, false or { probes, share, inFlight, hold }, got number 1",
  ],
  [
    "halfOpen given as null",
    () => new Breaker(not({ halfOpen: null })),
    TypeError,
    "Sre halfOpen must be true, false or { probes, share, inFlight, hold }, got null",
  ],
  [
    "a misspelt halfOpen",
    () => new Breaker(not({ halfopen: true })),
    TypeError,
    'Breaker has no option "halfopen"; did you mean "halfOpen"?',
  ],
  // Half-open, only the probe goes through, and every refusal keeps the window full: with no
  // probe, a 5 s outage let 0 calls through in the next 55 s of healthy traffic.
  [
    "the client preset with probe: Infinity (half-open, it could never close)",
    () => new Breaker({ ...client, probe: Infinity }),
    RangeError,
    "Sre probe (ms) must be finite when halfOpen is true: a half-open breaker lets only the probe through, so with no probe it never closes (give a finite probe, or halfOpen: false), got Infinity",
  ],
  [
    "halfOpen given as an array",
    () => new Breaker(not({ halfOpen: [3, 0.5] })),
    TypeError,
    "Sre halfOpen must be true, false or { probes, share, inFlight, hold }, got an array",
  ],
  [
    "a misspelt halfOpen field",
    () => new Breaker(not({ halfOpen: { prbes: 3 } })),
    TypeError,
    'Sre halfOpen has no option "prbes"; did you mean "probes"?',
  ],
  [
    "no probes",
    () => new Breaker({ halfOpen: { probes: 0 } }),
    RangeError,
    "Sre halfOpen.probes must be 1 or more, got 0",
  ],
  [
    "a fraction of a probe",
    () => new Breaker({ halfOpen: { probes: 2.5 } }),
    RangeError,
    "Sre halfOpen.probes must be a whole number, got 2.5",
  ],
  [
    "probes given as text",
    () => new Breaker(not({ halfOpen: { probes: "3" } })),
    TypeError,
    'Sre halfOpen.probes must be a number, got string "3"',
  ],
  [
    "a share of 0 (it would close on no pass at all)",
    () => new Breaker({ halfOpen: { probes: 3, share: 0 } }),
    RangeError,
    "Sre halfOpen.share must be above 0 and at most 1, got 0",
  ],
  [
    "a share over 1 (no trial could reach it)",
    () => new Breaker({ halfOpen: { probes: 3, share: 1.5 } }),
    RangeError,
    "Sre halfOpen.share must be above 0 and at most 1, got 1.5",
  ],
  [
    "a NaN share",
    () => new Breaker({ halfOpen: { share: Number.NaN } }),
    RangeError,
    "Sre halfOpen.share must be a finite number, got NaN",
  ],
  [
    "no probe in flight (none could ever go)",
    () => new Breaker({ halfOpen: { inFlight: 0 } }),
    RangeError,
    "Sre halfOpen.inFlight must be 1 or more, got 0",
  ],
  [
    "half a probe in flight",
    () => new Breaker({ halfOpen: { inFlight: 1.5 } }),
    RangeError,
    "Sre halfOpen.inFlight must be a whole number, got 1.5",
  ],
  [
    "a probe that holds its place for no time",
    () => new Breaker({ halfOpen: { inFlight: 1, hold: 0 } }),
    RangeError,
    "Sre halfOpen.hold (ms) must be above 0, got 0",
  ],
  [
    "a hold given as text",
    () => new Breaker(not({ halfOpen: { inFlight: 1, hold: "5s" } })),
    TypeError,
    'Sre halfOpen.hold (ms) must be a number, got string "5s"',
  ],
  [
    "a tuned half-open with probe: Infinity (it could never close)",
    () => new Breaker({ ...client, halfOpen: { probes: 3, share: 2 / 3 }, probe: Infinity }),
    RangeError,
    "Sre probe (ms) must be finite when halfOpen is on: a half-open breaker lets only the probe through, so with no probe it never closes (give a finite probe, or halfOpen: false), got Infinity",
  ],
  [
    "halfOpen: true laid over sre with probe: Infinity",
    () => new Breaker({ halfOpen: true, probe: Infinity }),
    RangeError,
    "Sre probe (ms) must be finite when halfOpen is true: a half-open breaker lets only the probe through, so with no probe it never closes (give a finite probe, or halfOpen: false), got Infinity",
  ],
  ["a NaN start", () => new Breaker({}, Number.NaN), RangeError, "Breaker now must be a finite number, got NaN"],
  ["a start given as text", () => new Breaker({}, not("0")), TypeError, 'Breaker now must be a number, got string "0"'],
  [
    "a start whose float step is wider than a bucket (a microsecond clock)",
    () => new Breaker({ size: 1_000, window: 10 }, 1.7e15),
    RangeError,
    "Breaker now (ms) 1700000000000000 is too coarse a reading for buckets of 0.01 ms (window ÷ size): the bucket rounds away there; widen the window or read the clock in milliseconds",
  ],
  [
    "the default policy at a start past 2^62",
    () => new Breaker({}, 2 ** 62),
    RangeError,
    "Breaker now (ms) 4611686018427388000 is too coarse a reading for buckets of 250 ms (window ÷ size): the bucket rounds away there; widen the window or read the clock in milliseconds",
  ],
];

// Hot-path cases: the odd call and the call it is documented to behave as, each on a twin.
const sym = Symbol("odd");
const hot: Twin<Breaker>[] = [
  ["a Symbol roll counts as 0", (b) => b.allow(T0, not(sym)), (b) => b.allow(T0, 0)],
  ["a BigInt roll counts as 0", (b) => b.allow(T0, not(1n)), (b) => b.allow(T0, 0)],
  ["a roll given as text counts as 0", (b) => b.allow(T0, not("0.99")), (b) => b.allow(T0, 0)],
  ["a NaN roll counts as 0", (b) => b.allow(T0, Number.NaN), (b) => b.allow(T0, 0)],
  ["a Symbol now stands still", (b) => b.allow(not(sym), 0.99), (b) => b.allow(T0, 0.99)],
  ["a BigInt now stands still", (b) => b.allow(not(10n ** 13n), 0), (b) => b.allow(T0, 0)],
  ["a now given as text stands still", (b) => b.allow(not("1700000009000"), 0), (b) => b.allow(T0, 0)],
  ["a NaN now stands still", (b) => b.allow(Number.NaN, 0), (b) => b.allow(T0, 0)],
  ["a clock stepped back stands still", (b) => b.allow(0, 0), (b) => b.allow(T0, 0)],
  ["ratio at a Symbol reads where the breaker stands", (b) => b.ratio(not(sym)), (b) => b.ratio(T0)],
  [
    "a permit settled at a Symbol settles where the breaker stands",
    (b) => (b.allow(T0, 0.999) as Permit).fail(not(sym)),
    (b) => (b.allow(T0, 0.999) as Permit).fail(T0),
  ],
];

describe("bad input to the breaker", () => {
  it("has at least fifteen cases", () => {
    expect(construction.length + hot.length).toBeGreaterThanOrEqual(15);
  });

  eachRefusal(construction, sre);

  eachTwin(hot, failing, snapshot);

  it("reads each policy field once, so a getter cannot change a size between the check and the use", () => {
    let reads = 0;
    const policy = {
      get size() {
        reads++;
        return reads === 1 ? 4 : 1e9;
      },
    };
    const b = new Breaker(not<Partial<Sre>>(policy));
    expect([b.policy.size, reads]).toEqual([4, 1]);
  });

  it("refuses bad options before building anything, and leaves the policy object as given", () => {
    const policy = { k: 2, size: 1e8 };
    expect(() => new Breaker(policy)).toThrow(RangeError);
    expect(policy).toEqual({ k: 2, size: 1e8 });
  });
});
