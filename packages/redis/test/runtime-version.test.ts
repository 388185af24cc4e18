// A limit's version on Redis given by the configuration: an instance started after a replace,
// adding the new spec at the fleet's version, shares its keys' state with the instances that made
// the replace (one without it does not); a replace to an explicit version; a key the late instance
// reaches first starts fresh there, one an older instance reaches first is re-based once; bad
// versions refused by name with nothing changed — at clocks near 0 and near Date.now(); and
// docs/reference.md's example of it, run.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import fc from "fast-check";
import { expect, it } from "vitest";
import { QuotaKey, limitSpec } from "@tideward/quota-engine";
import type { LimitSpec } from "@tideward/quota-engine";
import { RedisQuotaEngine } from "@tideward/redis";
import type { ScriptClient } from "@tideward/redis";
import { isOptionError } from "@tideward/time";
import { simulated, thrown, useRedis, withRedis } from "./server";

const [alice, bob, carol] = ["alice", "bob", "carol"].map((s) => new QuotaKey("acme", s, "api"));
// A token an hour: within a test's milliseconds a bucket's level is what was charged.
const hour = 3_600_000;
const ten = limitSpec({ name: "r", capacity: 10, refill: 1, window: hour });
const twenty = limitSpec({ name: "r", capacity: 20, refill: 1, window: hour });
const ORIGINS = [0, 1_700_000_000_000.5];
const MAX = Number.MAX_SAFE_INTEGER;

const remaining = async (e: RedisQuotaEngine, key: QuotaKey, at: number, cost = 1): Promise<number | boolean> => {
  const d = await e.checkTokenBucket(key, "r", at, cost);
  return d.allowed ? d.remaining : false;
};

