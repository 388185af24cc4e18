// Reservations in process, beyond what the conformance suite pins for every store: ids made by the
// engine, the bound on open reservations and on remembered ids, memory that follows the
// reservations in use, restore, maxKeys, and bad input refused by name with nothing changed.
import { describe, expect, it } from "vitest";
import { QuotaEngine, QuotaKey, charge, limitSpec, perSecond } from "@tideward/quota-engine";
import type { ActualCost, QuotaCharge, ReserveOptions } from "@tideward/quota-engine";
import { eachRow } from "../../../scripts/test-support/bad-input";
import type { Row } from "../../../scripts/test-support/bad-input";

const alice = new QuotaKey("acme", "alice", "llm");
const tenant = new QuotaKey("acme", "*", "llm");
const tokens = (cost: number, key = tenant): QuotaCharge[] => [charge(key, "tokens", cost)];

function engine(policy?: ConstructorParameters<typeof QuotaEngine>[0]): QuotaEngine {
  const e = new QuotaEngine(policy);
  e.addLimit(limitSpec({ name: "tokens", capacity: 1_000, refill: 1_000, window: 1_000 }));
  return e;
}

describe("reservation ids", () => {
  it("are made as # and a number when none is given, and never reuse one in use", () => {
    const e = engine();
    expect([e.reserve(tokens(1), 0).id, e.reserve(tokens(1), 0).id]).toEqual(["#1", "#2"]);
    // A refused reserve with no id makes none.
    const refused = e.reserve(tokens(5_000), 0);
    expect([refused.code, refused.id]).toEqual(["refused", ""]);
    expect(e.reserve(tokens(1), 0).id).toBe("#3");
  });

  it("count up in decimal through every thousand, and each settles by its id", () => {
    const e = new QuotaEngine();
    e.addLimit(perSecond("r", 1_000_000));
    const ids = Array.from({ length: 2_101 }, () => e.reserve([charge(tenant, "r")], 0, { ttl: 60_000 }).id);
    expect(ids).toEqual(Array.from({ length: 2_101 }, (_, i) => `#${i + 1}`));
    // Out of the order they were made, across the thousands.
    for (const id of ["#1000", "#2", "#2100", "#1001", "#999", "#2000"])
      expect(e.settle(id, { r: 0 }, 1)).toMatchObject({ ok: true, id });
    expect(e.settle("#1000", { r: 0 }, 1)).toMatchObject({ ok: false, code: "already_settled" });
    expect(e.settle("#1500", { x: 0 }, 1)).toMatchObject({
      ok: false,
      code: "unknown_dimension",
      reason: expect.stringContaining('reservation "#1500" charged no limit "x"') as string,
    });
  });

  it("an open reservation is found however many are made after it", () => {
    for (const max of [4, 100_000]) {
      const e = engine({ maxReservations: max });
      const first = e.reserve(tokens(100), 0, { ttl: 60_000 });
      for (let i = 0; i < 5_000; i++) {
        const r = e.reserve(tokens(1), 0);
        expect(e.cancel(r.id, 0).ok).toBe(true);
      }
      // A made id with a leading zero is another id.
      expect(e.cancel("#01", 0)).toMatchObject({ ok: false, code: "unknown_reservation" });
      const s = e.settle(first.id, { tokens: 40 }, 0);
      expect(s.ok && s.charges[0].refunded).toBe(60);
    }
  });

  it("a caller's id may not start with #, the engine's own ids do", () => {
    const e = engine();
    expect(() => e.reserve(tokens(1), 0, { id: "#1" })).toThrow(
      new RangeError('reserve options id must not start with "#" (the engine\'s own ids do), got "#1"'),
    );
    expect(e.stats().reservations).toBe(0);
  });
});

