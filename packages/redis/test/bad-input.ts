// What the bad-input tests share: a client that never connects (so a refusal must come before any
// call would), an engine on it, and the words of the clock's bound.
import { perSecond } from "@tideward/quota-engine";
import { RedisQuotaEngine, ioredisClient } from "@tideward/redis";
import type { ScriptClient } from "@tideward/redis";
import { disconnected } from "./server";

/** `x` as whatever a bad call needs it to be typed as. */
export const any = <T>(x: unknown): T => x as T;

/** A script client that never connects. */
export function client(): ScriptClient {
  return ioredisClient(disconnected());
}
export const down = client();

/** An engine on {@link down} with the limit `req`, 5 a second. */
export async function engine(): Promise<RedisQuotaEngine> {
  const e = new RedisQuotaEngine(down, { outage: "closed" });
  await e.addLimit(perSecond("req", 5));
  return e;
}

/** How a refused clock reading ends its message. */
export const NOW_BOUND =
  "must be within ±35184372088832 ms (±2^45, about 1 115 years either side of 1970), got 100000000000000000000";
