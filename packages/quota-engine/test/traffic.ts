// Random traffic for the properties that compare two engines: the same operations, replayed.
import fc from "fast-check";
import { QuotaEngine, QuotaKey, limitSpec } from "@tideward/quota-engine";
import type { ChargeKind, Decision, LimitFields, QuotaCharge } from "@tideward/quota-engine";

/**
 * Where replayed traffic starts, by clock magnitude: near 0, near performance.now() and near
 * Date.now() (fractional, where one float step is 2^-12 ms). Every property replays at each.
 */
export const STARTS: readonly (readonly [name: string, start: fc.Arbitrary<number>])[] = [
  ["a clock near 0", fc.constant(1_000)],
  ["a performance.now() clock", fc.double({ min: 1e3, max: 1e8, noNaN: true })],
  ["a Date.now() clock", fc.double({ min: 1e12, max: 1e13, noNaN: true })],
];

export const KEYS = Array.from({ length: 6 }, (_, i) => new QuotaKey("t", `k${i}`, i < 3 ? "r" : "*"));
export const LIMITS = ["a", "b", "c"];
const KINDS: ChargeKind[] = ["bucket", "window", "gcra"];

export const specArb = fc.record({
  capacity: fc.integer({ min: 1, max: 8 }),
  refill: fc.constantFrom(1, 2, 3, 5),
  window: fc.constantFrom(50, 100, 1_000),
  burst: fc.integer({ min: 1, max: 8 }),
  align: fc.boolean(),
});
export type SpecFields =
  fc.Arbitrary<{
    capacity: number;
    refill: number;
    window: number;
    burst: number;
    align: boolean;
  }> extends fc.Arbitrary<infer T>
    ? T
    : never;

const chargeArb = fc.record({
  key: fc.integer({ min: 0, max: 5 }),
  limit: fc.integer({ min: 0, max: 2 }),
  kind: fc.integer({ min: 0, max: 2 }),
  cost: fc.integer({ min: 1, max: 4 }),
});

/** One step of traffic; `dt` moves the caller's clock (sometimes backwards). */
export type Op =
  | { op: "check"; dt: number; c: { key: number; limit: number; kind: number; cost: number } }
  | { op: "atomic"; dt: number; set: { key: number; limit: number; kind: number; cost: number }[] }
  | { op: "hierarchy"; dt: number; c: { key: number; limit: number; kind: number; cost: number } }
  | { op: "usage"; dt: number; subject: number; cost: number }
  | { op: "sweep"; dt: number; budget: number };

const dt = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0, max: 120 }) },
  { weight: 1, arbitrary: fc.integer({ min: -40, max: 0 }) },
  { weight: 1, arbitrary: fc.integer({ min: 500, max: 3_000 }) },
);

export const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ op: fc.constant("check" as const), dt, c: chargeArb }) },
  {
    weight: 2,
    arbitrary: fc.record({ op: fc.constant("atomic" as const), dt, set: fc.array(chargeArb, { maxLength: 5 }) }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("hierarchy" as const), dt, c: chargeArb }) },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant("usage" as const),
      dt,
      subject: fc.integer({ min: 0, max: 2 }),
      cost: fc.integer({ min: 1, max: 5 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ op: fc.constant("sweep" as const), dt, budget: fc.integer({ min: 0, max: 8 }) }),
  },
);

/** An engine with three limits, links k0→k3, k1→k3 (ratio 2), k3→k4 on limit "a", and three subjects. */
export function setUp(specs: SpecFields[], policy: ConstructorParameters<typeof QuotaEngine>[0] = {}): QuotaEngine {
  const engine = new QuotaEngine(policy);
  specs.forEach((s, i) => engine.addLimit(limitSpec({ name: LIMITS[i], ...s })));
  engine.addLink({ child: KEYS[0], parent: KEYS[3], limit: "a", ratio: 1 });
  engine.addLink({ child: KEYS[1], parent: KEYS[3], limit: "a", ratio: 2 });
  engine.addLink({ child: KEYS[3], parent: KEYS[4], limit: "a", ratio: 1 });
  ["x", "y", "z"].forEach((s, i) => engine.addSubject(s, i + 1));
  return engine;
}

/** The key of index `i`: the shared object, or (`fresh`) a new object with the same parts. */
const keyOf = (i: number, fresh: boolean): QuotaKey =>
  fresh ? new QuotaKey(KEYS[i].scope, KEYS[i].subject, KEYS[i].resource) : KEYS[i];

const charger = (fresh: boolean) => (c: { key: number; limit: number; kind: number; cost: number }) => ({
  key: keyOf(c.key, fresh),
  limit: LIMITS[c.limit],
  cost: c.cost,
  kind: KINDS[c.kind],
});

/** Charges `c` alone at `now` by its kind (a bucket's when it has none). */
export function single(engine: QuotaEngine, c: QuotaCharge, now: number): Decision {
  if (c.kind === "window") return engine.checkWindow(c.key, c.limit, now, c.cost);
  return c.kind === "gcra"
    ? engine.checkGcra(c.key, c.limit, now, c.cost)
    : engine.checkTokenBucket(c.key, c.limit, now, c.cost);
}

/** An engine holding one limit, "l", of these fields. */
export function engineWith(s: Omit<LimitFields, "name">): QuotaEngine {
  const engine = new QuotaEngine();
  if (!engine.addLimit(limitSpec({ name: "l", ...s })).ok) throw new Error("limit l not added");
  return engine;
}

const show = (d: Decision): string =>
  JSON.stringify([d.allowed, d.reason, d.cost, d.remaining, d.retryAfter, d.resetAfter, d.trace]);

/**
 * Replays `ops` on `engine` from clock `start` and returns every answer as text. With `sweeps`
 * false the sweep steps examine nothing (so two runs differ only in what was dropped). With
 * `fresh` every charge gets a new key object, which has no remembered slot, instead of the shared one.
 */
export function replay(
  engine: QuotaEngine,
  ops: readonly Op[],
  start: number,
  sweeps: boolean,
  fresh = false,
): string[] {
  const toCharge = charger(fresh);
  const out: string[] = [];
  let now = start;
  for (const op of ops) {
    now += op.dt;
    switch (op.op) {
      case "check": {
        out.push(show(single(engine, toCharge(op.c), now)));
        break;
      }
      case "atomic": {
        const r = engine.checkAtomic(op.set.map(toCharge), now);
        out.push(JSON.stringify([r.allowed, r.committed, r.failedIndex, r.retryAfter]), ...r.decisions.map(show));
        break;
      }
      case "hierarchy": {
        const c = toCharge(op.c);
        out.push(show(engine.checkHierarchy(c.key, c.limit, now, c.cost, c.kind)));
        break;
      }
      case "usage":
        engine.recordUsage(["x", "y", "z"][op.subject], op.cost);
        out.push(String(engine.nextFairSubject()));
        break;
      case "sweep":
        // Without sweeping, a budget of 0 still moves the engine's clock the way a sweep does.
        engine.sweep(now, sweeps ? op.budget : 0);
        break;
    }
  }
  return out;
}
