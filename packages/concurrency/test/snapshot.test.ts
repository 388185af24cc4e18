// Snapshots of what a limiter has learned: through JSON, another process (another clock origin)
// decides as the original would; a bad snapshot is refused whole, naming its first bad field, and
// leaves the limiter as it was.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  AimdLimit,
  FixedLimit,
  Gradient2Limit,
  Limiter,
  SNAPSHOT_VERSION,
  SnapshotError,
  VegasLimit,
  isSnapshotError,
} from "@tideward/concurrency";
import type { Limit, LimiterSnapshot } from "@tideward/concurrency";

const T0 = 1_700_000_000_000.5;

/** Drives `limiter` through `n` calls from `from`, each `rtt(i)` long, every fifth dropped; returns the next instant. */
function drive(limiter: Limiter, from: number, n: number, rtt: (i: number) => number): number {
  let now = from;
  for (let i = 0; i < n; i++) {
    const held = [];
    for (let k = 0; k < 30; k++) {
      const t = limiter.acquire(now);
      if (t.ok) held.push(t);
    }
    now += rtt(i);
    held.forEach((t, k) => (k % 5 === 4 && i % 7 === 0 ? t.drop(now) : t.pass(now)));
    now += 1;
  }
  return now;
}

const makers: readonly [string, () => Limit][] = [
  ["aimd", () => new AimdLimit({ min: 1, initial: 5 })],
  ["vegas", () => new VegasLimit({ initial: 5, probe: 4 })],
  ["gradient2", () => new Gradient2Limit({ min: 1, initial: 5, long: 30 })],
  ["fixed", () => new FixedLimit(9)],
];

describe("Limiter snapshots", () => {
  for (const [name, make] of makers)
    it(`${name}: restored in another process through JSON, it decides as the original`, () => {
      fc.assert(
        fc.property(
          fc.array(
            // Multiples of 2^-8 ms: round trips both clocks measure exactly, so the two runs see the same samples.
            fc.integer({ min: 128, max: 20_480 }).map((x) => x / 256),
            { minLength: 1, maxLength: 40 },
          ),
          (rtts) => {
            const original = new Limiter(make(), { now: T0 });
            const at = drive(original, T0, rtts.length, (i) => rtts[i]);
            const json = JSON.parse(JSON.stringify(original.snapshot())) as LimiterSnapshot;
            expect(json).toMatchObject({ version: SNAPSHOT_VERSION, algorithm: name });
            // Another process: its clock starts near 0.
            const copy = new Limiter(make(), { now: 3 });
            copy.restore(json, 10);
            expect(copy.snapshot()).toEqual({ ...json, clock: 10 });
            expect(copy.limit).toBe(original.limit);
            // The same calls from here on, on each clock, move both the same way.
            const more = rtts.map((r) => r * 2);
            drive(original, at, more.length, (i) => more[i]);
            drive(copy, 10, more.length, (i) => more[i]);
            expect(copy.snapshot().state).toEqual(original.snapshot().state);
          },
        ),
        { numRuns: 40 },
      );
    });

  it("keeps the calls in flight in flight", () => {
    const limiter = new Limiter(new AimdLimit({ initial: 10, min: 1 }));
    const held = [limiter.acquire(0), limiter.acquire(0)];
    limiter.restore({ version: 1, kind: "limiter", clock: 5, algorithm: "aimd", state: { limit: 3 } }, 7);
    expect([limiter.flying, limiter.limit]).toEqual([2, 3]);
    for (const t of held) if (t.ok) t.ignore();
    expect(limiter.flying).toBe(0);
  });
});

