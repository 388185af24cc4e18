export { Breaker } from "./breaker";
export { Permit } from "./permit";
export { client } from "./client";
export { sre } from "./sre";
export type { Sre } from "./sre";