describe("maxReservations", () => {
  it("refuses a reservation past the bound, naming it, and charges nothing; a settle or an expiry makes room", () => {
    const e = engine({ maxReservations: 2 });
    const first = e.reserve(tokens(100), 0, { ttl: 1_000 });
    e.reserve(tokens(100), 0, { ttl: 5_000 });
    const third = e.reserve(tokens(100), 0);
    expect([third.code, third.committed, third.failedIndex, third.retryAfter, third.decisions]).toEqual([
      "reservation_limit",
      false,
      -1,
      0,
      [],
    ]);
    // 200 reserved, not 300.
    expect([e.peekAtomic(tokens(800), 0).allowed, e.peekAtomic(tokens(801), 0).allowed]).toEqual([true, false]);
    expect(e.settle(first.id, { tokens: 100 }, 0).ok).toBe(true);
    expect(e.reserve(tokens(1), 0, { ttl: 2_000 }).code).toBe("reserved");
    expect(e.reserve(tokens(1), 0).code).toBe("reservation_limit");
    // At 5 000 ms both open ones have expired: made room for this one, or dropped by a sweep.
    expect(e.reserve(tokens(1), 5_000).code).toBe("reserved");
    e.sweep(5_000);
    expect(e.stats().reservations).toBe(1);
  });

  it("is a whole number from 1 to 2^24", () => {
    expect(() => new QuotaEngine({ maxReservations: 0 })).toThrow(
      "QuotaEngine maxReservations must be 1 or more, got 0",
    );
    expect(() => new QuotaEngine({ maxReservations: 2 ** 24 + 1 })).toThrow(
      "QuotaEngine maxReservations must be at most 16777216 (2^24), got 16777217",
    );
    expect(() => new QuotaEngine({ reservationTtl: 0 })).toThrow(
      "QuotaEngine reservationTtl must be from 1 to 17592186044416 ms (2^44), got 0",
    );
    expect(() => new QuotaEngine({ topUp: "owe" as "debt" })).toThrow(
      'QuotaEngine topUp must be "debt" or "cap", got "owe"',
    );
  });

  it("remembers at most as many settled ids: past it, the oldest is forgotten (and still never settles twice)", () => {
    const e = engine({ maxReservations: 2 });
    const ids = [1, 2, 3].map(() => {
      const r = e.reserve(tokens(100), 0);
      expect(e.settle(r.id, { tokens: 50 }, 0).ok).toBe(true);
      return r.id;
    });
    const again = ids.map((id) => {
      const answer = e.cancel(id, 0);
      return answer.ok ? "cancelled" : answer.code;
    });
    expect(again).toEqual(["unknown_reservation", "already_settled", "already_settled"]);
    // Three settled at 50 each: 150 charged, nothing given back twice.
    expect(e.checkTokenBucket(tenant, "tokens", 0, 850).allowed).toBe(true);
    expect(e.checkTokenBucket(tenant, "tokens", 0).allowed).toBe(false);
  });
});

describe("memory follows the reservations in use", () => {
  it("reservations left alone expire as new ones are made, each settled as reserved", () => {
    const e = new QuotaEngine();
    e.addLimit(perSecond("r", 1_000_000));
    let now = 0;
    for (let i = 0; i < 20_000; i++) e.reserve([charge(alice, "r", 1)], (now += 0.1), { ttl: 10 });
    // 10 ms at 0.1 ms each: about 100 open at a time.
    expect(e.stats().reservations).toBeLessThanOrEqual(101);
    expect(e.stats().reservations).toBeGreaterThan(90);
  });

  it("sweep drops expired reservations on an engine that makes no more", () => {
    const e = engine();
    for (let i = 0; i < 50; i++) e.reserve(tokens(1), 0, { ttl: 100 });
    expect(e.stats().reservations).toBe(50);
    expect(e.sweep(99).expired).toBe(0);
    expect(e.sweep(100, 30).expired).toBe(30);
    expect(e.sweep(100).expired).toBe(20);
    expect(e.stats().reservations).toBe(0);
  });

  it("a restore forgets every reservation; its charges stand", () => {
    const e = engine();
    const r = e.reserve(tokens(600), 0);
    e.restore(e.snapshot());
    expect(e.stats().reservations).toBe(0);
    expect(e.cancel(r.id, 0)).toMatchObject({ ok: false, code: "unknown_reservation" });
    expect(e.checkTokenBucket(tenant, "tokens", 0, 400).allowed).toBe(true);
    expect(e.checkTokenBucket(tenant, "tokens", 0).allowed).toBe(false);
  });
});

