import { Breaker } from "@tideward/breaker";
import type { Permit, Sre } from "@tideward/breaker";
import type { Adapter, PolicyContext, PolicySpec } from "../policy";
import { check } from "@tideward/time/internal";
import { nameOf } from "./name";

/** Options every built-in policy takes besides its own numbers. */
export interface NameOptions {
  /** How results name it (and its refusal reason). */
  readonly name?: string;
}

/**
 * tideward's adaptive breaker (`@tideward/breaker`), client-side: each attempt asks
 * `allow(now, roll)` with a roll from the policy's own stream, and the client's outcome settles
 * the permit (a timeout is a failure). Reports `ratio`, the standing refusal fraction at the end.
 */
export function breaker(policy: Partial<Sre> = {}, options: NameOptions = {}): PolicySpec {
  const name = nameOf(check.options(options, ["name"], "policy.breaker").name, "breaker", "policy.breaker name");
  // Built once here so a bad policy fails when the spec is made, not inside a run.
  new Breaker(policy);
  return {
    name,
    create(context: PolicyContext): Adapter {
      const b = new Breaker(policy, context.start);
      const roll = context.random;
      // The latest reading, kept in a typed array: a number in a closure would be boxed anew on every call.
      const last = new Float64Array([context.start]);
      return {
        name,
        side: "client",
        reason: name,
        admit: (now) => {
          last[0] = now;
          return b.allow(now, roll());
        },
        settle: (permit, now, ok) => {
          if (ok) (permit as Permit).pass(now);
          else (permit as Permit).fail(now);
        },
        stats: () => ({ ratio: b.ratio(last[0]) }),
      };
    },
  };
}
