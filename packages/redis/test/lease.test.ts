import { expect, it } from "vitest";
import { QuotaKey, limitSpec } from "@tideward/quota-engine";
import { RedisQuotaEngine } from "@tideward/redis";
import { useRedis, withRedis, patient } from "./server";

const key = new QuotaKey("acme", "*", "api");

withRedis("leases", () => {
  const redis = useRedis();

  it("spends a slice locally and gives back what is unused; the bucket never mints", async () => {
    const engine = new RedisQuotaEngine(await redis.ioredis(), { ...patient, prefix: "lease1:" });
    await engine.addLimit(limitSpec({ name: "r", capacity: 50, refill: 1, window: 3_600_000 }));
    const lease = engine.lease(key, "r", { slice: 20, refillAt: 0 });
    expect(await lease.fill(0)).toBe(20);
    let spent = 0;
    while (lease.take(0)) spent++;
    expect(spent).toBe(20);
    expect(await lease.fill(0)).toBe(20);
    for (let i = 0; i < 5; i++) lease.take(0);
    expect((await engine.checkTokenBucket(key, "r", 0, 10)).remaining).toBe(0); // 50 − 40 leased − 10
    expect(await lease.release(0)).toBe(15);
    expect((await engine.checkTokenBucket(key, "r", 0, 15)).allowed).toBe(true);
    expect(lease.totals).toEqual({ granted: 40, returned: 15 });
    expect(await engine.lease(key, "r", { slice: 5 }).fill(0)).toBe(0); // dry: nothing granted
  });

  it("a fleet of leases over-admits at most slice × instances over any stretch, and nothing from a standing start", async () => {
    const engine = new RedisQuotaEngine(await redis.ioredis(), { ...patient, prefix: "lease2:" });
    const capacity = 50;
    const rate = 1_000; // a second
    await engine.addLimit(limitSpec({ name: "r", capacity, refill: rate, window: 1_000 }));
    const instances = 5;
    const slice = 20;
    const leases = Array.from({ length: instances }, () => engine.lease(key, "r", { slice }));
    const steps = 600; // ms
    const admitted = new Array<number>(steps + 1).fill(0);
    for (let t = 0; t <= steps; t++) {
      // Quiet spells (the leases fill up and the bucket refills behind them), then bursts well
      // above the rate: the worst case for leases, held tokens and a full bucket spent at once.
      for (const [i, lease] of leases.entries()) {
        const demand = t % 150 < 100 ? 0 : t % 150 < 105 ? 40 : 1 + ((t + i) % 3);
        for (let k = 0; k < demand; k++) if (lease.take(t)) admitted[t]++;
      }
      await Promise.all(leases.map((l) => l.fill(t)));
    }
    const prefix = [0];
    for (const a of admitted) prefix.push((prefix.at(-1) as number) + a);
    const total = prefix.at(-1) as number;
    expect(total).toBeLessThanOrEqual(capacity + (rate * steps) / 1_000);
    let worst = -Infinity;
    for (let a = 0; a <= steps; a++) {
      for (let b = a; b <= steps; b++) {
        const over = prefix[b + 1] - prefix[a] - (capacity + (rate * (b - a)) / 1_000);
        if (over > worst) worst = over;
      }
    }
    expect(worst).toBeLessThanOrEqual(slice * instances);
    expect(worst).toBeGreaterThan(slice * instances * 0.5); // the bound is approached, not merely respected
  });
});

withRedis("a lease refuses a bad cost or reading on every path", () => {
  const redis = useRedis();

  for (const origin of [0, 1_722_222_222_000.5]) {
    it(`costs that are not whole numbers of at least 1 spend nothing and mint nothing, held or not (origin ${origin})`, async () => {
      const engine = new RedisQuotaEngine(await redis.ioredis(), { ...patient, prefix: `lease-cost${origin}:` });
      await engine.addLimit(limitSpec({ name: "r", capacity: 10, refill: 1, window: 3_600_000 }));
      const lease = engine.lease(key, "r", { slice: 10, refillAt: 0 });
      const bad: [unknown, ErrorConstructor, string][] = [
        [-1_000, RangeError, "Lease.take cost must be a whole number of at least 1, got -1000"],
        [0, RangeError, "Lease.take cost must be a whole number of at least 1, got 0"],
        [1.5, RangeError, "Lease.take cost must be a whole number of at least 1, got 1.5"],
        [NaN, RangeError, "Lease.take cost must be a whole number of at least 1, got NaN"],
        ["1", TypeError, 'Lease.take cost must be a number, got string "1"'],
      ];
      const refusals = (): void => {
        for (const [cost, type, message] of bad) {
          const held = lease.held;
          expect(() => lease.take(origin, cost as number)).toThrow(type);
          expect(() => lease.take(origin, cost as number)).toThrow(message);
          expect(lease.held).toBe(held);
        }
      };
      refusals(); // an empty lease: the refusal path
      expect(await lease.fill(origin)).toBe(10);
      refusals(); // a full one: the paying path, where a negative cost once added to the slice
      let admitted = 0;
      while (lease.take(origin + 1)) admitted++;
      expect(admitted).toBe(10); // what Redis granted, and no more
      expect(() => lease.take(NaN)).toThrow("Lease.take now must be a finite number of milliseconds, got NaN");
      await expect(lease.fill(1e20)).rejects.toThrow("Lease.fill now must be within ±35184372088832 ms");
      await expect(lease.release(-Infinity)).rejects.toThrow(
        "Lease.release now must be a finite number of milliseconds, got -Infinity",
      );
      expect(lease.totals).toEqual({ granted: 10, returned: 0 });
    });
  }
});