describe("settle", () => {
  it("a limit charged more than once settles in proportion, the first charge at the actual, rounded up", () => {
    const e = engine();
    const r = e.reserve([charge(alice, "tokens", 4), charge(tenant, "tokens", 6)], 0);
    const s = e.settle(r.id, { tokens: 3 }, 0);
    // 3 of 4 reserved: the second comes to ⌈3 · 6 / 4⌉ = 5.
    expect(s.ok && s.charges.map((c) => [c.key.id, c.reserved, c.actual, c.refunded])).toEqual([
      [alice.id, 4, 3, 1],
      [tenant.id, 6, 5, 1],
    ]);
  });

  it("in proportion alike for a small set and a large one (past 16 charges)", () => {
    for (const n of [4, 20]) {
      const e = new QuotaEngine();
      e.addLimit(limitSpec({ name: "tokens", capacity: 1_000 }));
      const keys = Array.from({ length: n }, (_, i) => new QuotaKey("t", `k${i}`, "r"));
      const r = e.reserve(
        keys.map((k, i) => charge(k, "tokens", 3 * (i + 1))),
        0,
      );
      const s = e.settle(r.id, { tokens: 2 }, 0);
      // The first reserved 3 and comes to 2; charge i reserved 3(i + 1) and comes to 2(i + 1).
      expect(s.ok && s.charges.map((c) => c.actual)).toEqual(keys.map((_, i) => 2 * (i + 1)));
    }
  });

  it("a top-up to a key dropped since, with maxKeys reached and nothing idle, is forgiven", () => {
    const e = engine({ maxKeys: 1, sweepStep: 0 });
    const r = e.reserve(tokens(10, alice), 0);
    // alice's bucket is full again at 10 ms and bob takes its slot.
    const bob = new QuotaKey("acme", "bob", "llm");
    expect(e.checkTokenBucket(bob, "tokens", 20, 500).allowed).toBe(true);
    const s = e.settle(r.id, { tokens: 30 }, 20);
    expect(s.ok && s.charges.map((c) => [c.toppedUp, c.forgiven])).toEqual([[0, 20]]);
    expect(e.stats().keys).toBe(1);
  });

  it("a top-up to a key dropped since takes a slot as a charge would", () => {
    const e = engine({ sweepStep: 0 });
    const r = e.reserve(tokens(10, alice), 0);
    e.sweep(20);
    expect(e.stats().keys).toBe(0);
    const s = e.settle(r.id, { tokens: 510 }, 20);
    expect(s.ok && s.charges.map((c) => [c.toppedUp, c.forgiven])).toEqual([[500, 0]]);
    expect(e.checkTokenBucket(alice, "tokens", 20, 501).allowed).toBe(false);
    expect(e.checkTokenBucket(alice, "tokens", 20, 500).allowed).toBe(true);
  });

  it("an unknown dimension names the nearest limit the reservation charged", () => {
    const e = engine();
    const r = e.reserve(tokens(10), 0, { id: "near" });
    expect(e.settle(r.id, { token: 3 }, 0)).toEqual({
      ok: false,
      code: "unknown_dimension",
      reason: 'reservation "near" charged no limit "token"; did you mean "tokens"? (it charged "tokens")',
    });
  });
});

