// The distributions, gathered for `latency.exponential(…)` and the like.
export { fixed, uniform, exponential, logNormal, normal, bimodal, sum } from "./distribution";
