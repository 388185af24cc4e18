// A tour: a breaker under an outage, a shedder under rising load, and one step through
// each limiter. Time is a loop variable and the rolls are seeded: the same lines every run.
import { Breaker } from "@tideward/breaker";
import { Bucket, Gate, Gcra, Period, Sliding } from "@tideward/limiters";
import { Shedder } from "@tideward/shedder";
import { seededRandom } from "@tideward/time";
import { simulate } from "./shedder.ts";

/** The breaker's part: 100 calls a second for 40 s, the backend failing every call from 10 s to 20 s. */
export const outage = { rate: 100, from: 10_000, to: 20_000, end: 40_000, stretch: 5_000 } as const;

function breakerPart(): string[] {
  const breaker = new Breaker();
  const roll = seededRandom(7);
  const every = 1_000 / outage.rate;
  const lines = [
    `a breaker under an outage: ${outage.rate} calls a second; the backend fails every call from ${outage.from / 1_000} s to ${outage.to / 1_000} s`,
  ];
  let lastRefusal = -1;
  for (let from = 0; from < outage.end; from += outage.stretch) {
    let passed = 0;
    let failed = 0;
    let refused = 0;
    for (let now = from; now < from + outage.stretch; now += every) {
      const permit = breaker.allow(now, roll());
      if (permit === undefined) {
        refused++;
        lastRefusal = now;
      } else if (now >= outage.from && now < outage.to) {
        permit.fail(now);
        failed++;
      } else {
        permit.pass(now);
        passed++;
      }
    }
    const to = from + outage.stretch;
    const state = to <= outage.from || from >= outage.to ? "up" : "down";
    lines.push(
      `  ${`${from / 1_000}–${to / 1_000} s`.padEnd(8)} backend ${state}: ${passed} succeeded, ${failed} failed, ${refused} refused; refusing ${(breaker.ratio(to) * 100).toFixed(0)}% at ${to / 1_000} s`,
    );
  }
  lines.push(`  the last refusal came ${((lastRefusal - outage.to) / 1_000).toFixed(2)} s after the backend recovered`);
  return lines;
}

/** The shedder's part: load rising by 50 calls a second each second, from 100 to 500, on a server that does 250. */
export function rising(s: number): number {
  return Math.min(500, 100 + 50 * s);
}

function shedderPart(): string[] {
  const seconds = 12;
  const without = simulate(undefined, rising, seconds);
  const shedding = simulate(new Shedder({}, 0), rising, seconds);
  const lines = [
    "a shedder under rising load: a one-core server needing 4 ms a call (250 calls a second), offered 100 calls a second rising by 50 each second",
  ];
  for (const s of [0, 2, 4, 6, 8, 11]) {
    const a = without[s];
    const b = shedding[s];
    if (a === undefined || b === undefined) continue;
    lines.push(
      `  second ${String(s).padStart(2)}, ${a.offered} offered: without a shedder ${a.served} served, p99 ${a.p99} ms; with one ${b.served} served, ${b.refused} refused, p99 ${b.p99} ms`,
    );
  }
  return lines;
}

function limitersPart(): string[] {
  const lines = ["one step through each limiter:"];

  const bucket = new Bucket(25); // 25 tokens a second, a burst of 25
  let passed = 0;
  for (let i = 0; i < 30; i++) if (bucket.take(0)) passed++;
  lines.push(
    `  bucket, 25 a second: ${passed} of 30 calls at 0 ms let through; the next token in ${bucket.next(0)} ms; ${bucket.tokens(200)} tokens at 200 ms`,
  );

  const sliding = new Sliding(3, 1_000);
  const slid = [0, 100, 200, 300].map((t) => `${t} ms ${sliding.take(t) ? "let through" : "refused"}`);
  lines.push(`  sliding, 3 in any second: ${slid.join(", ")}; room again in ${sliding.next(300)} ms`);

  const period = new Period(2, 1_000, { align: true });
  const counted = [900, 950, 990, 1_000].map((t) => `${t} ms ${period.take(t)}`);
  lines.push(`  period, 2 in each whole second: ${counted.join(", ")} (a new period)`);

  const gcra = new Gcra(10, { burst: 2 });
  const flowed = [gcra.take(0), gcra.take(0), gcra.take(0)].map((ok) => (ok ? "conforms" : "refused"));
  lines.push(
    `  gcra, 10 a second, 2 back to back: three calls at 0 ms: ${flowed.join(", ")}; the next conforms in ${gcra.next(0)} ms`,
  );

  const gate = new Gate(2);
  const steps = [
    `enter ${gate.enter() ? "yes" : "no"}`,
    `enter ${gate.enter() ? "yes" : "no"}`,
    `enter ${gate.enter() ? "yes" : "no"} (${gate.held} held)`,
  ];
  gate.leave();
  steps.push(`leave (${gate.held} held)`, `enter ${gate.enter() ? "yes" : "no"}`);
  lines.push(`  gate, 2 at once: ${steps.join(", ")}`);
  return lines;
}

/** Returns the lines this example prints, so a test can check them. */
export function main(): string[] {
  return [...breakerPart(), "", ...shedderPart(), "", ...limitersPart()];
}
