// Reserve, then settle, on Redis: the reservation conformance suite (the in-process engine's
// decisions, computed by hand) on a real redis-server, through both clients, at clocks near 0 and
// near Date.now().
import { describe, expect, it } from "vitest";
import { reservationConformance } from "@tideward/quota-engine/conformance";
import { RedisQuotaEngine } from "@tideward/redis";
import type { ScriptClient } from "@tideward/redis";
import { patient, useRedis, withRedis } from "./server";

withRedis("the reservation conformance suite on Redis", () => {
  const redis = useRedis();
  let n = 0;
  const fresh = async (client: Promise<ScriptClient>, topUp: "debt" | "cap"): Promise<RedisQuotaEngine> =>
    new RedisQuotaEngine(await client, { ...patient, prefix: `v${n++}:`, hashTag: () => "q", topUp });
  for (const origin of [0, 1_700_000_000_000]) {
    reservationConformance({ describe, it, expect }, ({ topUp }) => fresh(redis.ioredis(), topUp), {
      name: `ioredis, clock origin ${origin}`,
      origin,
    });
    reservationConformance({ describe, it, expect }, ({ topUp }) => fresh(redis.nodeRedis(), topUp), {
      name: `node-redis, clock origin ${origin}`,
      origin,
    });
  }
});
