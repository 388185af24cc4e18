export { breaker } from "./breaker";
export type { NameOptions } from "./breaker";
export { classicBreaker, samplingBreaker } from "./classic";
export type { ClassicOptions, SamplingOptions } from "./classic";
export { bucket, gcra, sliding, period, gate } from "./limiters";
export type { GatePolicyOptions, LimiterOptions, PeriodPolicyOptions, RateLimiterOptions } from "./limiters";
export { shedder } from "./shedder";
export { quota } from "./quota";
export type { QuotaDimension, QuotaPolicyOptions } from "./quota";
