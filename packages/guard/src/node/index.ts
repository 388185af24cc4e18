export { admitNode } from "./middleware";
export type { AdmitNodeOptions, Middleware } from "./middleware";
export type { ProxyHeader, TrustProxy } from "../identity";
export type { Actual } from "../quota-reservation";
