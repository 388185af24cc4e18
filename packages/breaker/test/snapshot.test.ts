// Snapshots: a breaker restored from another's snapshot (through JSON, onto a clock of another
// scale) decides as the original would have gone on deciding; what aged out stays out; a bad
// snapshot is refused whole, naming its first bad field, and changes nothing.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { eachRow } from "../../../scripts/test-support/bad-input.ts";
import type { Row } from "../../../scripts/test-support/bad-input.ts";
import { Breaker, SnapshotError, client, isSnapshotError } from "@tideward/breaker";
import type { BreakerSnapshot, HalfOpen, Permit, Sre } from "@tideward/breaker";
import { PASS, feed } from "./helpers";
import { SLOW, roll } from "./ops";

type Op =
  | { readonly kind: "allow"; readonly dt: number; readonly roll: number }
  | { readonly kind: "call"; readonly dt: number; readonly roll: number; readonly ok: boolean }
  | { readonly kind: "settle"; readonly dt: number; readonly which: number; readonly ok: boolean }
  | { readonly kind: "ratio"; readonly dt: number };

// Steps on a grid of 1/64 ms, which every clock below holds exactly (a float step near
// Date.now() is 1/4096 ms), so two breakers a scale apart see the same bucket boundaries.
const grid = (n: number): number => n / 64;
const dt = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0, max: 40 * 64 }).map(grid) },
  { weight: 2, arbitrary: fc.integer({ min: 40, max: 3_000 }) },
  { weight: 1, arbitrary: fc.integer({ min: -300, max: -1 }) },
  { weight: 1, arbitrary: fc.constantFrom(Number.NaN, Infinity) },
);
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("allow" as const), dt, roll }) },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant("call" as const), dt, roll, ok: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("settle" as const), dt, which: fc.nat(), ok: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("ratio" as const), dt }) },
);
// A trial, but no bound on probes in flight: those belong to the process and are not carried.
const trial: fc.Arbitrary<HalfOpen | boolean> = fc.oneof(
  fc.boolean(),
  fc.record({ probes: fc.integer({ min: 1, max: 4 }), share: fc.constantFrom(1, 0.5, 2 / 3) }),
);
// Buckets of a whole number of 1/64 ms, so every boundary is on the grid.
const policy: fc.Arbitrary<Partial<Sre>> = fc
  .record({
    floor: fc.double({ min: 0.05, max: 2, noNaN: true }),
    extra: fc.double({ min: 0, max: 2, noNaN: true }),
    protection: fc.integer({ min: 0, max: 8 }),
    probe: fc.integer({ min: 1, max: 3_000 }),
    size: fc.integer({ min: 1, max: 8 }),
    width: fc.integer({ min: 1, max: 250 * 64 }).map(grid),
    halfOpen: trial,
  })
  .map(({ floor, extra, size, width, ...rest }) => ({ ...rest, floor, k: floor + extra, size, window: size * width }));
// Near 0 and near Date.now(), on the grid.
const scale = fc.oneof(
  fc.integer({ min: 0, max: 1_000 * 64 }).map(grid),
  fc.integer({ min: 0, max: 2 ** 30 }).map((n) => 1_700_000_000_000 + grid(n)),
);

/** Runs `ops` on `b` from the reading `start`: every decision, ratio and settle (null). */
function drive(b: Breaker, ops: readonly Op[], start: number): (boolean | number | null)[] {
  const permits: Permit[] = [];
  const out: (boolean | number | null)[] = [];
  let now = start;
  for (const o of ops) {
    const t = Number.isFinite(o.dt) ? (now += o.dt) : o.dt;
    if (o.kind === "allow") {
      const permit = b.allow(t, o.roll);
      if (permit !== undefined) permits.push(permit);
      out.push(permit !== undefined);
    } else if (o.kind === "call") {
      const permit = b.allow(t, o.roll);
      if (o.ok) permit?.pass(t);
      else permit?.fail(t);
      out.push(permit !== undefined, b.ratio(t));
    } else if (o.kind === "settle") {
      const permit = permits.length > 0 ? permits[o.which % permits.length] : undefined;
      if (o.ok) permit?.pass(t);
      else permit?.fail(t);
      out.push(null);
    } else out.push(b.ratio(t));
  }
  return out;
}

/** Asks `n` times at `t` and fails every call let through: a window of failures and refusals. */
function down(b: Breaker, t: number, n = 20): void {
  for (let i = 0; i < n; i++) b.allow(t, PASS)?.fail(t);
}

/** What `b` knows, through JSON as it would be stored. */
const stored = (b: Breaker): unknown => JSON.parse(JSON.stringify(b.snapshot())) as unknown;

