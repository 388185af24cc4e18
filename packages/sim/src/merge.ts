import { seededRandom } from "@tideward/time";
import { check } from "@tideward/time/internal";
import type { Random } from "@tideward/time";
import type { Arrivals, KeyTable, Traffic, TrafficContext } from "./traffic";

/** Several traffic models at once: their arrivals interleaved in time order, each model's keys numbered after the ones before it. */
export function merge(...models: readonly Traffic[]): Traffic {
  if (models.length === 0) throw new RangeError("traffic.merge needs at least one traffic model");
  models.forEach((m, i) => {
    if (typeof m?.open !== "function")
      throw new TypeError(`traffic.merge model ${i} must be a traffic model, got ${check.describe(m)}`);
  });
  const offsets = [0];
  for (const m of models) offsets.push(offsets[offsets.length - 1] + m.keys.count);
  const keys: KeyTable = {
    count: offsets[models.length],
    name: (i) => {
      let j = models.length - 1;
      while (offsets[j] > i) j--;
      return models[j].keys.name(i - offsets[j]);
    },
  };
  return Object.freeze({
    label: models.map((m) => m.label).join(" + "),
    keys,
    open: (context: TrafficContext): Arrivals => {
      // Each part gets a stream of its own, so adding a part never changes the others' draws.
      const parts = models.map((m, i) => m.open({ ...context, random: substream(context.random, i) }));
      const times = parts.map((p) => p.next());
      const merged = { key: 0, cost: 1, next: () => Infinity };
      merged.next = () => {
        let best = 0;
        for (let i = 1; i < times.length; i++) if (times[i] < times[best]) best = i;
        const t = times[best];
        if (t === Infinity) return t;
        merged.key = parts[best].key + offsets[best];
        merged.cost = parts[best].cost;
        times[best] = parts[best].next();
        return t;
      };
      return merged;
    },
  });
}

/** A stream seeded from a parent's draw and an index: reproducible, and independent of its siblings' use. */
function substream(parent: Random, index: number): Random {
  return seededRandom(((parent() * 4_294_967_296) >>> 0) ^ Math.imul(index + 1, 0x9e3779b9));
}
