// A three-master Redis Cluster on loopback ports, started here: the conformance suite, the
// CROSSSLOT refusal and batches split by slot.
import Redis from "ioredis";
import type { Cluster } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { QuotaEngine, QuotaKey, perSecond } from "@tideward/quota-engine";
import type { EvaluationInput } from "@tideward/quota-engine";
import {
  answer,
  quotaConformance,
  reservationConformance,
  runtimeLimitConformance,
} from "@tideward/quota-engine/conformance";
import { CrossSlotError, RedisQuotaEngine, ioredisClient, slotOf } from "@tideward/redis";
import type { ScriptClient } from "@tideward/redis";
import { startCluster } from "@tideward/redis/testing";
import type { RedisCluster } from "@tideward/redis/testing";
import { patient, withRedis } from "./server";

withRedis("a three-node Redis Cluster", () => {
  let cluster: RedisCluster | undefined;
  let client: Cluster | undefined;
  let scripts: ScriptClient | undefined;
  beforeAll(async () => {
    cluster = await startCluster(3);
    const port = cluster.nodes[0]?.port;
    client = new Redis.Cluster([{ host: "127.0.0.1", port }], {
      enableOfflineQueue: false,
      redisOptions: { autoResendUnfulfilledCommands: false, maxRetriesPerRequest: 0 },
    });
    client.on("error", () => undefined);
    await new Promise<void>((resolve, reject) => {
      client?.once("ready", resolve);
      client?.once("error", reject);
    });
    scripts = ioredisClient(client);
  }, 60_000);
  afterAll(async () => {
    client?.disconnect();
    await cluster?.stop();
  });
  const engine = (policy: ConstructorParameters<typeof RedisQuotaEngine>[1]): RedisQuotaEngine =>
    new RedisQuotaEngine(scripts as ScriptClient, { ...patient, ...policy });

  let n = 0;
  // The suite's sets span scopes, so each case's engine keeps its keys on one slot: a tag of its
  // own per case, which also spreads the cases over the three nodes.
  const fresh = (): RedisQuotaEngine => {
    const tag = `case${n++}`;
    return engine({ prefix: "cc:", hashTag: () => tag });
  };
  quotaConformance({ describe, it, expect }, fresh, { name: "conformance on the cluster, clock origin 0" });
  quotaConformance({ describe, it, expect }, fresh, {
    name: "conformance on the cluster, clock origin Date.now()",
    origin: 1_700_000_000_000,
  });
  // A reservation's record lives under its id on its charges' slot: every case on the node of its tag.
  for (const origin of [0, 1_700_000_000_000])
    reservationConformance(
      { describe, it, expect },
      ({ topUp }) => {
        const tag = `case${n++}`;
        return engine({ prefix: "cv:", hashTag: () => tag, topUp });
      },
      { name: `reservations on the cluster, clock origin ${origin}`, origin },
    );

  // A replaced limit's earlier names and an override's move stay on the key's slot.
  for (const origin of [0, 1_700_000_000_000])
    runtimeLimitConformance(
      { describe, it, expect },
      () => {
        const tag = `case${n++}`;
        return engine({ prefix: "cl:", hashTag: () => tag });
      },
      { name: `runtime limits on the cluster, clock origin ${origin}`, origin },
    );

  it("a reserve across slots is refused before sending, naming the keys; one slot's record sits on it", async () => {
    const e = engine({ prefix: "cx:" });
    await e.addLimit(perSecond("r", 10));
    const [a, b] = [new QuotaKey("acme", "u", "api"), new QuotaKey("beta", "u", "api")];
    expect(slotOf("{acme}")).not.toBe(slotOf("{beta}"));
    await expect(
      e.reserve(
        [
          { key: a, limit: "r", cost: 1 },
          { key: b, limit: "r", cost: 1 },
        ],
        0,
        { id: "across" },
      ),
    ).rejects.toBeInstanceOf(CrossSlotError);
    const r = await e.reserve([{ key: a, limit: "r", cost: 4 }], 0, { id: "one" });
    expect([r.code, r.path]).toEqual(["reserved", "store"]);
    // The record, read on the node its slot is on (the slot of the state it was charged with).
    const record = "cx:{acme}vone";
    expect(await (client as Cluster).exists(record)).toBe(1);
    expect(await (client as Cluster).pttl(record)).toBeGreaterThan(0);
    expect(slotOf(record)).toBe(slotOf(e.redisKey(a, "r")));
    const settled = await e.settle("one", { r: 1 }, 0);
    expect(settled.ok && settled.charges.map((c) => c.refunded)).toEqual([3]);
  });

  it("keys of different tenants land on different nodes, and a set across them is refused before sending", async () => {
    const e = engine({ prefix: "cs:" });
    await e.addLimit(perSecond("r", 10));
    const a = new QuotaKey("acme", "alice", "api");
    const g = new QuotaKey("globex", "gina", "api");
    expect(slotOf(e.redisKey(a, "r"))).not.toBe(slotOf(e.redisKey(g, "r")));
    expect((await e.checkTokenBucket(a, "r", 0)).path).toBe("store");
    expect((await e.checkTokenBucket(g, "r", 0)).path).toBe("store");
    const err = await e
      .checkAtomic(
        [
          { key: a, limit: "r", cost: 1 },
          { key: g, limit: "r", cost: 1 },
        ],
        0,
      )
      .catch((x: unknown) => x);
    expect(err).toBeInstanceOf(CrossSlotError);
    expect((err as CrossSlotError).keys.map((k) => k.key)).toEqual([e.redisKey(a, "r"), e.redisKey(g, "r")]);
    // Within one tenant the set commits on whichever node holds that slot.
    const ok = await e.checkAtomic(
      [
        { key: a, limit: "r", cost: 1 },
        { key: new QuotaKey("acme", "*", "api"), limit: "r", cost: 1 },
      ],
      0,
    );
    expect([ok.path, ok.committed]).toEqual(["store", true]);
  });

  it("a batch across many tenants is split by slot and decides as in process", async () => {
    const e = engine({ prefix: "cb:", cluster: true });
    const local = new QuotaEngine();
    await e.addLimit(perSecond("r", 3));
    local.addLimit(perSecond("r", 3));
    const inputs: EvaluationInput[] = [];
    for (let i = 0; i < 300; i++) inputs.push({ key: new QuotaKey(`t${i % 11}`, `u${i % 5}`, "api"), now: i * 7.5 });
    const got = await e.checkMany("r", inputs);
    expect(got.decisions.map(answer)).toEqual(local.checkMany("r", inputs).decisions.map(answer));
    expect(new Set(inputs.map((x) => slotOf(e.redisKey(x.key, "r")))).size).toBeGreaterThan(5);
  });
});