describe("a restored breaker", () => {
  it(
    "decides as the original goes on deciding, restored through JSON at either scale",
    () => {
      fc.assert(
        fc.property(
          policy,
          fc.array(op, { maxLength: 150 }),
          fc.array(op, { maxLength: 150 }),
          scale,
          scale,
          (p, before, after, a, b) => {
            const original = new Breaker(p, a);
            drive(original, before, a);
            const s = original.snapshot();
            const restored = new Breaker(p, b);
            restored.restore(JSON.parse(JSON.stringify(s)), b);
            expect(drive(restored, after, b)).toEqual(drive(original, after, s.clock));
          },
        ),
        { numRuns: 300 },
      );
    },
    SLOW,
  );

  it(
    "restored `age` ms after its snapshot, decides as the original would at that age: what aged out is gone",
    () => {
      // The first call after the restore moves the original to the same age (a ratio would not).
      const first = fc.record({ kind: fc.constant("call" as const), roll, ok: fc.boolean() });
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
            const original = new Breaker(p, a);
            drive(original, before, a);
            const s = original.snapshot();
            const restored = new Breaker(p, b);
            restored.restore(stored(original), b + d, { age: d });
            expect(drive(restored, [{ ...head, dt: 0 }, ...after], b + d)).toEqual(
              drive(original, [{ ...head, dt: d }, ...after], s.clock),
            );
          },
        ),
        { numRuns: 300 },
      );
    },
    SLOW,
  );

  it("with sameClock, ages by the time between the snapshot's clock and now, and not below 0", () => {
    const T = 1_700_000_000_000.5;
    const original = new Breaker(client, T);
    down(original, T);
    const s = stored(original);
    const fresh = new Breaker(client, T + 1_000);
    fresh.restore(s, T + 1_000, { sameClock: true });
    expect(fresh.ratio(T + 1_000)).toBe(0); // a second later the 750 ms window has forgotten all
    expect(fresh.snapshot().buckets).toEqual([[0, 0, 0]]);
    const skewed = new Breaker(client, T - 50);
    skewed.restore(s, T - 50, { sameClock: true }); // a clock 50 ms behind: taken as just made
    expect(skewed.ratio(T - 50)).toBe(1);
    expect(skewed.snapshot().buckets).toEqual(original.snapshot().buckets);
  });

  it("never brings back a bucket that had aged out by the snapshot's clock", () => {
    const b = new Breaker({ size: 4, window: 1_000, protection: 0 }, 0);
    feed(b, 0, 0, 10); // failures in the first bucket
    feed(b, 900, 3, 0); // successes in the last
    b.ratio(1_000); // a read moves nothing
    feed(b, 1_100, 1, 0); // the first bucket ages out here
    const s = b.snapshot();
    expect(s.buckets).toEqual([
      [3, 0, 0],
      [1, 0, 0],
    ]);
    const r = new Breaker({ size: 4, window: 1_000, protection: 0 }, 5);
    r.restore(s, 5);
    expect(r.snapshot().buckets).toEqual(s.buckets);
    expect(r.ratio(5)).toBe(0);
  });

  it("carries a half-open trial under way: the restored breaker needs only the passes left", () => {
    const p = { ...client, window: 60_000, size: 60, probe: 100, halfOpen: { probes: 3, share: 1 } };
    const T = 1_700_000_000_000;
    const b = new Breaker(p, T);
    down(b, T);
    b.allow(T + 100, 0.999)?.pass(T + 100);
    b.allow(T + 200, 0.999)?.pass(T + 200);
    expect(b.snapshot().trial).toEqual({ passes: 2, failures: 0 });
    const r = new Breaker(p, 0);
    r.restore(stored(b), 0);
    expect(r.ratio(0)).toBe(1);
    r.allow(100, 0.999)?.pass(100);
    expect(r.ratio(100)).toBe(0);
  });

  it("leaves probes in flight where they are: the snapshot's are not carried, the restorer's stay", () => {
    const p = { ...client, window: 60_000, size: 60, probe: 100, halfOpen: { inFlight: 1, hold: Infinity } };
    const T = 1_700_000_000_000;
    const a = new Breaker(p, T);
    down(a, T);
    expect(a.allow(T + 100, 0.999)).toBeDefined(); // a probe out, never settled here
    expect(a.allow(T + 300, 0.999)).toBeUndefined();
    const b = new Breaker(p, 0);
    b.restore(stored(a), 300);
    expect(b.allow(300, 0.999)).toBeDefined(); // due, and none of its own out
    // b's own probe out holds its place through a restore.
    b.restore(stored(a), 600);
    expect(b.allow(600, 0.999)).toBeUndefined();
  });

  it("round-trips: a snapshot restored and taken again is the same, bar the clock", () => {
    const b = new Breaker(client, 1_700_000_000_000.125);
    feed(b, 1_700_000_000_010, 3, 0);
    feed(b, 1_700_000_000_300.5, 1, 6);
    const s = b.snapshot();
    expect(JSON.parse(JSON.stringify(s))).toEqual(s);
    const r = new Breaker(client);
    r.restore(stored(b), 42.5);
    expect({ ...r.snapshot(), clock: s.clock }).toEqual(s);
  });
});

