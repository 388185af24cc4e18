import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { QuotaEngine, QuotaKey, SnapshotError, isSnapshotError, perSecond } from "@tideward/quota-engine";
import type { QuotaSnapshot } from "@tideward/quota-engine";
import { STARTS, opArb, replay, setUp, specArb } from "./traffic";

const specs = fc.tuple(specArb, specArb, specArb);
const ops = fc.array(opArb, { maxLength: 60 });

describe.each(STARTS)("snapshot and restore (properties), on %s", (_, starts) => {
  it("snapshot → JSON → restore → snapshot is the identity", () => {
    fc.assert(
      fc.property(specs, ops, starts, (s, traffic, origin) => {
        const engine = setUp(s);
        replay(engine, traffic, origin, true);
        const first = engine.snapshot();
        const copy = new QuotaEngine();
        copy.restore(JSON.parse(JSON.stringify(first)));
        return JSON.stringify(copy.snapshot()) === JSON.stringify(first);
      }),
      { numRuns: 100 },
    );
  });

  it("a restored engine makes the same decisions as the original on the same future traffic", () => {
    fc.assert(
      fc.property(specs, ops, ops, starts, (s, past, future, origin) => {
        const engine = setUp(s);
        replay(engine, past, origin, true);
        const copy = new QuotaEngine();
        copy.restore(JSON.parse(JSON.stringify(engine.snapshot())));
        // Start the future at the original's clock: both engines then see the same instants.
        const start = engine.snapshot().clock ?? origin;
        return (
          JSON.stringify(replay(engine, future, start, true)) === JSON.stringify(replay(copy, future, start, true))
        );
      }),
      { numRuns: 100 },
    );
  });
});

