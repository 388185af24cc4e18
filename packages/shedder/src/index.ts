export { Shedder } from "./shedder";
export { Ticket } from "./ticket";
export { shed } from "./shed";
export type { Shed } from "./shed";
export type { Levels } from "./levels";
