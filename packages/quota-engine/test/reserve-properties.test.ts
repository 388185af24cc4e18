// Reservations as properties, on random limits (buckets of one number and of two, windows aligned
// or not, GCRA) at clocks near 0, near performance.now() and near Date.now():
// - reserve, then settle at the actual cost, leaves the state that charging the actual cost at
//   the reservation's instant would have: the same answers to every later probe (a settle later
//   than the reservation: the same after a refund, never more permissive after a top-up);
// - no sequence of reserves, settles, cancels, repeats and expiries mints capacity: what was
//   admitted, less what was refunded, plus what remains, never passes what the limit gives.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { QuotaEngine, QuotaKey, charge, limitSpec } from "@tideward/quota-engine";
import type { ChargeKind, QuotaCharge, TopUp } from "@tideward/quota-engine";
import { STARTS } from "./traffic";
import type { SpecFields } from "./traffic";

const KINDS: ChargeKind[] = ["bucket", "window", "gcra"];

// Limits whose buckets keep one number (a token's ms on the 2^-7 ms grid: refill 1 or 10) and
// two (refill 3 or 7), as often.
const specArb = fc.record({
  capacity: fc.integer({ min: 1, max: 16 }),
  refill: fc.constantFrom(1, 3, 7, 10),
  window: fc.constantFrom(50, 100, 1_000),
  burst: fc.integer({ min: 1, max: 16 }),
  align: fc.boolean(),
});
const key = new QuotaKey("t", "k", "r");
const one = (cost: number, kind: ChargeKind): QuotaCharge[] => [charge(key, "l", cost, kind)];

function engine(s: SpecFields, topUp: TopUp = "debt"): QuotaEngine {
  const e = new QuotaEngine({ topUp, sweepStep: 0 });
  expect(e.addLimit(limitSpec({ name: "l", ...s })).ok).toBe(true);
  return e;
}

/** Units the limit admits back to back from rest: the burst for GCRA, else the capacity. */
const size = (s: SpecFields, kind: ChargeKind): number => (kind === "gcra" ? s.burst : s.capacity);

/** Whole units `e` would admit now: what a unit peek sees before its charge. */
function held(e: QuotaEngine, kind: ChargeKind, now: number): number {
  const d = e.peekAtomic(one(1, kind), now).decisions[0];
  return d.allowed ? d.remaining + 1 : d.remaining;
}

/**
 * Whether `e`'s state is one a snapshot may hold: a restore checks every number against its limit
 * (no bucket above its capacity, no flow ahead by less than nothing, no debt past a limit's worth).
 */
function valid(e: QuotaEngine): boolean {
  new QuotaEngine().restore(e.snapshot());
  return true;
}

/** What every probe of `cost` 1 to `most` answers at `now` and at a few later instants. */
function probes(e: QuotaEngine, kind: ChargeKind, s: SpecFields, now: number): [boolean, number, number][] {
  const out: [boolean, number, number][] = [];
  for (const later of [0, s.window / 3, s.window, 2.5 * s.window])
    for (let cost = 1; cost <= size(s, kind); cost++) {
      const d = e.peekAtomic(one(cost, kind), now + later).decisions[0];
      out.push([d.allowed, d.remaining, d.retryAfter]);
    }
  return out;
}

// Answers alike: the same decisions and units, and waits within a few float steps of the clock.
function alike(a: [boolean, number, number][], b: [boolean, number, number][], scale: number): void {
  expect(a.map(([ok, left]) => [ok, left])).toEqual(b.map(([ok, left]) => [ok, left]));
  a.forEach(([, , wait], i) => {
    const other = b[i][2];
    if (wait === Infinity || other === Infinity) expect(wait).toBe(other);
    else expect(Math.abs(wait - other)).toBeLessThanOrEqual(1e-9 * Math.max(1, scale));
  });
}

// Traffic before the reservation: a few charges, some refused, spread over time.
const priorArb = fc.array(fc.tuple(fc.double({ min: 0, max: 400, noNaN: true }), fc.integer({ min: 1, max: 8 })), {
  maxLength: 6,
});