withRedis("a limit's version on Redis", () => {
  const redis = useRedis();
  let n = 0;
  const engines = (client: ScriptClient, size: number, prefix = `rv${n++}:`): RedisQuotaEngine[] =>
    Array.from({ length: size }, () => new RedisQuotaEngine(client, { ...simulated, prefix }));
  const clients: [string, () => Promise<ScriptClient>][] = [
    ["ioredis", () => redis.ioredis()],
    ["node-redis", () => redis.nodeRedis()],
  ];

  for (const [name, connect] of clients)
    for (const o of ORIGINS) {
      it(`an instance started after a replace shares the fleet's state at its version, one without it does not (${name}, origin ${o})`, async () => {
        const [a, b, c, d] = engines(await connect(), 4);
        for (const e of [a, b]) await e.addLimit(ten);
        expect(await remaining(a, alice, o, 6)).toBe(4);
        expect(await remaining(a, bob, o, 9)).toBe(1);
        expect(await remaining(a, carol, o, 9)).toBe(1);
        for (const e of [a, b]) expect((await e.replaceLimit(twenty, o + 50)).ok).toBe(true);
        // Started now, from the configuration as it is: c with the version the replace gave, d without.
        expect((await c.addLimit(twenty, { version: 1 })).ok).toBe(true);
        expect((await d.addLimit(twenty)).ok).toBe(true);
        expect(c.redisKey(alice, "r")).toBe(a.redisKey(alice, "r"));
        expect(d.redisKey(alice, "r")).not.toBe(a.redisKey(alice, "r"));
        // alice: b re-bases her 4 held; c's charges and the fleet's draw from that one bucket.
        expect(await remaining(b, alice, o + 100)).toBe(3);
        expect(await remaining(c, alice, o + 110)).toBe(2);
        expect(await remaining(a, alice, o + 120)).toBe(1);
        // d charges the old names, apart from the fleet: their state as it was before the replace, a
        // lack of 6 (a bucket of one number keeps the instant it is full again), not re-based: 14 of 20.
        expect(await remaining(d, alice, o + 130)).toBe(13);
        expect(await remaining(c, alice, o + 140)).toBe(0);
        expect(await remaining(c, alice, o + 141)).toBe(false);
        expect(await remaining(d, alice, o + 142)).toBe(12);
        // bob, reached first by c (no record of the version before): fresh there, and the fleet's from then on.
        expect(await remaining(c, bob, o + 150)).toBe(19);
        expect(await remaining(a, bob, o + 160)).toBe(18);
        // carol, reached first by a (which made the replace): re-based once, 1 held; c shares it.
        expect(await remaining(a, carol, o + 170)).toBe(0);
        expect(await remaining(c, carol, o + 180)).toBe(false);
      });

      it(`a replace to an explicit version: the fleet's names carry it, a late instance at it shares, at another not (${name}, origin ${o})`, async () => {
        const [a, b, c, e] = engines(await connect(), 4);
        for (const x of [a, b]) expect((await x.addLimit(ten, { version: 3 })).ok).toBe(true);
        expect(a.redisKey(alice, "r")).toContain("@3:");
        expect(await remaining(a, alice, o, 6)).toBe(4);
        for (const x of [a, b]) expect((await x.replaceLimit(twenty, o + 50, { version: 7 })).ok).toBe(true);
        expect(a.redisKey(alice, "r")).toContain("@7:");
        await c.addLimit(twenty, { version: 7 });
        await e.addLimit(twenty, { version: 4 });
        expect(await remaining(b, alice, o + 100)).toBe(3);
        expect(await remaining(c, alice, o + 110)).toBe(2);
        // At version 4 no instance keeps state: alice is fresh there.
        expect(await remaining(e, alice, o + 120)).toBe(19);
        // A version not above 7 is refused, naming it, and the limit stands as it was.
        for (const v of [7, 2, 0])
          expect(await thrown(() => a.replaceLimit(ten, o + 130, { version: v }))).toEqual([
            "RangeError",
            `RedisQuotaEngine.replaceLimit version must be above 7 (the version of "r" now) and at most 2^53 - 1, got ${v}`,
          ]);
        expect(a.limit("r")).toEqual(twenty);
        expect(a.redisKey(alice, "r")).toBe(c.redisKey(alice, "r"));
        expect(await remaining(a, alice, o + 140)).toBe(1);
        // Without a version, the one after 7: the state re-based onto it (1 held, of 10).
        expect((await a.replaceLimit(ten, o + 150)).ok).toBe(true);
        expect(a.redisKey(alice, "r")).toContain("@8:");
        expect(await remaining(a, alice, o + 160)).toBe(0);
      });
    }

  it("a limit removed is added again above the version it had: one at or below it is refused, nothing added", async () => {
    const [a] = engines(await redis.ioredis(), 1);
    await a.addLimit(ten, { version: 3 });
    expect(await remaining(a, alice, 0, 6)).toBe(4);
    expect((await a.removeLimit("r")).ok).toBe(true);
    for (const v of [3, 0])
      expect(await thrown(() => a.addLimit(ten, { version: v }))).toEqual([
        "RangeError",
        `RedisQuotaEngine.addLimit version must be above 3 (the version "r" had when removed) and at most 2^53 - 1, got ${v}`,
      ]);
    expect(a.limits()).toEqual([]);
    // Without a version, the one after 3, every key fresh.
    expect((await a.addLimit(ten)).ok).toBe(true);
    expect(a.redisKey(alice, "r")).toContain("@4:");
    expect(await remaining(a, alice, 1)).toBe(9);
    expect((await a.removeLimit("r")).ok).toBe(true);
    expect((await a.addLimit(ten, { version: 10 })).ok).toBe(true);
    expect(a.redisKey(alice, "r")).toContain("@10:");
    // A name that exists answers duplicate_limit, whatever the version.
    const again = await a.addLimit(ten, { version: 2 });
    expect(again.ok ? "ok" : again.code).toBe("duplicate_limit");
  });

  it("bad versions are refused by name and value, and nothing changes", async () => {
    const [a] = engines(await redis.ioredis(), 1);
    const bad: [unknown, string, string][] = [
      [Number.NaN, "RangeError", "must be a finite number, got NaN"],
      [Infinity, "RangeError", "must be a finite number, got Infinity"],
      [-1, "RangeError", "must be a whole number from 0 to 2^53 - 1, got -1"],
      [1.5, "RangeError", "must be a whole number from 0 to 2^53 - 1, got 1.5"],
      ["1", "TypeError", 'must be a number, got string "1"'],
      [null, "TypeError", "must be a number, got object null"],
      [2 ** 53, "RangeError", `must be a whole number from 0 to 2^53 - 1, got ${2 ** 53}`],
      [1e300, "RangeError", "must be a whole number from 0 to 2^53 - 1, got 1e+300"],
    ];
    for (const [v, kind, problem] of bad) {
      const options = { version: v } as unknown as { version: number };
      expect(await thrown(() => a.addLimit(ten, options))).toEqual([
        kind,
        `RedisQuotaEngine.addLimit version ${problem}`,
      ]);
      expect(a.limits()).toEqual([]);
    }
    expect(await thrown(() => a.addLimit(ten, { verison: 1 } as never))).toEqual([
      "TypeError",
      'RedisQuotaEngine.addLimit has no option "verison"; did you mean "version"?',
    ]);
    expect((await a.addLimit(ten)).ok).toBe(true);
    const name = a.redisKey(alice, "r");
    expect(await remaining(a, alice, 0, 6)).toBe(4);
    for (const [v, kind, problem] of bad) {
      const options = { version: v } as unknown as { version: number };
      expect(await thrown(() => a.replaceLimit(twenty, 10, options))).toEqual([
        kind,
        `RedisQuotaEngine.replaceLimit version ${problem}`,
      ]);
    }
    expect(await thrown(() => a.replaceLimit(twenty, 10, { versoin: 1 } as never))).toEqual([
      "TypeError",
      'RedisQuotaEngine.replaceLimit has no option "versoin"; did you mean "version"?',
    ]);
    // The path and the value are data on the error, as on every option error.
    let e: unknown;
    try {
      await a.replaceLimit(twenty, 10, { version: -2 });
    } catch (x) {
      e = x;
    }
    expect(isOptionError(e) && [e.path, e.value]).toEqual(["RedisQuotaEngine.replaceLimit.version", -2]);
    // A bad now is refused first, as in process; an invalid spec answers as before.
    expect(await thrown(() => a.replaceLimit(twenty, Number.NaN, { version: 1 }))).toEqual(
      await thrown(() => a.replaceLimit(twenty, Number.NaN)),
    );
    const invalid = await a.replaceLimit({ ...twenty, capacity: 0 }, 10, { version: 1 });
    expect(invalid.ok ? "ok" : invalid.code).toBe("invalid_limit");
    expect(a.limit("r")).toEqual(ten);
    expect(a.redisKey(alice, "r")).toBe(name);
    expect(await remaining(a, alice, 10, 4)).toBe(0);
  });

  it("a version at 2^53 - 1 names its keys; no version follows it", async () => {
    const [a] = engines(await redis.ioredis(), 1);
    expect((await a.addLimit(ten, { version: MAX })).ok).toBe(true);
    expect(a.redisKey(alice, "r")).toContain(`@${MAX}:`);
    expect(await remaining(a, alice, 0, 6)).toBe(4);
    expect(await thrown(() => a.replaceLimit(twenty, 10))).toEqual([
      "RangeError",
      `RedisQuotaEngine.replaceLimit version must be above ${MAX} (the version of "r" now) and at most 2^53 - 1, got undefined`,
    ]);
    expect(a.limit("r")).toEqual(ten);
    expect((await a.removeLimit("r")).ok).toBe(true);
    expect(await thrown(() => a.addLimit(ten))).toEqual([
      "RangeError",
      `RedisQuotaEngine.addLimit version must be above ${MAX} (the version "r" had when removed) and at most 2^53 - 1, got undefined`,
    ]);
    expect(a.limits()).toEqual([]);
  });

  // A change: a replace or a removal and an add, to a spec of `capacity`, at version `gap` above
  // the one before, or with none (then one above).
  const change = fc.record({
    readd: fc.boolean(),
    capacity: fc.integer({ min: 2, max: 30 }),
    gap: fc.option(fc.integer({ min: 1, max: 1_000 }), { nil: undefined }),
  });
  for (const o of ORIGINS)
    it(`after any history of changes, an instance added at the version the configuration says shares the state (origin ${o})`, async () => {
      const client = await redis.ioredis();
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 0, max: 2 ** 40 }),
          fc.array(change, { minLength: 1, maxLength: 6 }),
          fc.double({ min: 0, max: 1_000, noNaN: true }),
          async (first, changes, dt) => {
            const [a, late, other] = engines(client, 3);
            const spec = (capacity: number): LimitSpec => limitSpec({ name: "r", capacity, refill: 1, window: hour });
            // The configuration's version, kept apart from the engine's.
            let version = first;
            let last = spec(5);
            await a.addLimit(last, { version });
            let now = o;
            for (const { readd, capacity, gap } of changes) {
              now += dt;
              last = spec(capacity);
              const options = gap === undefined ? undefined : { version: version + gap };
              version = options?.version ?? version + 1;
              if (readd) {
                expect((await a.removeLimit("r")).ok).toBe(true);
                expect((await a.addLimit(last, options)).ok).toBe(true);
              } else expect((await a.replaceLimit(last, now, options)).ok).toBe(true);
            }
            await late.addLimit(last, { version });
            await other.addLimit(last, { version: version + 1 });
            const cap = last.capacity;
            // The late instance's charge is the fleet's; at another version it is not seen.
            expect(await remaining(late, alice, now)).toBe(cap - 1);
            expect(await remaining(a, alice, now)).toBe(cap - 2);
            expect(await remaining(other, alice, now)).toBe(cap - 1);
          },
        ),
        { numRuns: 20 },
      );
    });

  it("docs/reference.md's example of a late instance runs and logs what its comments promise", async () => {
    const root = join(import.meta.dirname, "..");
    const text = readFileSync(join(root, "docs", "reference.md"), "utf8");
    const after = text.indexOf("An instance started after a change, given the limit's version:");
    const code = /```ts\n([\s\S]*?)```/.exec(text.slice(after))?.[1];
    expect(after >= 0 && code !== undefined).toBe(true);
    // Where the package resolves its own name; the README examples' convention: `console.log(x); // y`.
    const file = join(root, ".reports", "reference-version-example.ts");
    mkdirSync(join(root, ".reports"), { recursive: true });
    writeFileSync(file, code as string);
    const log: string[] = [];
    const original = console.log;
    console.log = (...args: unknown[]) => void log.push(args.map((a) => JSON.stringify(a)).join(" "));
    try {
      await import(pathToFileURL(file).href);
    } finally {
      console.log = original;
    }
    const promised = [...(code as string).matchAll(/console\.log\((.*)\);\s*\/\/ (.+)$/gm)].map((m) => m[2]);
    expect(promised.length).toBe(5);
    expect(log).toEqual(promised);
  });
});
