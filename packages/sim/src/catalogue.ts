import type { Scenario } from "./scenario";
import { breakerOutage } from "./scenarios/breaker-outage";
import { capacityShift } from "./scenarios/capacity-shift";
import { breakerBrownout } from "./scenarios/breaker-brownout";
import { contentionBackoff } from "./scenarios/contention-backoff";
import { herdBackoff } from "./scenarios/herd-backoff";
import { herdRecovery } from "./scenarios/herd-recovery";
import { metastableOverload } from "./scenarios/metastable-overload";
import { prefetchSpike } from "./scenarios/prefetch-spike";
import { quotaAtomic } from "./scenarios/quota-atomic";
import { quotaBursts } from "./scenarios/quota-bursts";
import { retryAmplification } from "./scenarios/retry-amplification";
import { shedderRamp } from "./scenarios/shedder-ramp";
import { slowBackend } from "./scenarios/slow-backend";
import { tokenBudget } from "./scenarios/token-budget";

/** Every scenario, by name, in the order a page lists them. */
export const catalogue: readonly Scenario[] = Object.freeze([
  breakerOutage,
  breakerBrownout,
  metastableOverload,
  shedderRamp,
  slowBackend,
  quotaBursts,
  herdBackoff,
  contentionBackoff,
  quotaAtomic,
  retryAmplification,
  herdRecovery,
  prefetchSpike,
  capacityShift,
  tokenBudget,
]);

/** The scenario called `name`, or `undefined`. */
export function scenario(name: string): Scenario | undefined {
  return catalogue.find((s) => s.name === name);
}