describe("Limiter.restore refuses a bad snapshot whole", () => {
  const good = (): Record<string, unknown> => ({
    version: 1,
    kind: "limiter",
    clock: 12.5,
    algorithm: "vegas",
    state: { estimate: 40.5, noLoad: 12, count: 3, probes: 2 },
  });
  const rows: [string, (s: Record<string, unknown>) => unknown, string][] = [
    ["not an object", () => "snap", 'snapshot must be an object, got "snap"'],
    ["null", () => null, "snapshot must be an object, got null"],
    ["an array", () => [], "snapshot must be an object, got [object Array]"],
    ["another version", (s) => ({ ...s, version: 2 }), "snapshot.version must be 1, got 2"],
    ["a missing field", ({ clock: _, ...s }) => s, "snapshot.clock is missing"],
    [
      "a breaker's",
      (s) => ({ ...s, kind: "breaker" }),
      'snapshot.kind must be "limiter" (what this restores), got "breaker"',
    ],
    ["an extra field", (s) => ({ ...s, limit: 4 }), 'snapshot has an unexpected field "limit"'],
    [
      "a __proto__ of its own",
      (s) => JSON.parse(JSON.stringify(s).replace("{", '{"__proto__":{"x":1},')) as unknown,
      'snapshot has an unexpected field "__proto__"',
    ],
    [
      "a clock that is not finite",
      (s) => ({ ...s, clock: Infinity }),
      "snapshot.clock must be a finite number, got Infinity",
    ],
    [
      "another algorithm",
      (s) => ({ ...s, algorithm: "aimd" }),
      'snapshot.algorithm must be "vegas" (the algorithm of this limiter), got "aimd"',
    ],
    [
      "an estimate past max",
      (s) => ({ ...s, state: { ...(s.state as object), estimate: 1_000.5 } }),
      "snapshot.state.estimate must be a number from 1 to 1000, got 1000.5",
    ],
    [
      "an estimate that is NaN",
      (s) => ({ ...s, state: { ...(s.state as object), estimate: Number.NaN } }),
      "snapshot.state.estimate must be a number from 1 to 1000, got NaN",
    ],
    [
      "a negative no-load round trip",
      (s) => ({ ...s, state: { ...(s.state as object), noLoad: -1 } }),
      "snapshot.state.noLoad must be a number from 0 to 1.7976931348623157e+308, got -1",
    ],
    [
      "a no-load round trip of 0",
      (s) => ({ ...s, state: { ...(s.state as object), noLoad: 0 } }),
      "snapshot.state.noLoad must be above 0 ms (or null before the first sample), got 0",
    ],
    [
      "a count past any probe",
      (s) => ({ ...s, state: { ...(s.state as object), count: 30_001 } }),
      "snapshot.state.count must be a whole number from 0 to 30000, got 30001",
    ],
    [
      "a fractional count",
      (s) => ({ ...s, state: { ...(s.state as object), count: 1.5 } }),
      "snapshot.state.count must be a whole number from 0 to 30000, got 1.5",
    ],
    [
      "a getter",
      (s) => Object.defineProperty({ ...s }, "clock", { get: () => 1, enumerable: true }),
      "snapshot.clock must be a plain value, not an accessor",
    ],
    ["a class instance", (s) => Object.assign(Object.create({ x: 1 }) as object, s), "snapshot must be a plain object"],
    [
      "a revoked proxy",
      () => {
        const p = Proxy.revocable({}, {});
        p.revoke();
        return p.proxy;
      },
      "snapshot could not be read: Cannot perform 'IsArray' on a proxy that has been revoked",
    ],
  ];

  it.each(rows)("%s", (_, change, message) => {
    const limiter = new Limiter(new VegasLimit({ initial: 30 }));
    const t = limiter.acquire(0);
    if (t.ok) t.pass(9);
    const before = limiter.snapshot();
    let error: unknown;
    try {
      limiter.restore(change(good()), 20);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SnapshotError);
    expect(isSnapshotError(error)).toBe(true);
    expect((error as Error).message).toBe(message);
    expect(limiter.snapshot()).toEqual(before);
  });

  it("takes the good one", () => {
    const limiter = new Limiter(new VegasLimit({ initial: 30 }));
    limiter.restore(good(), 20);
    expect(limiter.snapshot()).toEqual({ ...good(), clock: 20 });
    expect(limiter.limit).toBe(40);
  });

  it("takes the options every restore takes, checked, and ages nothing by them: the state holds no instants", () => {
    const limiter = new Limiter(new VegasLimit());
    limiter.restore(good(), 20, { age: 60_000 });
    expect(limiter.snapshot()).toEqual({ ...good(), clock: 20 });
    limiter.restore(good(), 1_700_000_000_000.5, { sameClock: true });
    expect(limiter.snapshot()).toEqual({ ...good(), clock: 1_700_000_000_000.5 });
    expect(() => limiter.restore(good(), 20, { ag: 5 } as never)).toThrow(
      new TypeError('Limiter.restore has no option "ag"; did you mean "age"?'),
    );
    expect(() => limiter.restore(good(), 20, { age: -1 })).toThrow(
      new RangeError("Limiter.restore age (ms) must be 0 or more, got -1"),
    );
  });

  it("reads each algorithm's state within that algorithm's bounds", () => {
    const aimd = new Limiter(new AimdLimit());
    expect(() =>
      aimd.restore({ version: 1, kind: "limiter", clock: 0, algorithm: "aimd", state: { limit: 19 } }, 0),
    ).toThrow("snapshot.state.limit must be a whole number from 20 to 200, got 19");
    const g = new Limiter(new Gradient2Limit());
    expect(() =>
      g.restore(
        {
          version: 1,
          kind: "limiter",
          clock: 0,
          algorithm: "gradient2",
          state: { estimate: 30, long: null, count: 3 },
        },
        0,
      ),
    ).toThrow("snapshot.state.long must be null exactly when count is 0, got null with count 3");
    expect(() =>
      g.restore(
        { version: 1, kind: "limiter", clock: 0, algorithm: "gradient2", state: { estimate: 30, long: 5, count: 11 } },
        0,
      ),
    ).toThrow("snapshot.state.count must be a whole number from 0 to 10, got 11");
    const f = new Limiter(new FixedLimit(3));
    expect(() =>
      f.restore({ version: 1, kind: "limiter", clock: 0, algorithm: "fixed", state: { limit: 3 } }, 0),
    ).toThrow('snapshot.state has an unexpected field "limit"');
    expect(() =>
      f.restore({ version: 1, kind: "limiter", clock: 0, algorithm: "fixed", state: {} }, Number.NaN),
    ).toThrow(new RangeError("Limiter.restore now (ms) must be a finite number, got NaN"));
  });
});
