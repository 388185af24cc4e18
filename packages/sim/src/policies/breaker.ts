import { Breaker } from "@tideward/breaker";
import type { Sre } from "@tideward/breaker";
import type { Adapter, PolicyContext, PolicySpec } from "../policy";
import { check } from "@tideward/time/internal";
import { nameOf } from "./name";
import { stageAdapter, stageOf } from "./stage";

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
  return {
    name,
    create(context: PolicyContext): Adapter {
      const b = new Breaker(policy, context.start);
      const stage = stageOf("breaker", { breaker: b }, { side: "client", owner: "policy.breaker", context });
      // The latest reading, kept in a typed array: a number in a closure would be boxed anew on every call.
      const last = new Float64Array([context.start]);
      return stageAdapter(stage, name, "client", last, { stats: () => ({ ratio: b.ratio(last[0]) }) });
    },
  };
}
