import { describe, expect, it } from "vitest";
import { quotaConformance } from "@tideward/quota-engine/conformance";
import { RedisQuotaEngine } from "@tideward/redis";
import type { ScriptClient } from "@tideward/redis";
import { useRedis, withRedis, patient } from "./server";

withRedis("the quota engine's conformance suite on Redis", () => {
  const redis = useRedis();
  let n = 0;
  // Every case gets an empty store: a prefix of its own on the one server. One hash tag for the
  // whole engine, because the suite's charge sets span scopes (a user, a tenant, a model).
  const fresh = async (client: Promise<ScriptClient>): Promise<RedisQuotaEngine> =>
    new RedisQuotaEngine(await client, { ...patient, prefix: `c${n++}:`, hashTag: () => "q" });
  for (const origin of [0, 1_700_000_000_000]) {
    quotaConformance({ describe, it, expect }, () => fresh(redis.ioredis()), {
      name: `ioredis, clock origin ${origin}`,
      origin,
    });
    quotaConformance({ describe, it, expect }, () => fresh(redis.nodeRedis()), {
      name: `node-redis, clock origin ${origin}`,
      origin,
    });
  }
});
