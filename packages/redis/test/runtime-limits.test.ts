// Limits that change while the service runs, on Redis: the runtime-limit conformance suite (the
// in-process engine's decisions, computed by hand) on a real redis-server, through both clients,
// at clocks near 0 and near Date.now().
import { describe, expect, it } from "vitest";
import { runtimeLimitConformance } from "@tideward/quota-engine/conformance";
import { RedisQuotaEngine } from "@tideward/redis";
import type { ScriptClient } from "@tideward/redis";
import { patient, useRedis, withRedis } from "./server";

withRedis("the runtime-limit conformance suite on Redis", () => {
  const redis = useRedis();
  let n = 0;
  const fresh = async (client: Promise<ScriptClient>): Promise<RedisQuotaEngine> =>
    new RedisQuotaEngine(await client, { ...patient, prefix: `l${n++}:`, hashTag: () => "q" });
  for (const origin of [0, 1_700_000_000_000]) {
    runtimeLimitConformance({ describe, it, expect }, () => fresh(redis.ioredis()), {
      name: `ioredis, clock origin ${origin}`,
      origin,
    });
    runtimeLimitConformance({ describe, it, expect }, () => fresh(redis.nodeRedis()), {
      name: `node-redis, clock origin ${origin}`,
      origin,
    });
  }
});
