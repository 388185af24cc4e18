import { Run } from "./run";
import type { SimulationOptions } from "./options";
import type { RunResult } from "./result";

export type { ClientOptions, HedgeOptions, NetworkOptions, RetryOptions, SimulationOptions } from "./options";

/**
 * Runs traffic through a client, policies and a backend over simulated time, and returns the
 * record: time series, a summary, and the trace hash. Deterministic: the same options give the
 * same result, bit for bit.
 *
 * Each call from the traffic is a first attempt; the client may retry it (with backoff, a
 * budget, up to a count of attempts or its deadline) or hedge it. Every attempt asks each
 * client-side policy in order when it is sent, crosses the network's request leg, then asks each
 * server-side policy in order; the first refusal ends the attempt, and the places the policies
 * before it gave are released. An admitted attempt goes to the backend, and its answer (or a
 * server-side refusal) comes back over the response leg. Client-side policies settle when the
 * client hears the answer (or gives up waiting), server-side ones when the backend finishes.
 *
 * Sizes are checked before anything is allocated: a run whose series, per-key totals or calls in
 * flight would need more than `maxBytes` is refused with a `RangeError` naming the option. A
 * function handed in (traffic, a distribution, a failure schedule, a policy, a key name) that
 * throws or answers outside its contract stops the run with a `CallbackError`.
 *
 * @example
 * import { minutes } from "@tideward/time";
 * const run = simulate({
 *   duration: minutes(5),
 *   traffic: traffic.poisson({ rate: 200 }),
 *   backend: { latency: latency.exponential(20), failures: failures.outage({ from: 60_000, to: 120_000 }) },
 *   policies: [policy.breaker()],
 * });
 * run.summary.refusedBy.breaker; // calls the breaker spared the dead backend
 * @throws TypeError/RangeError naming the option for bad input or a size past `maxBytes`;
 *   InvariantError when `invariants` finds a breach; CallbackError when a function handed in
 *   throws or answers outside its contract
 */
export function simulate(options: SimulationOptions): RunResult {
  return new Run(options).result();
}
