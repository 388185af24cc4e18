import { Breaker } from "@tideward/breaker";
import type { Sre } from "@tideward/breaker";
import type { PolicySpec } from "../policy";
import { check } from "@tideward/time/internal";
import { nameOf } from "./name";
import { stagePolicy } from "./stage";

/** Options every built-in policy takes besides its own numbers. */
export interface NameOptions {
  /** How results name it (and its refusal reason). */
  readonly name?: string;
}

/**
 * tideward's adaptive breaker (`@tideward/breaker`), client-side, as the guard's breaker stage:
 * each attempt asks `allow(now, random)` with the policy's own stream, drawn only while the
 * breaker throttles (as in a guard), and the client's outcome settles the permit (a timeout is a
 * failure). Reports `ratio`, the standing refusal fraction at the end.
 */
export function breaker(policy: Partial<Sre> = {}, options: NameOptions = {}): PolicySpec {
  const name = nameOf(check.options(options, ["name"], "policy.breaker").name, "breaker", "policy.breaker name");
  // Built once here so a bad policy fails when the spec is made, not inside a run.
  new Breaker(policy);
  return stagePolicy("breaker", name, "client", "policy.breaker", (context, last) => {
    const b = new Breaker(policy, context.start);
    return { options: { breaker: b }, extras: { stats: () => ({ ratio: b.ratio(last[0]) }) }, direct: true };
  });
}
