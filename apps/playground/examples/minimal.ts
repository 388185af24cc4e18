// One breaker in front of one backend that goes down for ten seconds: the smallest thing that
// works. Time is a loop variable and the rolls are seeded, so the output is the same every run.
import { Breaker } from "@tideward/breaker";
import { seededRandom } from "@tideward/time";

/** When the backend fails every call it receives (ms). */
export const outage = { from: 10_000, to: 20_000 };
/** The four stretches the example reports on (ms), 20 calls a second offered throughout. */
export const stretches = [
  { from: 0, to: 10_000, what: "up" },
  { from: 10_000, to: 20_000, what: "down" },
  { from: 20_000, to: 30_000, what: "back up" },
  { from: 30_000, to: 40_000, what: "up" },
] as const;
/** Milliseconds between two calls. */
export const every = 50;

/** Returns the lines this example prints, one per stretch, so a test can check them. */
export function main(): string[] {
  const breaker = new Breaker(); // the sre preset: k 1.5 → 1.1, protection 5, probe 1 s, 10 s window
  const roll = seededRandom(7);
  const lines: string[] = [];
  for (const { from, to, what } of stretches) {
    let served = 0;
    let failed = 0;
    let refused = 0;
    for (let now = from; now < to; now += every) {
      const permit = breaker.allow(now, roll());
      if (permit === undefined) {
        refused++;
      } else if (now >= outage.from && now < outage.to) {
        permit.fail(now);
        failed++;
      } else {
        permit.pass(now);
        served++;
      }
    }
    const span = `${from / 1_000}–${to / 1_000} s`.padEnd(8);
    lines.push(
      `${span} ${what.padEnd(7)} served ${served}, failed ${failed}, refused ${refused}; throttle now ${breaker.ratio(to).toFixed(2)}`,
    );
  }
  return lines;
}