describe.each(STARTS)("a bucket of one number's full instant, on %s", (_, starts) => {
  it("is refused below −2^45 ms, as every instant is, and read from −2^45 ms up", () => {
    fc.assert(
      fc.property(
        starts,
        fc.double({ min: 1, max: 1e300, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (origin, below, share) => {
          const engine = new QuotaEngine();
          engine.addLimit(perSecond("api", 10));
          const k = new QuotaKey("t", "u", "api");
          engine.checkTokenBucket(k, "api", origin, 3);
          const s = engine.snapshot() as unknown as Mutable;
          const copy = new QuotaEngine();
          s.fullAt[0].full = -(2 ** 45) - below;
          expect(() => copy.restore(s as unknown as QuotaSnapshot)).toThrow(/must be at least −35184372088832 ms/);
          expect(copy.stats().buckets).toBe(0);
          // Anywhere from −2^45 ms to the clock, the bucket is full: 10 pass and the 11th does not.
          s.fullAt[0].full = Math.min(origin, -(2 ** 45) + share * (origin + 2 ** 45));
          copy.restore(s);
          expect(copy.checkTokenBucket(k, "api", origin, 10).allowed).toBe(true);
          expect(copy.checkTokenBucket(k, "api", origin).allowed).toBe(false);
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe("snapshot", () => {
  it("is versioned, plain data, and lists state per algorithm", () => {
    const engine = new QuotaEngine();
    engine.addLimit(perSecond("r", 2));
    const k = new QuotaKey("t", "a", "r");
    engine.checkTokenBucket(k, "r", 10);
    engine.checkWindow(k, "r", 20);
    engine.checkGcra(k, "r", 30);
    engine.addSubject("s", 2);
    expect(engine.snapshot()).toEqual({
      version: 4,
      clock: 30,
      limits: [{ name: "r", capacity: 2, refill: 2, window: 1_000, burst: 2, align: false }],
      overrides: [],
      // A token every 500 ms: a bucket of one number, full again 500 ms after its charge at 10.
      buckets: [],
      fullAt: [{ key: { scope: "t", subject: "a", resource: "r" }, limit: "r", full: 510 }],
      windows: [{ key: { scope: "t", subject: "a", resource: "r" }, limit: "r", end: 1_020, used: 1 }],
      gcra: [{ key: { scope: "t", subject: "a", resource: "r" }, limit: "r", at: 30, ahead: 500 }],
      links: [],
      subjects: [{ subject: "s", weight: 2, used: 0 }],
    });
  });

  it("of a new engine restores to a new engine, clock null", () => {
    const empty = new QuotaEngine().snapshot();
    expect(empty.clock).toBeNull();
    const engine = new QuotaEngine();
    engine.addLimit(perSecond("r", 2));
    engine.restore(empty);
    expect(engine.limits()).toEqual([]);
    expect(engine.stats().keys).toBe(0);
  });
});

describe("restore of a version 2 snapshot", () => {
  it("reads a bucket of one number from tokens and their instant, full again once they refill", () => {
    const s = good() as unknown as Mutable;
    const engine = setUp([
      { capacity: 5, refill: 3, window: 1_000, burst: 5, align: false },
      { capacity: 3, refill: 1, window: 100, burst: 2, align: true },
      { capacity: 2, refill: 2, window: 1_000, burst: 2, align: false },
    ]);
    // Version 2 kept every bucket as tokens at an instant: "c" held 1 of 2 at 1 000, a token every 500 ms.
    const old = {
      ...s,
      version: 2,
      buckets: [...s.buckets, { key: s.fullAt[0].key, limit: "c", tokens: 1, at: 1_000 }],
    };
    delete (old as Partial<Mutable>).fullAt;
    delete (old as Partial<Mutable>).overrides;
    engine.restore(old);
    const back = engine.snapshot();
    expect(back.fullAt).toEqual([{ key: s.fullAt[0].key, limit: "c", full: 1_500 }]);
    expect(back.buckets).toEqual(s.buckets);
    const k = new QuotaKey("t", "k0", "r");
    expect(engine.checkTokenBucket(k, "c", 1_000)).toMatchObject({ allowed: true, remaining: 0, resetAfter: 1_000 });
    expect(engine.checkTokenBucket(k, "c", 1_000)).toMatchObject({ allowed: false, retryAfter: 500 });
  });
});

describe("restore of a version 3 snapshot", () => {
  it("reads it as version 4 without overrides", () => {
    const s = good() as unknown as Mutable;
    const old: Partial<Mutable> = { ...s, version: 3 };
    delete old.overrides;
    const engine = new QuotaEngine();
    engine.restore(old);
    expect(engine.snapshot()).toEqual(s);
    expect(() => engine.restore({ ...s, version: 3 })).toThrow('snapshot has an unexpected field "overrides"');
  });
});

// A valid snapshot to break one field at a time.
function good(): QuotaSnapshot {
  const engine = setUp([
    // A token every 333⅓ ms: a bucket of two numbers (tokens, at).
    { capacity: 5, refill: 3, window: 1_000, burst: 5, align: false },
    { capacity: 3, refill: 1, window: 100, burst: 2, align: true },
    { capacity: 2, refill: 2, window: 1_000, burst: 2, align: false },
  ]);
  const k = new QuotaKey("t", "k0", "r");
  engine.checkTokenBucket(k, "a", 1_000, 2);
  engine.checkWindow(k, "b", 1_000);
  engine.checkGcra(k, "c", 1_000);
  engine.checkTokenBucket(k, "c", 1_000);
  return JSON.parse(JSON.stringify(engine.snapshot())) as QuotaSnapshot;
}
type Mutable = Record<string, unknown> & {
  buckets: Record<string, unknown>[];
  fullAt: Record<string, unknown>[];
  windows: Record<string, unknown>[];
  gcra: Record<string, unknown>[];
  limits: Record<string, unknown>[];
  links: Record<string, unknown>[];
  subjects: Record<string, unknown>[];
};
const cases: [string, (s: Mutable) => unknown, string][] = [
  [
    "a bucket of one number full again before −2^45 ms, where no reading can have put it",
    (s) => {
      s.fullAt[0].full = -1e15;
      return s;
    },
    "snapshot.fullAt[0].full must be at least −35184372088832 ms (−2^45), got -1000000000000000",
  ],
  [
    "a Proxy whose traps throw",
    (s) =>
      new Proxy(s, {
        get() {
          throw new Error("proxy boom");
        },
        ownKeys() {
          throw new Error("proxy ownKeys");
        },
      }),
    "snapshot could not be read: proxy ownKeys",
  ],
  [
    "a revoked Proxy",
    () => {
      const r = Proxy.revocable({}, {});
      r.revoke();
      return r.proxy;
    },
    "snapshot could not be read: Cannot perform 'getOwnPropertyDescriptor' on a proxy that has been revoked",
  ],
  [
    "a Proxy deep inside, around a bucket's key",
    (s) => {
      s.buckets[0].key = new Proxy(
        {},
        {
          getPrototypeOf: () => {
            throw new TypeError("no prototype for you");
          },
        },
      );
      return s;
    },
    "snapshot could not be read: no prototype for you",
  ],
  [
    "a bucket of one number full again at NaN",
    (s) => {
      s.fullAt[0].full = NaN;
      return s;
    },
    "snapshot.fullAt[0].full must be a finite number, got NaN",
  ],
  [
    "a bucket of one number listed with tokens",
    (s) => {
      s.buckets.push({ key: s.fullAt[0].key, limit: "c", tokens: 1, at: 1_000 });
      return s;
    },
    'snapshot.buckets[1].limit must name a limit whose buckets keep two numbers, got "c" (its buckets belong in snapshot.fullAt)',
  ],
  [
    "a bucket of two numbers listed as one",
    (s) => {
      s.fullAt.push({ key: s.buckets[0].key, limit: "a", full: 1_000 });
      return s;
    },
    'snapshot.fullAt[1].limit must name a limit whose buckets keep one number, got "a" (its buckets belong in snapshot.buckets)',
  ],
  ["not an object", () => "snapshot", 'snapshot must be an object, got "snapshot"'],
  ["an array", () => [], "snapshot must be an object, got [object Array]"],
  ["another version", (s) => ({ ...s, version: 1 }), "snapshot.version must be 4 (or 3, or 2), got 1"],
  ["a missing field", ({ links: _, ...rest }) => rest, "snapshot.links is missing"],
  ["an unknown field", (s) => ({ ...s, extra: 1 }), 'snapshot has an unexpected field "extra"'],
  [
    "a __proto__ key (from JSON.parse)",
    (s) => JSON.parse(JSON.stringify(s).replace('{"version"', '{"__proto__":{"polluted":true},"version"')) as unknown,
    'snapshot has an unexpected field "__proto__"',
  ],
  [
    "a constructor key in an entry",
    (s) => {
      s.buckets[0] = { ...s.buckets[0], constructor: { prototype: { polluted: true } } };
      return s;
    },
    'snapshot.buckets[0] has an unexpected field "constructor"',
  ],
  ["a NaN clock", (s) => ({ ...s, clock: NaN }), "snapshot.clock must be a finite number, got NaN"],
  [
    "a null clock with key state",
    (s) => ({ ...s, clock: null }),
    "snapshot.clock must be a finite number when the snapshot holds key state",
  ],
  [
    "an invalid limit",
    (s) => {
      s.limits[1] = { ...s.limits[1], capacity: -1 };
      return s;
    },
    'snapshot.limits[1] is not a valid limit: LimitSpec capacity of "b" must be a whole number of at least 1, got -1',
  ],
  [
    "a duplicate limit",
    (s) => {
      s.limits.push(s.limits[0]);
      return s;
    },
    'snapshot.limits[3].name duplicates the limit "a"',
  ],
  [
    "a balance owing more than the capacity",
    (s) => {
      s.buckets[0].tokens = -6;
      return s;
    },
    'snapshot.buckets[0].tokens must be from −5 (in debt) to 5 (the capacity of "a"), got -6',
  ],
  [
    "a balance above capacity",
    (s) => {
      s.buckets[0].tokens = 6;
      return s;
    },
    'snapshot.buckets[0].tokens must be from −5 (in debt) to 5 (the capacity of "a"), got 6',
  ],
  [
    "NaN tokens (as JSON would never write)",
    (s) => {
      s.buckets[0].tokens = NaN;
      return s;
    },
    "snapshot.buckets[0].tokens must be a finite number, got NaN",
  ],
  [
    "state from after the clock",
    (s) => {
      s.buckets[0].at = 2_000;
      return s;
    },
    "snapshot.buckets[0].at must not be after snapshot.clock (1000), got 2000",
  ],
  [
    "an unknown limit",
    (s) => {
      s.windows[0].limit = "zzz";
      return s;
    },
    'snapshot.windows[0].limit must name a limit in snapshot.limits, got "zzz"',
  ],
  [
    "a window ending too long after the clock",
    (s) => {
      s.windows[0].end = 10_000;
      return s;
    },
    'snapshot.windows[0].end must be at most 100 ms (the window of "b") after snapshot.clock (1000), got 10000',
  ],
  [
    "a fractional window count",
    (s) => {
      s.windows[0].used = 0.5;
      return s;
    },
    "snapshot.windows[0].used must be a whole number from 0 to 6, got 0.5",
  ],
  [
    "a GCRA flow too far ahead",
    (s) => {
      s.gcra[0].ahead = 5_000;
      return s;
    },
    'snapshot.gcra[0].ahead must be from 0 to 2000 ms (burst 2 of "c", and as much owed), got 5000',
  ],
  [
    "a GCRA flow from after the clock",
    (s) => {
      s.gcra[0].at = 1_001;
      return s;
    },
    "snapshot.gcra[0].at must not be after snapshot.clock (1000), got 1001",
  ],
  [
    "a negative GCRA lead",
    (s) => {
      s.gcra[0].ahead = -1;
      return s;
    },
    'snapshot.gcra[0].ahead must be from 0 to 2000 ms (burst 2 of "c", and as much owed), got -1',
  ],
  [
    "a clock past 2^45 ms",
    (s) => ({ ...s, clock: 1e300 }),
    "snapshot.clock must be within ±35184372088832 ms (±2^45), got 1e+300",
  ],
  [
    "a limit window of 1e308 ms",
    (s) => {
      s.limits[0] = { ...s.limits[0], window: 1e308 };
      return s;
    },
    'snapshot.limits[0] is not a valid limit: LimitSpec window of "a" must be at most 17592186044416 ms (2^44, about 557 years), got 1e+308',
  ],
  [
    "an empty key part",
    (s) => {
      s.gcra[0].key = { scope: "", subject: "a", resource: "b" };
      return s;
    },
    'snapshot.gcra[0].key.scope must be a string of 1 to 1024 characters, got ""',
  ],
  [
    "a duplicate entry",
    (s) => {
      s.buckets.push(s.buckets[0]);
      return s;
    },
    'snapshot.buckets[1] duplicates an earlier entry for key 1:t2:k01:r and limit "a"',
  ],
  [
    "a link cycle",
    (s) => {
      s.links.push({
        child: { scope: "t", subject: "k4", resource: "*" },
        parent: { scope: "t", subject: "k0", resource: "r" },
        limit: "a",
        ratio: 1,
      });
      return s;
    },
    'snapshot.links[3] is not a valid link (cycle): linking 1:t2:k41:* to 1:t2:k01:r for "a" would close a cycle',
  ],
  [
    "a zero weight",
    (s) => {
      s.subjects[0].weight = 0;
      return s;
    },
    "snapshot.subjects[0].weight must be a whole number of at least 1, got 0",
  ],
  [
    "a duplicate subject",
    (s) => {
      s.subjects.push({ ...s.subjects[0] });
      return s;
    },
    'snapshot.subjects[3].subject duplicates the subject "x"',
  ],
  [
    "a hole in a list",
    (s) => {
      s.subjects.length = 5;
      return s;
    },
    "snapshot.subjects[3] is missing (a hole)",
  ],
  [
    "an accessor instead of a value",
    (s) => Object.defineProperty({ ...s }, "clock", { get: () => 1_000, enumerable: true }),
    "snapshot.clock must be a plain value, not an accessor",
  ],
];

describe("restore refuses a bad snapshot whole, naming the first bad field", () => {
  it.each(cases)("%s", (_, mutate, message) => {
    const engine = setUp([
      { capacity: 9, refill: 9, window: 1_000, burst: 9, align: false },
      { capacity: 9, refill: 9, window: 1_000, burst: 9, align: false },
      { capacity: 9, refill: 9, window: 1_000, burst: 9, align: false },
    ]);
    engine.checkTokenBucket(new QuotaKey("x", "y", "z"), "a", 50);
    const before = JSON.stringify(engine.snapshot());
    let error: unknown;
    try {
      engine.restore(mutate(good() as unknown as Mutable));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SnapshotError);
    expect(isSnapshotError(error)).toBe(true);
    expect((error as SnapshotError).message).toBe(message);
    expect(message.startsWith((error as SnapshotError).field)).toBe(true);
    expect(JSON.stringify(engine.snapshot())).toBe(before);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("accepts the unbroken snapshot", () => {
    const engine = new QuotaEngine();
    engine.restore(good());
    expect(engine.stats()).toMatchObject({ limits: 3, buckets: 2, windows: 1, gcra: 1, links: 3, subjects: 3 });
  });

  it("refuses a snapshot with more keys than maxKeys", () => {
    const engine = new QuotaEngine({ maxKeys: 3 });
    expect(() => engine.restore(good())).toThrow("snapshot.gcra[0] is past maxKeys (3) of this engine");
  });

  it("isSnapshotError recognises the brand, not the class", () => {
    expect(isSnapshotError({ isSnapshotError: true })).toBe(true);
    expect(isSnapshotError(new Error("x"))).toBe(false);
    expect(isSnapshotError(null)).toBe(false);
  });
});
