export { Shedder } from "./shedder";
export { Ticket } from "./ticket";
export { shed } from "./shed";
export type { Shed } from "./shed";
