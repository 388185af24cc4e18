// Snapshots of a retry budget: restored from another's snapshot (through JSON, onto a clock of
// another scale) it grants as the original would have gone on granting; what aged out stays out;
// old receipts name nothing; a bad snapshot is refused whole, naming its first bad field.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { eachRow } from "../../../scripts/test-support/bad-input.ts";
import type { Row } from "../../../scripts/test-support/bad-input.ts";
import { RetryBudget, SnapshotError, isSnapshotError } from "@tideward/backoff";
import type { Budget, RetryBudgetSnapshot } from "@tideward/backoff";

type Op =
  | { readonly kind: "attempt"; readonly dt: number }
  | { readonly kind: "grant"; readonly dt: number }
  | { readonly kind: "giveBack"; readonly which: number }
  | { readonly kind: "available"; readonly dt: number };

// Steps on a grid of 1/64 ms, which every clock below holds exactly (a float step near
// Date.now() is 1/4096 ms), so two budgets a scale apart see the same bucket boundaries.
const grid = (n: number): number => n / 64;
const dt = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0, max: 40 * 64 }).map(grid) },
  { weight: 2, arbitrary: fc.integer({ min: 40, max: 3_000 }) },
  { weight: 1, arbitrary: fc.integer({ min: -300, max: -1 }) },
  { weight: 1, arbitrary: fc.constantFrom(Number.NaN, Infinity) },
);
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("attempt" as const), dt }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("grant" as const), dt }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("giveBack" as const), which: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("available" as const), dt }) },
);
// Buckets of a whole number of 1/64 ms, so every boundary is on the grid.
const policy: fc.Arbitrary<Partial<Budget>> = fc
  .record({
    ratio: fc.constantFrom(0, 0.2, 0.5, 1, 3),
    minPerSecond: fc.constantFrom(0, 1, 10),
    buckets: fc.integer({ min: 1, max: 8 }),
    width: fc.integer({ min: 1, max: 250 * 64 }).map(grid),
  })
  .map(({ buckets, width, ...rest }) => ({ ...rest, buckets, window: buckets * width }));
// Near 0 and near Date.now(), on the grid.
const scale = fc.oneof(
  fc.integer({ min: 0, max: 1_000 * 64 }).map(grid),
  fc.integer({ min: 0, max: 2 ** 30 }).map((n) => 1_700_000_000_000 + grid(n)),
);

/** Runs `ops` on `b` from the reading `start`: every grant (as granted or not) and every count available. */
function drive(b: RetryBudget, ops: readonly Op[], start: number): unknown[] {
  const receipts: number[] = [];
  const out: unknown[] = [];
  let now = start;
  const at = (d: number): number => (Number.isFinite(d) ? (now += d) : d);
  for (const o of ops) {
    if (o.kind === "attempt") b.recordAttempt(at(o.dt));
    else if (o.kind === "grant") {
      const receipt = b.grant(at(o.dt));
      if (receipt >= 0) receipts.push(receipt);
      out.push(receipt >= 0);
    } else if (o.kind === "giveBack") {
      if (receipts.length > 0) b.giveBack(receipts.splice(o.which % receipts.length, 1)[0]);
    } else out.push(b.available(at(o.dt)));
  }
  return out;
}

/** What `b` knows, through JSON as it would be stored. */
const stored = (b: RetryBudget): unknown => JSON.parse(JSON.stringify(b.snapshot())) as unknown;

