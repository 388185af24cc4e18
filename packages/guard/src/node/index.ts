export { admitNode } from "./middleware";
export type { AdmitNodeOptions, Middleware } from "./middleware";