// Bad input: each refused by name, the engine (its state and its reservations) as it was.
type Fixture = { e: QuotaEngine; id: string };
const any = <T>(v: unknown): T => v as T;
const rows: Row<Fixture>[] = [
  [
    "a misspelt option",
    ({ e }) => e.reserve(tokens(1), 0, any<ReserveOptions>({ tll: 5 })),
    { throws: TypeError, message: 'reserve options has no field "tll"; did you mean "ttl"?' },
  ],
  [
    "options that are not an object",
    ({ e }) => e.reserve(tokens(1), 0, any<ReserveOptions>(null)),
    { throws: TypeError, message: "reserve options must be an object, got null" },
  ],
  [
    "a ttl of 0",
    ({ e }) => e.reserve(tokens(1), 0, { ttl: 0 }),
    { throws: RangeError, message: "reserve options ttl must be from 1 to 17592186044416 ms (2^44), got 0" },
  ],
  [
    "a ttl of NaN",
    ({ e }) => e.reserve(tokens(1), 0, { ttl: Number.NaN }),
    { throws: RangeError, message: "reserve options ttl must be a finite number, got NaN" },
  ],
  [
    "an id of 257 characters",
    ({ e }) => e.reserve(tokens(1), 0, { id: "x".repeat(257) }),
    { throws: RangeError, message: "reserve options id must be 1 to 256 characters, got 257" },
  ],
  [
    "an id that is a number",
    ({ e }) => e.reserve(tokens(1), 0, any<ReserveOptions>({ id: 7 })),
    { throws: TypeError, message: "reserve options id must be a string, got number 7" },
  ],
  [
    "a malformed charge, the id given",
    ({ e }) => e.reserve([charge(tenant, "tokens", 0)], 0, { id: "x" }),
    { throws: RangeError, message: "charges[0].cost must be a whole number of at least 1, got 0" },
  ],
  [
    "an actual that is an array",
    ({ e, id }) => e.settle(id, any<ActualCost>([300]), 0),
    {
      throws: TypeError,
      message: 'actual must be an object of units per limit name ({ "tokens": 300 }), got an array',
    },
  ],
  [
    "an actual of null",
    ({ e, id }) => e.settle(id, any<ActualCost>(null), 0),
    { throws: TypeError, message: 'actual must be an object of units per limit name ({ "tokens": 300 }), got null' },
  ],
  [
    "an actual of Infinity",
    ({ e, id }) => e.settle(id, { tokens: Infinity }, 0),
    { throws: RangeError, message: 'actual["tokens"] must be a whole number of at least 0, got Infinity' },
  ],
  [
    "an actual past 2^53",
    ({ e, id }) => e.settle(id, { tokens: 2 ** 53 }, 0),
    { throws: RangeError, message: 'actual["tokens"] must be a whole number of at least 0, got 9007199254740992' },
  ],
  [
    "an actual naming 65 537 limits",
    ({ e, id }) => e.settle(id, Object.fromEntries(Array.from({ length: 65_537 }, (_, i) => [`l${i}`, 1])), 0),
    { throws: RangeError, message: "actual must name at most 65536 limits, got 65537" },
  ],
  [
    "a settle at NaN",
    ({ e, id }) => e.settle(id, { tokens: 1 }, Number.NaN),
    { throws: RangeError, message: "now must be a finite number of milliseconds, got NaN" },
  ],
  [
    "a cancel of an id that is not a string",
    ({ e }) => e.cancel(any<string>(undefined), 0),
    { throws: TypeError, message: "id must be a string, got undefined undefined" },
  ],
  ["an unknown id", ({ e }) => e.settle("nobody", { tokens: 1 }, 0).ok, { answers: false }],
];

describe("bad input changes nothing", () => {
  eachRow(
    rows,
    () => {
      const e = engine();
      const id = e.reserve(tokens(500), 0).id;
      return { e, id };
    },
    ({ e }) => [e.snapshot(), e.stats().reservations],
  );
});
