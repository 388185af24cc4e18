export { Shedder } from "./shedder";
export { Ticket } from "./ticket";
export { shed } from "./shed";
export type { Shed } from "./shed";
// The priority levels a shedder judges calls by: the same definition a concurrency limiter reads.
export { Priorities, criticality } from "@tideward/concurrency";
export type { Priority, PriorityOptions } from "@tideward/concurrency";
