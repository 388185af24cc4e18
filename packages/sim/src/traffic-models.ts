// The traffic models, gathered for `traffic.poisson(…)` and the like.
export { constant, poisson, shaped, ramp, daily } from "./rates";
export { bursts, herd } from "./bursts";
export { merge } from "./merge";
export { replay, parseTrace } from "./replay";
export { priority } from "./priority";
