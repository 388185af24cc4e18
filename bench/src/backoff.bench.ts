// @tideward/backoff: the delay before a retry, against exponential-backoff 3.1.3 and the plain
// `Math.min(base * 2 ** n, cap)` it stands for.
//
// exponential-backoff's public API is only the async `backOff`; the computation lives in the
// private getters `delay` and `jitteredDelay` of the Delay object its internal `DelayFactory`
// builds for every attempt. We call that factory and read those getters: what `backOff` does per
// attempt, minus the timer. Its full jitter draws `Math.random()` itself and rounds to a whole ms.
import { Backoff, Jitter, backoff } from "@tideward/backoff";
import { DelayFactory } from "exponential-backoff/dist/delay/delay.factory.js";
import { getSanitizedOptions } from "exponential-backoff/dist/options.js";
import { compare } from "./harness";

type Private = { readonly delay: number; readonly jitteredDelay: number };

const base = 100;
const cap = 1_000;
// Retry numbers 1–16 in turn: half below the cap, half saturated at it.
let n = 0;
const next = (): number => (n = (n & 15) + 1);

const rigid = new Backoff({ base, cap, factor: 2, attempts: 17, jitter: Jitter.rigid });
const full = new Backoff({ base, cap, factor: 2, attempts: 17, jitter: Jitter.full });
const eboNone = getSanitizedOptions({ startingDelay: base, timeMultiple: 2, maxDelay: cap, jitter: "none" });
const eboFull = getSanitizedOptions({ startingDelay: base, timeMultiple: 2, maxDelay: cap, jitter: "full" });
// exponential-backoff's first delayed attempt is attempt 1 with exponent 0, like our retry 1.
const eboReused = DelayFactory(eboNone, 1);
const table = Float64Array.from({ length: 16 }, (_, i) => Math.min(base * 2 ** i, cap));

await compare("delay before retry n (no jitter), n cycling 1–16", [
  { name: "@tideward/backoff rigid.delay(n)", fn: () => rigid.delay(next()) },
  {
    name: "exponential-backoff DelayFactory(o, n).delay",
    fn: () => (DelayFactory(eboNone, next()) as unknown as Private).delay,
  },
  {
    name: "exponential-backoff, one Delay reused",
    fn: () => {
      eboReused.setAttemptNumber(next());
      return (eboReused as unknown as Private).delay;
    },
  },
  { name: "plain Math.min(base * 2 ** (n - 1), cap)", fn: () => Math.min(base * 2 ** (next() - 1), cap) },
  // The floor for a lookup, which is what tideward does for the first 32 retries.
  { name: "plain table[n - 1] (precomputed ceilings)", fn: () => table[next() - 1] },
]);

await compare("delay before retry n, full jitter with a Math.random() draw", [
  { name: "@tideward/backoff full.delay(n, { random })", fn: () => full.delay(next(), { random: Math.random() }) },
  {
    name: "exponential-backoff DelayFactory(o, n).jitteredDelay",
    fn: () => (DelayFactory(eboFull, next()) as unknown as Private).jitteredDelay,
  },
  { name: "plain Math.random() * Math.min(…)", fn: () => Math.random() * Math.min(base * 2 ** (next() - 1), cap) },
]);

await compare("delay before retry n, the preset (spread by a fifth), Math.random() draw", [
  {
    name: "@tideward/backoff backoff.delay(n, { random })",
    fn: () => backoff.delay(next(), { random: Math.random() }),
  },
  {
    name: "plain c × (0.8 + 0.4 × Math.random())",
    fn: () => Math.min(base * 2 ** (next() - 1), cap) * (0.8 + 0.4 * Math.random()),
  },
]);

const draws = [0.1, 0.3, 0.5, 0.7];
const five = backoff.with({ attempts: 5 });
await compare("a whole plan of four waits (the preset, five attempts)", [
  { name: "@tideward/backoff five.schedule(draws)", fn: () => five.schedule(draws) },
  {
    name: "plain loop into an array",
    fn: () => {
      const out: number[] = [];
      for (let i = 0; i < 4; i++) out.push(Math.min(base * 2 ** i, cap) * (0.8 + 0.4 * draws[i]));
      return out;
    },
  },
]);
