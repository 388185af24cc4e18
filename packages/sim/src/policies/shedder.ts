import { Shedder } from "@tideward/shedder";
import type { Shed } from "@tideward/shedder";
import type { Adapter, PolicyContext, PolicySpec } from "../policy";
import type { NameOptions } from "./breaker";
import { check } from "@tideward/time/internal";
import { nameOf } from "./name";
import { stageAdapter, stageOf } from "./stage";

/**
 * tideward's adaptive `Shedder` (`@tideward/shedder`), server-side, as the guard's shedder stage:
 * each attempt asks `allow(now, cpu)` with the backend's CPU reading (a backend with `workers`
 * gets hot as it fills); the ticket passes when the server finishes the call successfully and
 * fails otherwise.
 */
export function shedder(policy: Partial<Shed> = {}, options: NameOptions = {}): PolicySpec {
  new Shedder(policy);
  const name = nameOf(check.options(options, ["name"], "policy.shedder").name, "shedder", "policy.shedder name");
  return {
    name,
    create(context: PolicyContext): Adapter {
      const s = new Shedder(policy, context.start);
      // The latest reading, kept in a typed array: a number in a closure would be boxed anew on every call.
      const last = new Float64Array([context.start]);
      // The stage reads the load as it admits, after the adapter has noted the reading.
      const load = (): number => context.cpu(last[0]);
      const stage = stageOf("shed", { shedder: s, load }, { side: "server", owner: "policy.shedder", context });
      return stageAdapter(stage, name, "server", last, {
        held: () => s.flying,
        stats: () => ({ flying: s.flying, average: s.average, capacity: s.capacity(last[0], context.cpu(last[0])) }),
      });
    },
  };
}
