import { Shedder } from "@tideward/shedder";
import type { Shed } from "@tideward/shedder";
import type { PolicySpec } from "../policy";
import type { NameOptions } from "./breaker";
import { check } from "@tideward/time/internal";
import { nameOf } from "./name";
import { stagePolicy } from "./stage";

/**
 * tideward's adaptive `Shedder` (`@tideward/shedder`), server-side, as the guard's shedder stage:
 * each attempt asks `allow(now, cpu)` with the backend's CPU reading (a backend with `workers`
 * gets hot as it fills); the ticket passes when the server finishes the call successfully and
 * fails otherwise.
 */
export function shedder(policy: Partial<Shed> = {}, options: NameOptions = {}): PolicySpec {
  new Shedder(policy);
  const name = nameOf(check.options(options, ["name"], "policy.shedder").name, "shedder", "policy.shedder name");
  return stagePolicy("shed", name, "server", "policy.shedder", (context, last) => {
    const s = new Shedder(policy, context.start);
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
