// The engine's book of reservations against a model of what it must answer, whatever the order
// its records are kept and dropped in: every reserve, settle and cancel answers as a table of ids
// would (open, settled, cancelled, expired, forgotten), `maxReservations` bounds the open ones,
// and as many settled or cancelled ids are remembered, the oldest forgotten first. The traffic
// wraps the record ring many times over (bursts of hundreds of reservations) with a few long-lived
// ones among them, at clocks near 0 and near Date.now().
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { QuotaEngine, QuotaKey, charge, limitSpec } from "@tideward/quota-engine";
import { STARTS } from "./traffic";

const key = new QuotaKey("t", "k", "r");
const NAMES = ["a", "b", "c", "d", "e", "f"];
const TTLS = [1, 3, 50, 1_000, 1e7];

type Op =
  | { op: "reserve"; name: number; cost: number; ttl: number }
  | { op: "burst"; count: number; ttl: number; step: number; churn: boolean }
  | { op: "settle" | "cancel"; pick: number; actual: number }
  | { op: "advance"; by: number }
  | { op: "sweep"; budget: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    op: fc.constant("reserve" as const),
    name: fc.integer({ min: -1, max: NAMES.length - 1 }), // -1: an id made for it
    cost: fc.integer({ min: 1, max: 2 }),
    ttl: fc.constantFrom(...TTLS),
  }),
  fc.record({
    op: fc.constant("burst" as const),
    count: fc.integer({ min: 1, max: 300 }),
    ttl: fc.constantFrom(...TTLS),
    step: fc.constantFrom(0, 0.25, 1),
    churn: fc.boolean(), // each one cancelled as soon as it is made
  }),
  fc.record({
    op: fc.constantFrom("settle" as const, "cancel" as const),
    pick: fc.nat(),
    actual: fc.integer({ min: 0, max: 3 }),
  }),
  fc.record({ op: fc.constant("advance" as const), by: fc.constantFrom(0, 0.5, 1, 7, 100, 2_000) }),
  fc.record({ op: fc.constant("sweep" as const), budget: fc.constantFrom(0, 1, 3, Infinity) }),
);

/** A reservation as the model keeps it. */
interface Kept {
  cost: number;
  expiresAt: number;
  status: "open" | "settled" | "cancelled";
  /** Its place among closings (settles and cancels), once closed. */
  closed: number;
}

/** What the engine must answer: a table of ids, nothing dropped early but the oldest tombstones. */
class Model {
  readonly byId = new Map<string, Kept>();
  closings = 0;
  made = 0;

  constructor(readonly max: number) {}

  // The reservation under `id` at `t`, if it is neither past its time to live nor forgotten.
  find(id: string, t: number): Kept | undefined {
    const r = this.byId.get(id);
    if (r === undefined) return undefined;
    const forgotten = r.status !== "open" && r.closed < this.closings - this.max;
    if (t < r.expiresAt && !forgotten) return r;
    this.byId.delete(id);
    return undefined;
  }

  open(t: number): number {
    let n = 0;
    for (const [id, r] of this.byId) if (r.status === "open" && this.find(id, t) !== undefined) n++;
    return n;
  }

  reserve(name: string | undefined, cost: number, ttl: number, t: number): string {
    if (name !== undefined) {
      const r = this.find(name, t);
      if (r !== undefined) return r.status === "open" && r.cost === cost ? "replayed" : "duplicate_id";
    }
    if (this.open(t) >= this.max) return "reservation_limit";
    const id = name ?? `#${++this.made}`;
    if (name !== undefined) this.made++;
    this.byId.set(id, { cost, expiresAt: t + ttl, status: "open", closed: -1 });
    return `reserved ${id}`;
  }

  close(id: string, t: number, status: "settled" | "cancelled"): string {
    const r = this.find(id, t);
    if (r === undefined) return "unknown_reservation";
    if (r.status !== "open") return `already_${r.status}`;
    r.status = status;
    r.closed = this.closings++;
    return "ok";
  }
}

