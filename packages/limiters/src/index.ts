export { Bucket } from "./bucket";
export type { BucketOptions } from "./bucket";
export { Sliding } from "./sliding";
export { Period } from "./period";
export type { PeriodOptions, Quota } from "./period";
export { Gcra } from "./gcra";
export type { GcraOptions } from "./gcra";
export { Gate } from "./gate";
export type { RateLimit } from "./rate-limit";
