// A ScriptClient that throws, answers garbage, answers NOSCRIPT to EVAL too, or never answers, and
// a policy clock or draw that throws: every call settles with its documented outcome (the outage
// mode's answer when nothing could be sent, a ScriptError when a reply was altered), nothing is
// left pending, and the process never sees an uncaught error.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { QuotaKey, charge, limitSpec } from "@tideward/quota-engine";
import { RedisBucket, RedisQuotaEngine, RedisSliding, ScriptError } from "@tideward/redis";
import type { ScriptClient } from "@tideward/redis";
import { patient, useRedis, withRedis } from "./server";

const key = new QuotaKey("acme", "alice", "api");
const spec = limitSpec({ name: "r", capacity: 5, refill: 5, window: 1_000 });

// Errors that escape to the process: none may.
const escaped: unknown[] = [];
const record = (e: unknown): void => void escaped.push(e);
beforeEach(() => {
  escaped.length = 0;
  process.on("unhandledRejection", record);
  process.on("uncaughtException", record);
});
afterEach(() => {
  process.off("unhandledRejection", record);
  process.off("uncaughtException", record);
  expect(escaped).toEqual([]);
});

function client(
  evalsha: () => unknown,
  evalFn: () => unknown = evalsha,
  ready: () => boolean = () => true,
): ScriptClient {
  return { evalsha: evalsha as ScriptClient["evalsha"], eval: evalFn as ScriptClient["eval"], ready };
}

async function engineOf(c: ScriptClient, outage: "fallback" | "closed" = "fallback"): Promise<RedisQuotaEngine> {
  const e = new RedisQuotaEngine(c, { ...patient, timeout: 100, outage });
  await e.addLimit(spec);
  return e;
}

describe("clients that cannot send", () => {
  for (const [name, c] of [
    [
      "evalsha throws",
      client(() => {
        throw new Error("socket gone");
      }),
    ],
    ["evalsha answers undefined, not a promise", client(() => undefined)],
    [
      "ready() throws",
      client(
        () => Promise.resolve(Buffer.alloc(17)),
        undefined,
        () => {
          throw new Error("ready?");
        },
      ),
    ],
  ] as const) {
    it(`${name}: the outage mode answers at once, for single checks, sets, batches and limiters`, async () => {
      for (const now of [0.5, Date.now() + 0.5]) {
        const e = await engineOf(c, "closed");
        const d = await e.checkTokenBucket(key, "r", now);
        expect([d.allowed, d.path, d.retryAfter]).toEqual([false, "closed", 200]);
        expect((await e.checkAtomic([charge(key, "r")], now)).path).toBe("closed");
        expect((await e.checkMany("r", [{ key, now }])).decisions[0].path).toBe("closed");
        expect(await new RedisBucket(c, "b", 5, { outage: "open" }).decide("a", now)).toEqual({
          answer: true,
          path: "open",
        });
      }
    });
  }

  it("NOSCRIPT to EVAL too: asked once by EVAL, then the outage mode (it once looped without yielding, and hung the process)", async () => {
    let evals = 0;
    const c = client(
      () => Promise.reject(new Error("NOSCRIPT No matching script")),
      () => {
        evals++;
        return Promise.reject(new Error("NOSCRIPT No matching script"));
      },
    );
    const e = await engineOf(c);
    const d = await e.checkTokenBucket(key, "r", 0);
    expect([d.path, d.allowed, evals]).toEqual(["fallback", true, 1]);
  });
});

describe("clients that answer garbage", () => {
  for (const [name, reply] of [
    ["an empty reply", Buffer.alloc(0)],
    ["one byte", Buffer.from("1")],
    ["a reply cut short", Buffer.alloc(12)],
  ] as const) {
    it(`${name}: a ScriptError naming the script, never a read outside the buffer`, async () => {
      const c = client(() => Promise.resolve(reply));
      const e = await engineOf(c);
      await expect(e.checkTokenBucket(key, "r", 0)).rejects.toThrow(ScriptError);
      await expect(e.checkAtomic([charge(key, "r"), charge(key, "r")], 0)).rejects.toThrow("script quota failed");
      await expect(e.checkMany("r", [{ key, now: 0 }])).rejects.toThrow(ScriptError);
      await expect(e.lease(key, "r", { slice: 2 }).release(0)).resolves.toBe(0); // nothing held, nothing sent
      await expect(new RedisBucket(c, "b", 5).next("a", 0)).rejects.toThrow("script bucket failed");
      await expect(new RedisSliding(c, "s", 5, 1_000).left("a", 0)).rejects.toThrow("script sliding failed");
    });
  }

  it("text instead of bytes: a TypeError saying the client must answer bytes", async () => {
    const e = await engineOf(client(() => Promise.resolve("1")));
    await expect(e.checkTokenBucket(key, "r", 0)).rejects.toThrow("must answer a script's bulk-string reply as bytes");
  });

  it("a rejection that is not an Error, or whose message cannot be read: indeterminate", async () => {
    const unreadable = {
      get message(): string {
        throw new Error("no");
      },
    };
    for (const reason of [undefined, unreadable]) {
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the point: a client that rejects with garbage
      const e = await engineOf(client(() => Promise.reject(reason)));
      expect((await e.checkTokenBucket(key, "r", 0)).path).toBe("indeterminate");
    }
  });
});

withRedis("a policy clock or draw that throws", () => {
  const redis = useRedis();

  it("the breaker's clock stands still at its last good reading, a throwing draw counts as 0: calls still settle", async () => {
    let reads = 0;
    const clocks = [
      () => {
        if (++reads > 1) throw new Error("clock gone");
        return 0;
      },
      () => NaN,
      () => "soon" as never,
    ];
    for (const monotonic of clocks) {
      const e = new RedisQuotaEngine(await redis.ioredis(), {
        ...patient,
        prefix: `clk${reads}:`,
        monotonic,
        random: () => {
          throw new Error("dice gone");
        },
      });
      await e.addLimit(spec);
      for (const now of [0.5, Date.now() + 0.5]) {
        expect((await e.checkTokenBucket(key, "r", now)).path).toBe("store");
        expect((await e.checkAtomic([charge(key, "r")], now)).path).toBe("store");
      }
    }
  });
});