describe.each(STARTS)("reserve then settle, on %s", (_, starts) => {
  it("property: settled at the reservation's instant, the state is the actual cost charged there", () => {
    fc.assert(
      fc.property(
        specArb,
        fc.constantFrom(...KINDS),
        starts,
        priorArb,
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 0, max: 8 }),
        (s, kind, start, prior, reserved, actual) => {
          const a = engine(s);
          const b = engine(s);
          let now = start;
          for (const [dt, cost] of prior) {
            now += dt;
            a.checkAtomic(one(cost, kind), now);
            b.checkAtomic(one(cost, kind), now);
          }
          const r = a.reserve(one(reserved, kind), now);
          // Only where both are admitted: a reservation that fits, an actual a charge would pass.
          if (!r.committed || (actual > 0 && !b.peekAtomic(one(actual, kind), now).allowed)) return;
          if (actual > 0) expect(b.checkAtomic(one(actual, kind), now).committed).toBe(true);
          const settled = a.settle(r.id, { l: actual }, now);
          expect(settled.ok && settled.charges[0].forgiven).toBe(0);
          expect(valid(a)).toBe(true);
          alike(probes(a, kind, s, now), probes(b, kind, s, now), now);
        },
      ),
    );
  });

  it("property: settled later, a refund leaves the same state, a top-up one never more permissive", () => {
    fc.assert(
      fc.property(
        specArb,
        fc.constantFrom(...KINDS),
        starts,
        priorArb,
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 0, max: 8 }),
        fc.double({ min: 0, max: 2_500, noNaN: true }),
        (s, kind, start, prior, reserved, actual, later) => {
          const a = engine(s);
          const b = engine(s);
          let now = start;
          for (const [dt, cost] of prior) {
            now += dt;
            a.checkAtomic(one(cost, kind), now);
            b.checkAtomic(one(cost, kind), now);
          }
          const r = a.reserve(one(reserved, kind), now);
          if (!r.committed || (actual > 0 && !b.peekAtomic(one(actual, kind), now).allowed)) return;
          if (actual > 0) b.checkAtomic(one(actual, kind), now);
          const then = now + later;
          expect(a.settle(r.id, { l: actual }, then).ok).toBe(true);
          expect(valid(a)).toBe(true);
          const got = probes(a, kind, s, then);
          const want = probes(b, kind, s, then);
          if (actual <= reserved) alike(got, want, then);
          else
            got.forEach(([ok, left], i) => {
              // Units held before the probe's charge: what remains after it, plus its cost if it passed.
              const cost = (i % size(s, kind)) + 1;
              expect(!ok || want[i][0]).toBe(true);
              expect(ok ? left + cost : left).toBeLessThanOrEqual(want[i][0] ? want[i][1] + cost : want[i][1]);
            });
        },
      ),
    );
  });
});

// One operation of a random sequence on one key: a plain charge, a reservation (with a time to
// live, so some expire), a settle or a cancel of one made earlier (some twice), or time passing.
const opArb = fc.oneof(
  { weight: 1, arbitrary: fc.record({ op: fc.constant("check" as const), cost: fc.integer({ min: 1, max: 3 }) }) },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant("reserve" as const),
      cost: fc.integer({ min: 1, max: 4 }),
      ttl: fc.integer({ min: 1, max: 3_000 }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant("settle" as const),
      which: fc.nat(),
      actual: fc.integer({ min: 0, max: 8 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("cancel" as const), which: fc.nat() }) },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant("wait" as const),
      dt: fc.oneof(fc.double({ min: 0, max: 60, noNaN: true }), fc.double({ min: 0, max: 600, noNaN: true })),
    }),
  },
);
const opsArb = fc.array(opArb, { minLength: 4, maxLength: 40, size: "max" });

/**
 * Runs `ops` on a fresh engine from `start`; returns what was admitted (reserved or charged), what
 * the settles reported refunded, what the limit holds at the end, and how long it all took. Along
 * the way, every settle or cancel after the first of a reservation changes nothing and says so.
 */
