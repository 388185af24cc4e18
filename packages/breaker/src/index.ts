export { Breaker } from "./breaker";
export { Permit } from "./permit";
export { sre } from "./sre";
export type { Sre } from "./sre";
