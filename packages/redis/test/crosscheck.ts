// What the crosschecks of the Redis engine against the in-process one share (engine-, reserve-
// and runtime-crosscheck): the limits they draw, the charges their traffic makes, and how a
// single charge, a set and a settle are answered alike.
import fc from "fast-check";
import { expect } from "vitest";
import { limitSpec } from "@tideward/quota-engine";
import type {
  AtomicReport,
  ChargeKind,
  Decision,
  LimitFields,
  QuotaCharge,
  QuotaEngine,
  QuotaKey,
  SettleResult,
} from "@tideward/quota-engine";
import { answer } from "@tideward/quota-engine/conformance";
import type { RedisQuotaEngine } from "@tideward/redis";

/** The three kinds a drawn charge's `kind` indexes. */
export const KINDS: readonly ChargeKind[] = ["bucket", "window", "gcra"];

/** A limit's fields, of capacity up to `capacity`. */
export const limitFields = (capacity: number) =>
  fc.record({
    capacity: fc.integer({ min: 1, max: capacity }),
    refill: fc.integer({ min: 1, max: 30 }),
    // Any window (a bucket of two numbers, mostly), or one whose ms a token can be on the 2^-7 ms
    // grid (a bucket of one number for most refills).
    window: fc.oneof(fc.double({ min: 100, max: 3_000, noNaN: true }), fc.constantFrom(500, 1_000, 1_600, 2_000)),
    burst: fc.integer({ min: 1, max: 8 }),
    align: fc.boolean(),
  });

/** A drawn charge: indexes into the keys, the limits `l0`, `l1`, … and {@link KINDS}. */
export interface Drawn {
  readonly key: number;
  readonly limit: number;
  readonly cost: number;
  readonly kind?: number;
}

/** The charges a drawn set makes on `keys`. */
export function chargesOf(set: readonly Drawn[], keys: readonly QuotaKey[]): QuotaCharge[] {
  return set.map((c) => ({
    key: keys[c.key],
    limit: `l${c.limit}`,
    cost: c.cost,
    ...(c.kind === undefined ? {} : { kind: KINDS[c.kind] }),
  }));
}

/** Adds limits `l0`, `l1`, … with these fields to the in-process engine and each Redis one. */
export async function addBoth(
  local: QuotaEngine,
  remotes: readonly RedisQuotaEngine[],
  limits: readonly Omit<LimitFields, "name">[],
): Promise<void> {
  for (const [i, s] of limits.entries()) {
    const spec = limitSpec({ ...s, name: `l${i}` });
    expect(local.addLimit(spec).ok).toBe(true);
    for (const remote of remotes) expect((await remote.addLimit(spec)).ok).toBe(true);
  }
}

/** Charges `c` alone at `now` by its kind (a bucket's when it has none). */
export function checkOne(engine: QuotaEngine, c: QuotaCharge, now: number): Decision;
export function checkOne(
  engine: RedisQuotaEngine,
  c: QuotaCharge,
  now: number,
): ReturnType<RedisQuotaEngine["checkTokenBucket"]>;
export function checkOne(engine: QuotaEngine | RedisQuotaEngine, c: QuotaCharge, now: number) {
  return c.kind === "window"
    ? engine.checkWindow(c.key, c.limit, now, c.cost)
    : c.kind === "gcra"
      ? engine.checkGcra(c.key, c.limit, now, c.cost)
      : engine.checkTokenBucket(c.key, c.limit, now, c.cost);
}

/** The set's answer on Redis is the in-process one, every figure of every decision included. */
export function sameSet(got: AtomicReport, want: AtomicReport): void {
  expect([got.allowed, got.committed, got.failedIndex, got.retryAfter]).toEqual([
    want.allowed,
    want.committed,
    want.failedIndex,
    want.retryAfter,
  ]);
  expect(got.decisions.map(answer)).toEqual(want.decisions.map(answer));
}

/**
 * What a settle came to, without its keys (nor `id` where its reason names it, for ids each engine
 * made): the part both engines must agree on.
 */
export const came = (r: SettleResult, id?: string): unknown =>
  r.ok
    ? r.charges.map(({ key: _key, ...rest }) => rest)
    : [r.code, id === undefined ? r.reason : r.reason.split(id).join("<id>")];
