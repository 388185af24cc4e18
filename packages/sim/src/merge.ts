import { seededRandom } from "@tideward/time";
import { check } from "@tideward/time/internal";
import type { Random } from "@tideward/time";
import { Blame } from "./callback-error";
import { checkTraffic } from "./traffic";
import type { Arrivals, KeyTable, Traffic, TrafficContext } from "./traffic";

/**
 * Several traffic models at once: their arrivals interleaved in time order, each model's keys
 * numbered after the ones before it. A part whose arrivals throw or are garbage (a time that is
 * NaN or goes back, a key outside its own keys, a bad cost) stops the run with a CallbackError
 * naming the part, `traffic.merge model 1 (label)`; a part of a merge within a merge is named by
 * its path from there out, `traffic.merge model 1 (label) of model 0 (its merge's label)`.
 */
export function merge(...models: readonly Traffic[]): Traffic {
  if (models.length === 0) throw new RangeError("traffic.merge needs at least one traffic model");
  const counts = models.map((m, i) => {
    if (typeof m?.open !== "function")
      throw new TypeError(`traffic.merge model ${i} must be a traffic model, got ${check.describe(m)}`);
    return checkTraffic(m, `traffic.merge model ${i}'s`);
  });
  const offsets = [0];
  for (const n of counts) offsets.push(offsets[offsets.length - 1] + n);
  const part = (i: number): number => {
    let j = models.length - 1;
    while (offsets[j] > i) j--;
    return j;
  };
  const keys: KeyTable = {
    count: offsets[models.length],
    name: (i) => {
      const j = part(i);
      return models[j].keys.name(i - offsets[j]);
    },
    // A part without priorities gives its calls none: a policy's fallback level.
    ...(models.some((m) => m.keys.priority !== undefined)
      ? {
          priority: (i: number) => {
            const j = part(i);
            const of = models[j].keys.priority;
            return of === undefined ? undefined : of(i - offsets[j]);
          },
        }
      : {}),
  };
  const names = models.map((m, i) => `model ${i} (${m.label})`);
  // What part `i` threw, naming it; what a merge within it threw already names a part of its
  // own, and is named by its path: that part of this one.
  const blame = (i: number, e: unknown, opening: boolean): PartBlame => {
    if (e instanceof PartBlame) return new PartBlame(`${e.part} of ${names[i]}`, e.opening, e.message, e.cause);
    const thrown = Blame.of("", e);
    return new PartBlame(names[i], opening, thrown.message, thrown.cause);
  };
  return Object.freeze({
    label: models.map((m) => m.label).join(" + "),
    keys,
    open: (context: TrafficContext): Arrivals => {
      // Each part gets a stream of its own, so adding a part never changes the others' draws.
      const parts = models.map((m, i) => {
        let p: Arrivals;
        try {
          p = m.open({ ...context, random: substream(context.random, i) });
        } catch (e) {
          throw blame(i, e, true);
        }
        if (p === null || typeof p !== "object" || typeof p.next !== "function")
          throw new PartBlame(
            names[i],
            true,
            `it must return arrivals (an object with next), got ${check.describe(p)}`,
          );
        return p;
      });
      // Each part's last time, checked as it comes: NaN would never be picked, and a part would vanish.
      const times = parts.map(() => context.start);
      const pull = (i: number): void => {
        let t: number;
        try {
          t = parts[i].next();
        } catch (e) {
          throw blame(i, e, false);
        }
        if (!(typeof t === "number" && t >= times[i]))
          throw new PartBlame(
            names[i],
            false,
            `its next arrival must be a time no earlier than ${times[i] === context.start ? "the run's start" : "its last"} (${times[i]} ms), got ${check.describe(t)}`,
          );
        times[i] = t;
      };
      for (let i = 0; i < parts.length; i++) pull(i);
      const merged = { key: 0, cost: 1, next: () => Infinity };
      merged.next = () => {
        let best = 0;
        for (let i = 1; i < times.length; i++) if (times[i] < times[best]) best = i;
        const t = times[best];
        if (t === Infinity) return t;
        const part = parts[best];
        const key = part.key;
        // Checked here, against the part's own keys: past them it would count as the next part's.
        if (!(key >>> 0 === key && key < counts[best]))
          throw new PartBlame(
            names[best],
            false,
            `it gave key ${check.describe(key)}; its keys are whole numbers from 0 to ${counts[best] - 1}`,
          );
        const cost = part.cost;
        if (!(typeof cost === "number" && cost >= 0 && cost < Infinity))
          throw new PartBlame(
            names[best],
            false,
            `it gave a cost of ${check.describe(cost)}; a cost is a finite number, 0 or more`,
          );
        merged.key = key + offsets[best];
        merged.cost = cost;
        pull(best);
        return t;
      };
      return merged;
    },
  });
}

/**
 * What a merged traffic's part threw or answered wrongly: `part` names it from its merge out
 * (`model 1 (b) of model 0 (a + b)`), and `opening` says whether its `open` did.
 */
class PartBlame extends Blame {
  readonly part: string;
  readonly opening: boolean;

  constructor(part: string, opening: boolean, detail: string, cause?: unknown) {
    super(`traffic.merge ${part}${opening ? " open" : ""}`, detail, cause);
    this.part = part;
    this.opening = opening;
  }
}

/** A stream seeded from a parent's draw and an index: reproducible, and independent of its siblings' use. */
function substream(parent: Random, index: number): Random {
  return seededRandom(((parent() * 4_294_967_296) >>> 0) ^ Math.imul(index + 1, 0x9e3779b9));
}
