export { Shedder } from "./shedder";
export { Ticket } from "./ticket";
export { shed } from "./shed";
export type { Shed } from "./shed";
export type { Levels } from "./levels";
export type { SavedTotal, ShedderSnapshot } from "./snapshot";
export { SnapshotError, isSnapshotError } from "@tideward/time";
export type { RestoreOptions } from "@tideward/time";