function run(
  s: SpecFields,
  kind: ChargeKind,
  topUp: TopUp,
  start: number,
  ops: readonly Op[],
): { admitted: number; refunded: number; left: number; elapsed: number } {
  const e = engine(s, topUp);
  const ids: string[] = [];
  const ends = new Map<string, number>();
  const closed = new Map<string, "already_settled" | "already_cancelled">();
  const state = (): string => {
    const { clock: _, ...rest } = e.snapshot();
    return JSON.stringify(rest);
  };
  let now = start;
  let admitted = 0;
  let refunded = 0;
  for (const o of ops) {
    if (o.op === "wait") now += o.dt;
    else if (o.op === "check") {
      if (e.checkAtomic(one(o.cost, kind), now).committed) admitted += o.cost;
    } else if (o.op === "reserve") {
      const r = e.reserve(one(o.cost, kind), now, { ttl: o.ttl });
      if (r.committed) {
        admitted += o.cost;
        ids.push(r.id);
        ends.set(r.id, now + o.ttl);
      }
    } else if (ids.length > 0) {
      // Mostly the latest few, so that most settle an open reservation; some settle one again.
      const id = ids[ids.length - 1 - (o.which % Math.min(ids.length, 3))];
      const before = state();
      const answer = o.op === "settle" ? e.settle(id, { l: o.actual }, now) : e.cancel(id, now);
      if (answer.ok) {
        expect(closed.has(id)).toBe(false);
        closed.set(id, o.op === "settle" ? "already_settled" : "already_cancelled");
        refunded += answer.charges[0].refunded;
      } else {
        // Past its time to live, unknown; before, said once closed: either way nothing changed.
        const gone = now >= (ends.get(id) as number);
        expect(answer.code).toBe(gone ? "unknown_reservation" : closed.get(id));
        expect(state()).toBe(before);
      }
    }
    expect(valid(e)).toBe(true);
  }
  return { admitted, refunded, left: held(e, kind, now), elapsed: now - start };
}

type Op =
  | { op: "check"; cost: number }
  | { op: "reserve"; cost: number; ttl: number }
  | { op: "settle"; which: number; actual: number }
  | { op: "cancel"; which: number }
  | { op: "wait"; dt: number };

describe.each(STARTS)("no sequence mints capacity, on %s", (_, starts) => {
  it("property: a bucket admits, less refunds, plus what it holds, at most its capacity and its refill since", () => {
    fc.assert(
      fc.property(specArb, fc.constantFrom<TopUp>("debt", "cap"), starts, opsArb, (s, topUp, start, ops) => {
        const { admitted, refunded, left, elapsed } = run(s, "bucket", topUp, start, ops);
        expect(admitted - refunded + left).toBeLessThanOrEqual(s.capacity + (elapsed * s.refill) / s.window + 1e-6);
      }),
    );
  });

  it("property: a GCRA flow admits, less refunds, plus what it would admit, at most its burst and one unit an interval since", () => {
    fc.assert(
      fc.property(specArb, fc.constantFrom<TopUp>("debt", "cap"), starts, opsArb, (s, topUp, start, ops) => {
        const { admitted, refunded, left, elapsed } = run(s, "gcra", topUp, start, ops);
        expect(admitted - refunded + left).toBeLessThanOrEqual(s.burst + (elapsed * s.refill) / s.window + 1e-6);
      }),
    );
  });

  it("property: within one window, a window admits, less refunds, plus its room, at most its capacity", () => {
    fc.assert(
      fc.property(specArb, fc.constantFrom<TopUp>("debt", "cap"), starts, opsArb, (s, topUp, start, ops) => {
        // Unaligned, and every operation before the first window (opened by the first charge) ends.
        const spec = { ...s, align: false };
        let spent = 0;
        const inside = (ops as Op[]).filter((o) => o.op !== "wait" || (spent += o.dt) < spec.window * 0.99);
        const { admitted, refunded, left } = run(spec, "window", topUp, start, inside);
        expect(admitted - refunded + left).toBeLessThanOrEqual(spec.capacity);
      }),
    );
  });
});
