// The traffic models, gathered for `traffic.poisson(…)` and the like.
export { constant, poisson, shaped, ramp, daily, bursts, herd, merge } from "./traffic";
export { replay, parseTrace } from "./replay";