const T0 = 1_700_000_000_000.25;
const good = (): BreakerSnapshot => {
  const b = new Breaker(client, T0);
  feed(b, T0, 1, 0);
  feed(b, T0 + 100, 0, 9);
  return b.snapshot();
};
/** A fresh breaker in a state a restore would change: throttling, with a success in its window. */
const fresh = (): Breaker => {
  const b = new Breaker(client, 0);
  feed(b, 0, 2, 0);
  feed(b, 80, 0, 12);
  return b;
};
const state = (b: Breaker): unknown => [b.snapshot(), b.ratio(100), b.ratio(500)];
const with_ = (change: Record<string, unknown>): unknown => ({ ...good(), ...change });
const without = (field: string): unknown => {
  const s: Record<string, unknown> = { ...good() };
  delete s[field];
  return s;
};
const bad = (message: string): Row<Breaker>[2] => ({
  throws: SnapshotError as unknown as ErrorConstructor,
  message,
});
const refused = (name: string, snapshot: () => unknown, message: string): Row<Breaker> => [
  name,
  (b) => b.restore(snapshot(), 200),
  bad(message),
];

describe("a bad snapshot is refused whole, naming its first bad field, and changes nothing", () => {
  const revoked = Proxy.revocable({}, {});
  revoked.revoke();
  eachRow<Breaker>(
    [
      refused("null", () => null, "snapshot must be an object, got null"),
      refused("an array", () => [good()], "snapshot must be an object, got [object Array]"),
      refused(
        "text",
        () => JSON.stringify(good()),
        `snapshot must be an object, got ${JSON.stringify(JSON.stringify(good()))}`,
      ),
      refused("a version from the future", () => with_({ version: 2, extra: 1 }), "snapshot.version must be 1, got 2"),
      refused("no version", () => without("version"), "snapshot.version is missing"),
      refused(
        "a shedder's",
        () => with_({ kind: "shedder" }),
        'snapshot.kind must be "breaker" (what this restores), got "shedder"',
      ),
      refused("an extra field", () => with_({ open: true }), 'snapshot has an unexpected field "open"'),
      refused(
        "a __proto__ of its own",
        () => JSON.parse(`{"__proto__": {}, ${JSON.stringify(good()).slice(1)}`) as unknown,
        'snapshot has an unexpected field "__proto__"',
      ),
      refused("no buckets", () => without("buckets"), "snapshot.buckets is missing"),
      refused("a NaN clock", () => with_({ clock: Number.NaN }), "snapshot.clock must be a finite number, got NaN"),
      refused(
        "another size",
        () => ({ ...good(), size: 40 }),
        "snapshot.size must be 10 (the buckets of this breaker), got 40",
      ),
      refused(
        "another window",
        () => ({ ...good(), window: 10_000 }),
        "snapshot.window must be 750 (the window of this breaker, in ms), got 10000",
      ),
      refused(
        "into past a bucket",
        () => with_({ into: 75 }),
        "snapshot.into must be 0 or more and under 75 (ms, one bucket of this breaker), got 75",
      ),
      refused(
        "into below 0",
        () => with_({ into: -1 }),
        "snapshot.into must be 0 or more and under 75 (ms, one bucket of this breaker), got -1",
      ),
      refused("no bucket at all", () => with_({ buckets: [] }), "snapshot.buckets must hold 1 to 10 elements, got 0"),
      refused(
        "more buckets than the window has",
        () => with_({ buckets: Array.from({ length: 11 }, () => [0, 0, 0]) }),
        "snapshot.buckets must hold 1 to 10 elements, got 11",
      ),
      refused(
        "a hole in the buckets",
        () => with_({ buckets: [[1, 0, 0], , [0, 1, 0]] }), // eslint-disable-line no-sparse-arrays
        "snapshot.buckets[1] is missing (a hole)",
      ),
      refused(
        "a bucket of two counts",
        () => with_({ buckets: [[1, 2]] }),
        "snapshot.buckets[0] must hold 3 elements, got 2",
      ),
      refused(
        "a bucket as an object",
        () => with_({ buckets: [{ success: 1, failure: 0, drop: 0 }] }),
        "snapshot.buckets[0] must be an array, got [object Object]",
      ),
      refused(
        "a negative count",
        () => with_({ buckets: [[1, -2, 0]] }),
        `snapshot.buckets[0][1] must be a whole number from 0 to ${Number.MAX_SAFE_INTEGER}, got -2`,
      ),
      refused(
        "half a call",
        () => with_({ buckets: [[0.5, 0, 0]] }),
        `snapshot.buckets[0][0] must be a whole number from 0 to ${Number.MAX_SAFE_INTEGER}, got 0.5`,
      ),
      refused(
        "a count as text",
        () => with_({ buckets: [[0, 0, "3"]] }),
        `snapshot.buckets[0][2] must be a whole number from 0 to ${Number.MAX_SAFE_INTEGER}, got "3"`,
      ),
      refused(
        "more calls than a number counts exactly",
        () =>
          with_({
            buckets: [
              [Number.MAX_SAFE_INTEGER, 0, 0],
              [0, 1, 0],
            ],
          }),
        `snapshot.buckets[1] takes the calls past ${Number.MAX_SAFE_INTEGER}, more than a number counts exactly`,
      ),
      refused("a negative idle", () => with_({ idle: -5 }), "snapshot.idle must be 0 or more (ms), got -5"),
      refused(
        "an infinite idle",
        () => with_({ idle: Infinity }),
        "snapshot.idle must be a finite number, got Infinity",
      ),
      refused(
        "a trial on a breaker whose trials need one pass",
        () => with_({ buckets: [[0, 9, 0]], trial: { passes: 1, failures: 0 } }),
        "snapshot.trial.passes must be a whole number from 0 to 0, got 1",
      ),
      refused(
        "trial failures with no trial under way",
        () => with_({ trial: { passes: 0, failures: 1 } }),
        "snapshot.trial.failures must be a whole number from 0 to 0, got 1",
      ),
      refused("a trial given as a count", () => with_({ trial: 0 }), "snapshot.trial must be an object, got 0"),
      refused(
        "a getter",
        () => {
          const s: Record<string, unknown> = { ...good() };
          delete s.idle;
          return Object.defineProperty(s, "idle", { get: () => 0, enumerable: true });
        },
        "snapshot.idle must be a plain value, not an accessor",
      ),
      refused(
        "a revoked proxy",
        () => revoked.proxy,
        "snapshot could not be read: Cannot perform 'IsArray' on a proxy that has been revoked",
      ),
      [
        "a NaN now",
        (b) => b.restore(good(), Number.NaN),
        { throws: RangeError, message: "Breaker.restore now (ms) must be a finite number, got NaN" },
      ],
      [
        "a negative age",
        (b) => b.restore(good(), 200, { age: -1 }),
        { throws: RangeError, message: "Breaker.restore age (ms) must be 0 or more, got -1" },
      ],
      [
        "an age and sameClock both",
        (b) => b.restore(good(), 200, { age: 5, sameClock: true }),
        {
          throws: TypeError,
          message: "Breaker.restore takes age or sameClock, not both: with sameClock the age is now − snapshot.clock",
        },
      ],
      [
        "a misspelt option",
        (b) => b.restore(good(), 200, { ag: 5 } as never),
        { throws: TypeError, message: 'Breaker.restore has no option "ag"; did you mean "age"?' },
      ],
      [
        "sameClock given as text",
        (b) => b.restore(good(), 200, { sameClock: "yes" } as never),
        { throws: TypeError, message: 'Breaker.restore sameClock must be true or false, got "yes"' },
      ],
      [
        "a reading too coarse for a bucket",
        (b) => b.restore(good(), 1e20),
        {
          throws: RangeError,
          message:
            "Breaker.restore now (ms) 100000000000000000000 is too coarse a reading for buckets of 75 ms (window ÷ size): the bucket rounds away there",
        },
      ],
    ],
    fresh,
    state,
  );

  it("is a SnapshotError that names the field, recognised across copies by its brand", () => {
    let caught: unknown;
    try {
      fresh().restore(with_({ idle: -5 }), 0);
    } catch (e) {
      caught = e;
    }
    expect(isSnapshotError(caught)).toBe(true);
    expect((caught as SnapshotError).field).toBe("snapshot.idle");
    expect(isSnapshotError({ isSnapshotError: true })).toBe(true);
    expect(isSnapshotError(new Error("x"))).toBe(false);
  });
});