describe("a restored retry budget", () => {
  it("grants as the original goes on granting, restored through JSON at either scale", () => {
    fc.assert(
      fc.property(
        policy,
        fc.array(op, { maxLength: 150 }),
        fc.array(op, { maxLength: 150 }),
        scale,
        scale,
        (p, before, after, a, b) => {
          const original = new RetryBudget(p, a);
          drive(original, before, a);
          const s = original.snapshot();
          const restored = new RetryBudget(p, b);
          restored.restore(JSON.parse(JSON.stringify(s)), b);
          expect(drive(restored, after, b)).toEqual(drive(original, after, s.clock));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("restored `age` ms after its snapshot, grants as the original would at that age: what aged out is gone", () => {
    const first = fc.record({ kind: fc.constantFrom("grant" as const, "available" as const) });
    const age = fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 64 * 30_000 }).map(grid));
    fc.assert(
      fc.property(
        policy,
        fc.array(op, { maxLength: 150 }),
        first,
        fc.array(op, { maxLength: 100 }),
        age,
        scale,
        scale,
        (p, before, head, after, d, a, b) => {
          const original = new RetryBudget(p, a);
          drive(original, before, a);
          const s = original.snapshot();
          const restored = new RetryBudget(p, b);
          restored.restore(stored(original), b + d, { age: d });
          expect(drive(restored, [{ ...head, dt: 0 }, ...after], b + d)).toEqual(
            drive(original, [{ ...head, dt: d }, ...after], s.clock),
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  it("with sameClock, ages by the time between the snapshot's clock and now, and not below 0", () => {
    const T = 1_700_000_000_000.5;
    const p = { ratio: 1, minPerSecond: 2, window: 1_000, buckets: 10 };
    const original = new RetryBudget(p, T);
    for (let i = 0; i < 5; i++) original.recordAttempt(T + 10);
    original.tryRetry(T + 600);
    const s = stored(original);
    const later = new RetryBudget(p, T + 1_050);
    later.restore(s, T + 1_050, { sameClock: true });
    expect(later.available(T + 1_050)).toBe(1); // the attempts at T + 10 have aged out; the retry has not
    expect(later.available(T + 1_600)).toBe(2); // and now the retry has: the floor alone
    const skewed = new RetryBudget(p, T - 50);
    skewed.restore(s, T - 50, { sameClock: true }); // a clock 50 ms behind: taken as just made
    expect(skewed.available(T - 50)).toBe(6); // 5 attempts + the floor of 2, less the retry
  });

  it("takes the counts as they are: a snapshot of more retries than this policy allows refuses until they age out", () => {
    const generous = new RetryBudget({ ratio: 1, minPerSecond: 0, window: 1_000 }, 0);
    for (let i = 0; i < 10; i++) generous.recordAttempt(0);
    for (let i = 0; i < 10; i++) generous.tryRetry(0);
    const strict = new RetryBudget({ ratio: 0.2, minPerSecond: 1, window: 1_000 }, 0);
    strict.restore(stored(generous), 0);
    expect(strict.available(0)).toBe(0); // 10 retries spent against 0.2 × 10 + 1 allowed
    strict.recordAttempt(500);
    expect(strict.available(999)).toBe(0);
    expect(strict.available(1_000)).toBe(1); // the retries aged out with the attempts at 0: 0.2 × 1 + 1
  });

  it("gives nothing back for a receipt granted before the restore", () => {
    const p = { ratio: 0, minPerSecond: 3, window: 1_000, buckets: 2 };
    const b = new RetryBudget(p, 0);
    const old = [b.grant(0), b.grant(0)];
    expect(old.every((r) => r >= 0)).toBe(true);
    const other = new RetryBudget(p, 0);
    other.grant(0);
    other.grant(0);
    b.restore(stored(other), 0);
    for (const r of old) b.giveBack(r);
    expect(b.available(0)).toBe(1); // the snapshot's two retries stand
    const mine = b.grant(0);
    b.giveBack(mine); // a receipt from after the restore gives back
    expect(b.available(0)).toBe(1);
  });

  it("round-trips: a snapshot restored and taken again is the same, bar the clock", () => {
    const b = new RetryBudget({}, 1_700_000_000_000.125);
    for (let i = 0; i < 7; i++) b.recordAttempt(1_700_000_000_010 + i * 1_000.5);
    b.tryRetry(1_700_000_000_300.5);
    b.tryRetry(1_700_000_004_000);
    const s = b.snapshot();
    expect(JSON.parse(JSON.stringify(s))).toEqual(s);
    const r = new RetryBudget();
    r.restore(stored(b), 42.5);
    expect({ ...r.snapshot(), clock: s.clock }).toEqual(s);
  });
});

const T0 = 1_700_000_000_000.25;
const good = (): RetryBudgetSnapshot => {
  const b = new RetryBudget({}, T0);
  b.recordAttempt(T0);
  b.recordAttempt(T0 + 1_500);
  b.tryRetry(T0 + 2_000);
  return b.snapshot();
};
/** A budget in a state a restore would change: attempts and retries in its window. */
const fresh = (): RetryBudget => {
  const b = new RetryBudget({}, 0);
  for (let i = 0; i < 20; i++) b.recordAttempt(i * 100);
  b.tryRetry(2_000);
  return b;
};
// Read at a reading before the budget's latest, which stands still: a read moves nothing.
const state = (b: RetryBudget): unknown => [b.snapshot(), b.available(0)];
const with_ = (change: Record<string, unknown>): unknown => ({ ...good(), ...change });
const refused = (name: string, snapshot: () => unknown, message: string): Row<RetryBudget> => [
  name,
  (b) => b.restore(snapshot(), 2_000),
  { throws: SnapshotError as unknown as ErrorConstructor, message },
];
const MAX = Number.MAX_SAFE_INTEGER;

describe("a bad snapshot is refused whole, naming its first bad field, and changes nothing", () => {
  eachRow<RetryBudget>(
    [
      refused("undefined", () => undefined, "snapshot must be an object, got undefined"),
      refused("a version from the future", () => with_({ version: 2 }), "snapshot.version must be 1, got 2"),
      refused(
        "a breaker's",
        () => with_({ kind: "breaker" }),
        'snapshot.kind must be "retry-budget" (what this restores), got "breaker"',
      ),
      refused("an extra field", () => with_({ ratio: 0.2 }), 'snapshot has an unexpected field "ratio"'),
      refused(
        "another bucket count",
        () => with_({ size: 20 }),
        "snapshot.size must be 10 (the buckets of this retry budget), got 20",
      ),
      refused(
        "another window",
        () => with_({ window: 1_000 }),
        "snapshot.window must be 10000 (the window of this retry budget, in ms), got 1000",
      ),
      refused(
        "into past a bucket",
        () => with_({ into: 1_000 }),
        "snapshot.into must be 0 or more and under 1000 (ms, one bucket of this retry budget), got 1000",
      ),
      refused(
        "a bucket of three counts",
        () => with_({ buckets: [[1, 0, 0]] }),
        "snapshot.buckets[0] must hold 2 elements, got 3",
      ),
      refused(
        "a negative retry count",
        () => with_({ buckets: [[1, -1]] }),
        `snapshot.buckets[0][1] must be a whole number from 0 to ${MAX}, got -1`,
      ),
      refused(
        "more attempts than a number counts exactly",
        () =>
          with_({
            buckets: [
              [MAX, 0],
              [1, 0],
            ],
          }),
        `snapshot.buckets[1] takes the counts past ${MAX}, more than a number counts exactly`,
      ),
      [
        "a NaN now",
        (b) => b.restore(good(), Number.NaN),
        { throws: RangeError, message: "RetryBudget.restore now (ms) must be a finite number, got NaN" },
      ],
      [
        "a negative age",
        (b) => b.restore(good(), 0, { age: -1 }),
        { throws: RangeError, message: "RetryBudget.restore age (ms) must be 0 or more, got -1" },
      ],
      [
        "a reading too coarse for a bucket",
        (b) => b.restore(good(), 1e20),
        {
          throws: RangeError,
          message:
            "RetryBudget.restore now (ms) 100000000000000000000 is too coarse a reading for buckets of 1000 ms (window ÷ size): the bucket rounds away there",
        },
      ],
    ],
    fresh,
    state,
  );

  it("is a SnapshotError that names the field, recognised by its brand as every package's are", () => {
    let caught: unknown;
    try {
      fresh().restore(with_({ into: -1 }), 0);
    } catch (e) {
      caught = e;
    }
    expect(isSnapshotError(caught)).toBe(true);
    expect((caught as SnapshotError).field).toBe("snapshot.into");
  });
});
