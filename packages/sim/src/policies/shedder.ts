import { Shedder } from "@tideward/shedder";
import type { Levels, Shed } from "@tideward/shedder";
import type { PolicySpec } from "../policy";
import type { NameOptions } from "./breaker";
import { check } from "@tideward/time/internal";
import { nameOf } from "./name";
import { stagePolicy } from "./stage";

/** Options of {@link shedder}. */
export interface ShedderPolicyOptions extends NameOptions {
  /** The levels (`Priorities` of `@tideward/concurrency`) calls are judged by, each at its key's priority. @defaultValue none */
  readonly priorities?: Levels;
}

/**
 * tideward's adaptive `Shedder` (`@tideward/shedder`), server-side, as the guard's shedder stage:
 * each attempt asks `allow(now, cpu)` with the backend's CPU reading (a backend with `workers`
 * gets hot as it fills) and the call's priority; the ticket passes when the server finishes the
 * call successfully and fails otherwise.
 */
export function shedder(policy: Partial<Shed> = {}, options: ShedderPolicyOptions = {}): PolicySpec {
  const o = check.options(options, ["name", "priorities"], "policy.shedder");
  const priorities = o.priorities;
  new Shedder(policy, 0, priorities);
  const name = nameOf(o.name, "shedder", "policy.shedder name");
  return stagePolicy("shed", name, "server", "policy.shedder", (context, last) => {
    const s = new Shedder(policy, context.start, priorities);
    return {
      // The stage reads the load as it admits, after the chain has noted the reading.
      options: { shedder: s, load: (): number => context.cpu(last[0]) },
      extras: {
        held: () => s.flying,
        stats: () => ({ flying: s.flying, average: s.average, capacity: s.capacity(last[0], context.cpu(last[0])) }),
      },
    };
  });
}