describe("the book of reservations answers as a table of ids would", () => {
  for (const [clock, startArb] of STARTS)
    it(`every reserve, settle and cancel, through many wraps of its ring, at ${clock}`, () => {
      fc.assert(
        fc.property(
          startArb,
          fc.constantFrom(1, 2, 5, 40, 100_000),
          fc.array(opArb, { minLength: 1, maxLength: 60 }),
          (start, max, ops) => {
            const e = new QuotaEngine({ maxReservations: max, sweepStep: 0 });
            e.addLimit(limitSpec({ name: "l", capacity: 1e9, refill: 1, window: 1 }));
            const m = new Model(max);
            const ids: string[] = [...NAMES, "#1", "#999999"];
            let now = start;
            const reserve = (name: string | undefined, cost: number, ttl: number): string => {
              const r = e.reserve([charge(key, "l", cost)], now, name === undefined ? { ttl } : { id: name, ttl });
              const got = r.code === "reserved" ? `reserved ${r.id}` : r.code;
              expect(got).toBe(m.reserve(name, cost, ttl, now));
              if (r.code === "reserved" && name === undefined) ids.push(r.id);
              return r.id;
            };
            const close = (id: string, op: "settle" | "cancel", actual: number): void => {
              const r = op === "settle" ? e.settle(id, { l: actual }, now) : e.cancel(id, now);
              expect(r.ok ? "ok" : r.code).toBe(m.close(id, now, op === "settle" ? "settled" : "cancelled"));
            };
            for (const o of ops) {
              if (o.op === "reserve") reserve(o.name < 0 ? undefined : NAMES[o.name], o.cost, o.ttl);
              else if (o.op === "burst")
                for (let i = 0; i < o.count; i++, now += o.step) {
                  const id = reserve(undefined, 1, o.ttl);
                  if (o.churn && id !== "") close(id, "cancel", 0);
                }
              else if (o.op === "advance") now += o.by;
              else if (o.op === "sweep") {
                e.sweep(now, o.budget);
                if (o.budget === Infinity) expect(e.stats().reservations).toBe(m.open(now));
              } else close(ids[o.pick % ids.length], o.op, o.actual);
              // The open ones counted include those past their time to live not yet dropped.
              expect(e.stats().reservations).toBeGreaterThanOrEqual(m.open(now));
            }
          },
        ),
        { numRuns: 60 },
      );
    });
});

describe("records made out of order", () => {
  for (const start of [1_000, 1.7e12 + 0.25])
    it(`expire in the order of their instants, however many are gone before (clock ${start})`, () => {
      const e = new QuotaEngine({ maxReservations: 5, sweepStep: 0 });
      e.addLimit(limitSpec({ name: "l", capacity: 1e9, refill: 1, window: 1 }));
      const one = [charge(key, "l", 1)];
      const long = e.reserve(one, start, { ttl: 1e7 });
      // Each expires before the long one: out of order. Cancelled, each is a tombstone, and all
      // but the last five are forgotten, so most of what waits to expire is of records gone.
      for (let i = 0; i < 500; i++) expect(e.cancel(e.reserve(one, start, { ttl: 100 + i }).id, start).ok).toBe(true);
      const short = [1, 2, 3].map((i) => e.reserve(one, start, { ttl: 10 * i }).id);
      expect(e.stats().reservations).toBe(4);
      // Each expires at its instant, the long one last.
      expect(e.sweep(start + 10, Infinity).expired).toBe(1);
      expect(e.settle(short[0], { l: 0 }, start + 10)).toMatchObject({ code: "unknown_reservation" });
      expect(e.settle(short[1], { l: 0 }, start + 19).ok).toBe(true);
      expect(e.sweep(start + 30, Infinity).expired).toBe(1);
      expect(e.stats().reservations).toBe(1);
      expect(e.settle(long.id, { l: 0 }, start + 1e7 - 1).ok).toBe(true);
    });
});
