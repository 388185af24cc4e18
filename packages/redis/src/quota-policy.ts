// What a Redis quota engine takes besides a RedisPolicy: how it reserves and settles, with the
// in-process engine's fields, defaults and checks.
import { enginePolicy } from "@tideward/quota-engine";
import type { EnginePolicy } from "@tideward/quota-engine";
import { checkTtl } from "@tideward/quota-engine/internal";
import { check } from "@tideward/time/internal";
import { redisPolicy, resolvePolicy } from "./policy";
import type { RedisPolicy } from "./policy";

/** The policy of a {@link RedisQuotaEngine}: a {@link RedisPolicy} and how it reserves and settles. */
export interface RedisQuotaPolicy
  extends RedisPolicy, Pick<EnginePolicy, "reservationTtl" | "topUp" | "maxReservations"> {}

const OWN = ["reservationTtl", "topUp", "maxReservations"] as const;
const FIELDS = [...(Object.keys(redisPolicy) as (keyof RedisPolicy)[]), ...OWN];

/**
 * `policy` laid over the presets and checked once: the {@link RedisPolicy} fields as every Redis
 * limiter checks them, the reservation fields as the in-process engine does.
 *
 * @throws TypeError or RangeError naming the field and the value
 */
export function resolveQuotaPolicy(policy: Partial<RedisQuotaPolicy> | undefined, what: string): RedisQuotaPolicy {
  const given = check.options(policy, FIELDS, what, "policy");
  const {
    reservationTtl = enginePolicy.reservationTtl,
    topUp = enginePolicy.topUp,
    maxReservations = enginePolicy.maxReservations,
    ...rest
  } = given;
  const base = resolvePolicy(rest, what);
  checkTtl(reservationTtl, `${what} reservationTtl`);
  if (topUp !== "debt" && topUp !== "cap")
    throw new TypeError(`${what} topUp must be "debt" or "cap", got ${check.describe(topUp)}`);
  check.integer(maxReservations, `${what} maxReservations`, 1);
  if (maxReservations > 2 ** 24)
    throw new RangeError(`${what} maxReservations must be at most 16777216 (2^24), got ${maxReservations}`);
  return Object.freeze({ ...base, reservationTtl, topUp, maxReservations });
}
