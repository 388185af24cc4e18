// A replaced limit on Redis, case by case: its keys' state under names of the new version, re-based
// once however many instances replace it; a lease and a settle that follow the limit; what an
// earlier version's name holds refused by name when it is not tideward's, and not read once any
// state there must have expired.
import { expect, it } from "vitest";
import { QuotaEngine, QuotaKey, limitSpec } from "@tideward/quota-engine";
import { RedisQuotaEngine } from "@tideward/redis";
import { patient, thrown, useRedis, withRedis } from "./server";

const alice = new QuotaKey("acme", "alice", "api");
// A bucket of one number (a token every 100 ms): its re-base moves the instant it is full again
// by the capacity's change, which applied twice would be wrong.
const ten = limitSpec({ name: "r", capacity: 10, refill: 10, window: 1_000 });
const twenty = limitSpec({ name: "r", capacity: 20, refill: 20, window: 2_000 });

withRedis("limits replaced on Redis", () => {
  const redis = useRedis();
  let n = 0;
  const fleet = async (size: number, prefix = `vv${n++}:`): Promise<RedisQuotaEngine[]> => {
    const client = await redis.ioredis();
    return Array.from({ length: size }, () => new RedisQuotaEngine(client, { ...patient, prefix }));
  };

  for (const origin of [0, 1_700_000_000_000.5]) {
    it(`three instances replace a limit: each key re-based once, as in process (origin ${origin})`, async () => {
      const engines = await fleet(3);
      const local = new QuotaEngine();
      local.addLimit(ten);
      for (const e of engines) await e.addLimit(ten);
      expect((await engines[0].checkTokenBucket(alice, "r", origin, 6)).remaining).toBe(4);
      local.checkTokenBucket(alice, "r", origin, 6);
      local.replaceLimit(twenty, origin + 50);
      for (const e of engines) expect((await e.replaceLimit(twenty, origin + 50)).ok).toBe(true);
      // 4.5 tokens held at the replace, 15.5 short of 20 at 10 a second: each instance sees the one re-base.
      for (const [i, e] of engines.entries()) {
        const at = origin + 100 + i;
        const want = local.peekAtomic([{ key: alice, limit: "r", cost: 5 }], at);
        const got = await e.peekAtomic([{ key: alice, limit: "r", cost: 5 }], at);
        expect([got.allowed, got.retryAfter, got.decisions[0].remaining]).toEqual([
          want.allowed,
          want.retryAfter,
          want.decisions[0].remaining,
        ]);
      }
      // At origin + 100: 5 held (re-based once by each of the three, it would owe 15).
      expect((await engines[2].checkTokenBucket(alice, "r", origin + 100, 5)).remaining).toBe(0);
      expect((await engines[1].checkTokenBucket(alice, "r", origin + 100)).allowed).toBe(false);
      // The state now lives under the new version's name; the old one is as it was.
      expect(engines[0].redisKey(alice, "r")).toContain("F@1:1:r");
    });
  }

  it("a lease follows its limit: after a replace it takes from the state re-based, under the new name", async () => {
    const [e] = await fleet(1);
    await e.addLimit(limitSpec({ name: "r", capacity: 10, refill: 1, window: 3_600_000 }));
    const lease = e.lease(alice, "r", { slice: 8, refillAt: 0 });
    expect(await lease.fill(0)).toBe(8);
    // 2 left of 10, under a limit of 1: the lease finds 1.
    expect((await e.replaceLimit(limitSpec({ name: "r", capacity: 1, refill: 1, window: 3_600_000 }), 0)).ok).toBe(
      true,
    );
    while (lease.take(0));
    expect(await lease.fill(0)).toBe(1);
    expect((await e.checkTokenBucket(alice, "r", 0)).allowed).toBe(false);
  });

  it("a reservation made before a replace settles on the state re-based: its refund reaches the new version", async () => {
    const [e] = await fleet(1);
    const local = new QuotaEngine();
    const a = limitSpec({ name: "t", capacity: 100, refill: 100, window: 60_000 });
    const b = limitSpec({ name: "t", capacity: 50, refill: 100, window: 60_000 });
    await e.addLimit(a);
    local.addLimit(a);
    const charge = [{ key: alice, limit: "t", cost: 80 }];
    expect((await e.reserve(charge, 0, { id: "x" })).code).toBe("reserved");
    local.reserve(charge, 0, { id: "x" });
    expect((await e.replaceLimit(b, 10)).ok).toBe(true);
    local.replaceLimit(b, 10);
    const got = await e.settle("x", { t: 30 }, 20);
    const want = local.settle("x", { t: 30 }, 20);
    expect(got.ok && got.charges[0].refunded).toBe(50);
    expect(got.ok && got.charges[0].refunded).toBe(want.ok && want.charges[0].refunded);
    const [r, l] = [await e.checkTokenBucket(alice, "t", 20, 50), local.checkTokenBucket(alice, "t", 20, 50)];
    expect([r.allowed, r.remaining, r.retryAfter]).toEqual([l.allowed, l.remaining, l.retryAfter]);
  });

  it("what an earlier version's name holds is refused by name when not tideward's; once its state must have expired, it is not read", async () => {
    const [e] = await fleet(1, "vf:");
    const raw = await redis.raw();
    await e.addLimit(ten);
    const old = e.redisKey(alice, "r");
    await raw.set(old, "not a state");
    // 10 tokens at 10 a second: any state must be gone 2 s (and twice the margin) after the replace.
    expect((await e.replaceLimit(twenty, 0)).ok).toBe(true);
    await expect(e.checkTokenBucket(alice, "r", 0)).rejects.toThrow(
      `tideward: the key ${old} holds 11 bytes ("not a state"), not a token bucket of one number`,
    );
    const later = 2_000 + 2 * e.policy.expiryMargin + 2;
    expect((await e.checkTokenBucket(alice, "r", later, 20)).allowed).toBe(true);
    expect(await raw.get(old)).toBe("not a state");
  });

  it("bad input to a runtime change is refused as in process, by name, and nothing changes", async () => {
    const [e] = await fleet(1);
    const local = new QuotaEngine();
    for (const s of [e, local]) await s.addLimit(ten);
    await e.setOverride(alice, "r", { capacity: 3 }, 0);
    local.setOverride(alice, "r", { capacity: 3 }, 0);
    const fake = { id: alice.id, scope: "acme", subject: "alice", resource: "api" } as unknown as QuotaKey;
    const calls: ((s: QuotaEngine | RedisQuotaEngine) => unknown)[] = [
      (s) => s.replaceLimit(twenty, NaN),
      (s) => s.replaceLimit(twenty, Infinity),
      (s) => s.removeLimit(5 as unknown as string),
      (s) => s.setOverride(fake, "r", { capacity: 5 }, 0),
      (s) => s.setOverride(alice, 7 as unknown as string, { capacity: 5 }, 0),
      (s) => s.setOverride(alice, "r", { capacity: 5 }, -Infinity),
      (s) => s.removeOverride(alice, "r", NaN),
      (s) => s.removeOverride(fake, "r", 0),
    ];
    for (const call of calls) {
      const want = await thrown(() => call(local));
      expect(want).not.toBe("no error");
      expect(await thrown(() => call(e))).toEqual(want);
    }
    // The limit and the override stand as they were.
    expect(e.limits()).toEqual(local.limits());
    expect(e.override(alice, "r")).toEqual(local.override(alice, "r"));
    expect((await e.checkTokenBucket(alice, "r", 0, 4)).reason).toBe("too_large");
  });

  it("an override moves its key's state once, however many instances set it, and back when taken away", async () => {
    const engines = await fleet(2);
    const raw = await redis.raw();
    for (const e of engines) await e.addLimit(ten);
    await engines[0].checkTokenBucket(alice, "r", 0, 7);
    const plain = engines[0].redisKey(alice, "r");
    for (const e of engines) expect((await e.setOverride(alice, "r", { capacity: 5 }, 0)).ok).toBe(true);
    const own = engines[1].redisKey(alice, "r");
    expect(own).not.toBe(plain);
    expect(await raw.exists(plain)).toBe(0);
    // 3 held, of 5 now.
    expect((await engines[1].checkTokenBucket(alice, "r", 0, 3)).remaining).toBe(0);
    for (const e of engines) expect((await e.removeOverride(alice, "r", 0)).ok).toBe(true);
    expect(await raw.exists(own)).toBe(0);
    expect((await engines[0].checkTokenBucket(alice, "r", 0)).allowed).toBe(false);
    expect((await engines[0].checkTokenBucket(alice, "r", 100)).remaining).toBe(0);
  });
});
