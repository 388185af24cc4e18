// A reservation's record on Redis, by the form its reserve is sent in. Under an id the engine made,
// on the caller's clock, with a time to live and margin of whole ms and no window among its
// charges, the record is its head alone (status, expiry, no digest: 25 bytes), the process keeping
// the charges and sending their costs to settle; otherwise the head and two doubles a charge.
// Either way Redis keeps it its time to live, the margin and 1 ms, and settle answers as in process.
import { expect, it } from "vitest";
import { QuotaEngine, QuotaKey, limitSpec } from "@tideward/quota-engine";
import type { QuotaCharge } from "@tideward/quota-engine";
import { answer } from "@tideward/quota-engine/conformance";
import { RedisQuotaEngine } from "@tideward/redis";
import { came } from "./crosscheck";
import { patient, useRedis, withRedis } from "./server";

const HEAD = 25;
const alice = new QuotaKey("acme", "alice", "api");
const tenant = new QuotaKey("acme", "*", "api");
const specs = [
  limitSpec({ name: "user", capacity: 50, refill: 5, window: 1_000 }),
  limitSpec({ name: "tokens", capacity: 5_000, refill: 100, window: 1_000 }),
  limitSpec({ name: "flow", capacity: 40, refill: 10, window: 1_000 }),
  limitSpec({ name: "hour", capacity: 4_000, refill: 4_000, window: 3_600_000 }),
];
const set = (window: boolean): QuotaCharge[] => [
  { key: alice, limit: "user", cost: 1 },
  { key: tenant, limit: "tokens", cost: 800 },
  { key: alice, limit: "flow", cost: 3, kind: "gcra" },
  ...(window ? [{ key: tenant, limit: "hour", cost: 800, kind: "window" as const }] : []),
];

withRedis("a reservation's record", () => {
  const redis = useRedis();
  let n = 0;

  for (const origin of [0, 1_722_222_222_000.5]) {
    it(`is its head alone only under an engine's id, a whole time to live and no window; kept its time to live, the margin and 1 ms (origin ${origin})`, async () => {
      const direct = await redis.raw();
      const prefix = `rr${n++}:`;
      const remote = new RedisQuotaEngine(await redis.ioredis(), { ...patient, prefix, expiryMargin: 1_000 });
      const local = new QuotaEngine();
      for (const spec of specs) {
        await remote.addLimit(spec);
        local.addLimit(spec);
      }
      const cases = [
        { window: false, options: { ttl: 60_000 }, bytes: HEAD, px: 61_001 },
        { window: true, options: { ttl: 60_000 }, bytes: HEAD + 16 * 4, px: 61_001 },
        { window: false, options: { ttl: 60_000.5 }, bytes: HEAD + 16 * 3, px: 61_001 },
        { window: false, options: { ttl: 60_000, id: "mine" }, bytes: HEAD + 16 * 3, px: 61_001 },
      ];
      let now = origin;
      for (const { window, options, bytes, px } of cases) {
        const got = await remote.reserve(set(window), now, options);
        const want = local.reserve(set(window), now, options);
        expect([got.code, got.expiresAfter, got.decisions.map(answer)]).toEqual([
          want.code,
          want.expiresAfter,
          want.decisions.map(answer),
        ]);
        const record = `${prefix}{acme}v${got.id}`;
        expect((await direct.getBuffer(record))?.length).toBe(bytes);
        const pttl = await direct.pttl(record);
        expect(pttl).toBeLessThanOrEqual(px);
        expect(pttl).toBeGreaterThan(px - 1_000);
        // A refund of some charges, a top-up of another: as in process, from either layout.
        now += 250;
        const actual: Record<string, number> = { user: 0, tokens: 300, flow: 5 };
        if (window) actual.hour = 100;
        expect(came(await remote.settle(got.id, actual, now), got.id)).toEqual(
          came(local.settle(want.id, actual, now), want.id),
        );
        expect((await direct.getBuffer(record))?.subarray(0, 1).toString()).toBe("s");
        now += 250;
      }
      // What the settles left, read by a charge set of every limit.
      const after = await remote.checkAtomic(set(true), now);
      expect(after.decisions.map(answer)).toEqual(local.checkAtomic(set(true), now).decisions.map(answer));
    });
  }

  it("of 6 and of 20 charges, under the caller's id, keeps every charge and settles each as in process", async () => {
    const prefix = `rr${n++}:`;
    const remote = new RedisQuotaEngine(await redis.ioredis(), { ...patient, prefix });
    const local = new QuotaEngine();
    for (const spec of specs) {
      await remote.addLimit(spec);
      local.addLimit(spec);
    }
    const direct = await redis.raw();
    let now = 1_722_222_222_000.5;
    for (const size of [6, 20]) {
      const charges: QuotaCharge[] = Array.from({ length: size }, (_, i) => ({
        key: new QuotaKey("acme", `u${i % 7}`, "api"),
        limit: i % 2 === 0 ? "user" : "tokens",
        cost: 1 + (i % 5),
      }));
      const id = `big${size}`;
      const got = await remote.reserve(charges, now, { id });
      const want = local.reserve(charges, now, { id });
      expect([got.code, got.decisions.map(answer)]).toEqual([want.code, want.decisions.map(answer)]);
      expect((await direct.getBuffer(`${prefix}{acme}v${id}`))?.length).toBe(HEAD + 16 * size);
      now += 100;
      const actual = { user: 0, tokens: 2 };
      expect(came(await remote.settle(id, actual, now), id)).toEqual(came(local.settle(id, actual, now), id));
      const after = await remote.checkAtomic(charges, now);
      expect(after.decisions.map(answer)).toEqual(local.checkAtomic(charges, now).decisions.map(answer));
    }
  });
});
