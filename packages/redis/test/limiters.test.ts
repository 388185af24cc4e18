// The Redis limiters decide as @tideward/limiters' in-process ones do, call for call, on random
// traffic at both clock scales (near 0 and near Date.now(), fractional), steps back included.
import fc from "fast-check";
import { expect, it } from "vitest";
import { Bucket, Gcra, Period, Sliding } from "@tideward/limiters";
import { RedisBucket, RedisGcra, RedisPeriod, RedisSliding } from "@tideward/redis";
import { useRedis, withRedis, patient, simulated } from "./server";

const ORIGINS = [0, 1_700_000_000_000.25];
// A walk of clock readings: mostly forward by fractions of a period, sometimes back a little.
const steps = fc.array(
  fc.tuple(fc.double({ min: -30, max: 400, noNaN: true }), fc.nat(9), fc.integer({ min: 0, max: 4 })),
  { minLength: 5, maxLength: 40 },
);
const runs = { numRuns: 30 };

withRedis("Redis limiters against the in-process ones", () => {
  const redis = useRedis();
  let n = 0;

  for (const origin of ORIGINS) {
    it(`Bucket: take, peek, next, tokens and rateLimit agree, steps back included (origin ${origin})`, async () => {
      const client = await redis.ioredis();
      await fc.assert(
        fc.asyncProperty(
          fc.double({ min: 0.5, max: 200, noNaN: true }),
          fc.double({ min: 1, max: 20, noNaN: true }),
          steps,
          async (rate, burst, walk) => {
            const id = `b${n++}`;
            const remote = new RedisBucket(client, "p", rate, { ...simulated, burst });
            // A Redis bucket with no key is full and has no reading of its own: an in-process one
            // made long before the walk (full by its first reading, never clamping the walk's).
            const local = new Bucket(rate, { burst, now: origin - 1e6 });
            let now = origin;
            for (const [dt, op, cost] of walk) {
              const c = cost === 4 ? 0.5 : cost;
              if (op < 5) expect(await remote.take(id, now, c)).toBe(local.take(now, c));
              else if (op === 5) expect(await remote.peek(id, now, c)).toBe(local.peek(now, c));
              else if (op === 6) expect(await remote.next(id, now, c)).toBe(local.next(now, c));
              else if (op === 7) expect(await remote.tokens(id, now)).toBe(local.tokens(now));
              else expect(await remote.rateLimit(id, now)).toEqual(local.rateLimit(now));
              now += dt;
            }
          },
        ),
        runs,
      );
    });

    it(`Gcra: take, peek, next, remaining and rateLimit agree (origin ${origin})`, async () => {
      const client = await redis.ioredis();
      await fc.assert(
        fc.asyncProperty(
          fc.double({ min: 0.5, max: 200, noNaN: true }),
          fc.double({ min: 1, max: 20, noNaN: true }),
          steps,
          async (rate, burst, walk) => {
            const id = `g${n++}`;
            const remote = new RedisGcra(client, "p", rate, { ...simulated, burst });
            const local = new Gcra(rate, { burst });
            let now = origin;
            for (const [dt, op, cost] of walk) {
              now += dt; // a step back is read as the earlier instant it claims, by both
              const c = cost === 4 ? 0.5 : cost;
              if (op < 5) expect(await remote.take(id, now, c)).toBe(local.take(now, c));
              else if (op === 5) expect(await remote.peek(id, now, c)).toBe(local.peek(now, c));
              else if (op === 6) expect(await remote.next(id, now, c)).toBe(local.next(now, c));
              else if (op === 7) expect(await remote.remaining(id, now)).toBe(local.remaining(now));
              else expect(await remote.rateLimit(id, now)).toEqual(local.rateLimit(now));
            }
          },
        ),
        runs,
      );
    });

    it(`Period: take (under / hit / over), peek, left, next and rateLimit agree, aligned or not (origin ${origin})`, async () => {
      const client = await redis.ioredis();
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1, max: 6 }),
          fc.double({ min: 50, max: 2_000, noNaN: true }),
          fc.boolean(),
          steps,
          async (quota, period, align, walk) => {
            const id = `p${n++}`;
            const remote = new RedisPeriod(client, "p", quota, period, { ...simulated, align });
            const local = new Period(quota, period, { align });
            let now = origin;
            for (const [dt, op] of walk) {
              now += dt;
              if (op < 5) expect(await remote.take(id, now)).toBe(local.take(now));
              else if (op === 5) expect(await remote.peek(id, now)).toBe(local.peek(now));
              else if (op === 6) expect(await remote.left(id, now)).toBe(local.left(now));
              else if (op === 7) expect(await remote.next(id, now)).toBe(local.next(now));
              else expect(await remote.rateLimit(id, now)).toEqual(local.rateLimit(now));
            }
          },
        ),
        runs,
      );
    });

    it(`Sliding (exact): take, peek, left, next and rateLimit agree (origin ${origin})`, async () => {
      const client = await redis.ioredis();
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1, max: 6 }),
          fc.double({ min: 50, max: 2_000, noNaN: true }),
          steps,
          async (quota, window, walk) => {
            const id = `s${n++}`;
            const remote = new RedisSliding(client, "p", quota, window, simulated);
            const local = new Sliding(quota, window);
            let now = origin;
            for (const [dt, op] of walk) {
              now += dt;
              if (op < 5) expect(await remote.take(id, now)).toBe(local.take(now));
              else if (op === 5) expect(await remote.peek(id, now)).toBe(local.peek(now));
              else if (op === 6) expect(await remote.left(id, now)).toBe(local.left(now));
              else if (op === 7) expect(await remote.next(id, now)).toBe(local.next(now));
              else expect(await remote.rateLimit(id, now)).toEqual(local.rateLimit(now));
            }
          },
        ),
        runs,
      );
    });
  }

  for (const origin of ORIGINS) {
    it(`invariants on their own: a bucket never admits past burst + rate · elapsed, a sliding window never holds more than its quota (origin ${origin})`, async () => {
      const client = await redis.ioredis();
      await fc.assert(
        fc.asyncProperty(
          fc.double({ min: 1, max: 100, noNaN: true }),
          fc.integer({ min: 1, max: 5 }),
          fc.array(fc.double({ min: 0, max: 80, noNaN: true }), { minLength: 10, maxLength: 60 }),
          async (rate, quota, gaps) => {
            const bucket = new RedisBucket(client, "inv", rate, { ...simulated, burst: quota });
            const window = new RedisSliding(client, "inv", quota, 200, simulated);
            const id = `inv${n++}`;
            let now = origin;
            const taken: number[] = [];
            const stamps: number[] = [];
            for (const gap of gaps) {
              now += gap;
              if (await bucket.take(id, now)) taken.push(now);
              if (await window.take(id, now)) stamps.push(now);
            }
            for (let a = 0; a < taken.length; a++) {
              for (let b = a; b < taken.length; b++) {
                const elapsed = taken[b] - taken[a];
                expect(b - a + 1).toBeLessThanOrEqual(quota + (rate * elapsed) / 1_000 + quota * 1e-9 + 1e-9);
              }
            }
            for (let a = 0; a < stamps.length; a++) {
              const inside = stamps.filter((x) => x >= stamps[a] && x < stamps[a] + 200).length;
              expect(inside).toBeLessThanOrEqual(quota);
            }
          },
        ),
        runs,
      );
    });
  }

  it("a late reading never moves a bucket back in time: it stands still at the stored reading", async () => {
    const client = await redis.ioredis();
    for (const origin of ORIGINS) {
      const remote = new RedisBucket(client, "late", 10, { ...patient, burst: 2 });
      const id = `late${n++}`;
      expect([await remote.take(id, origin + 1_000), await remote.take(id, origin + 1_000)]).toEqual([true, true]);
      // A writer 5 s behind: were it believed, the bucket would have refilled from 5 s earlier.
      expect(await remote.take(id, origin - 4_000)).toBe(false);
      expect(await remote.next(id, origin - 4_000)).toBe(5_100);
      expect(await remote.take(id, origin + 1_100)).toBe(true);
    }
  });

  it("a cost above the burst, Infinity included, is refused and never satisfiable, as in process", async () => {
    const client = await redis.ioredis();
    for (const origin of ORIGINS) {
      const bucket = new RedisBucket(client, "inf", 10, { ...patient, burst: 3 });
      const flow = new RedisGcra(client, "inf", 10, { ...patient, burst: 3 });
      const id = `inf${n++}`;
      const local = new Bucket(10, { burst: 3, now: origin });
      const localFlow = new Gcra(10, { burst: 3 });
      for (const c of [Infinity, 4, 3, 0]) {
        expect([
          await bucket.take(id, origin, c),
          await bucket.peek(id, origin, c),
          await bucket.next(id, origin, c),
        ]).toEqual([local.take(origin, c), local.peek(origin, c), local.next(origin, c)]);
        expect([
          await flow.take(id, origin, c),
          await flow.peek(id, origin, c),
          await flow.next(id, origin, c),
        ]).toEqual([localFlow.take(origin, c), localFlow.peek(origin, c), localFlow.next(origin, c)]);
      }
      expect(await bucket.next(id, origin, Infinity)).toBe(Infinity);
      expect(await bucket.tokens(id, origin)).toBe(0);
    }
  });

  it("node-redis drives the same limiters", async () => {
    const client = await redis.nodeRedis();
    const remote = new RedisBucket(client, "nr", 10, { ...patient, burst: 3 });
    const got = [];
    for (let i = 0; i < 4; i++) got.push(await remote.take("alice", 1_000));
    expect(got).toEqual([true, true, true, false]);
    expect(await remote.next("alice", 1_000)).toBe(100);
    const window = new RedisSliding(client, "nr", 2, 1_000, patient);
    expect([
      await window.take("a", 0),
      await window.take("a", 10),
      await window.take("a", 500),
      await window.next("a", 500),
    ]).toEqual([true, true, false, 500]);
  });
});
