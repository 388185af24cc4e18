export { Breaker } from "./breaker";
export { Permit } from "./permit";
export { client } from "./client";
export { sre } from "./sre";
export type { HalfOpen, Sre } from "./sre";
export type { BreakerSnapshot, SavedTally } from "./snapshot";
export { SnapshotError, isSnapshotError } from "@tideward/time";
export type { RestoreOptions } from "@tideward/time";
