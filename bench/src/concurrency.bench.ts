// @tideward/concurrency: acquire + pass on a Limiter with an AIMD limit, against a hand-written
// AIMD counter doing the least the same job needs (plain-aimd.ts) and handing back a token just the
// same; the same with priorities, and with the other algorithms; then the bytes each call allocates.
import { AimdLimit, Gradient2Limit, Limiter, VegasLimit, criticality } from "@tideward/concurrency";
import type { Refusal, Token } from "@tideward/concurrency";
import { allocation, compare, fastest } from "./harness";
import { PlainAimd } from "./plain-aimd";
import type { PlainToken } from "./plain-aimd";

// Each case's clock lives in a typed array: a module-level `let` holding a fraction would box a
// new number on every step, an allocation of the measuring that every case would pay.
const clock = new Float64Array(8);
clock[6] = 1_700_000_000_000.1;

const limiter = new Limiter(new AimdLimit());
const plain = new PlainAimd();
const prioritised = new Limiter(new AimdLimit(), { priorities: criticality });
const epoch = new Limiter(new AimdLimit(), { now: clock[6] });
const vegas = new Limiter(new VegasLimit());
const gradient = new Limiter(new Gradient2Limit());

// One call at a time, each passing 0.05 ms after it started (one in flight: the limit holds).
const cases = [
  {
    name: "@tideward/concurrency Limiter (AIMD)",
    fn: (): Token | Refusal => {
      const t = limiter.acquire((clock[1] += 0.01));
      if (t.ok) t.pass(clock[1] + 0.005);
      return t;
    },
  },
  {
    name: "hand-written AIMD counter (+ token object)",
    fn: (): PlainToken | undefined => {
      const t = plain.acquire((clock[2] += 0.01));
      t?.pass(clock[2] + 0.005);
      return t;
    },
  },
] as const;

// The target's pair first, while the limiter's call into its algorithm has seen only AIMD (as in
// a server with one algorithm), timed as the fastest of many short rounds taken in turn: the
// steadier figure on a busy machine.
fastest("acquire + pass (AIMD)", cases, { rounds: 40, batch: 200_000 });

// Then every case, one after another (the limiter's call into its algorithm now sees three kinds).
await compare("acquire + pass, one call at a time", [
  ...cases,
  {
    name: "Limiter (AIMD), criticality, sheddable",
    fn: (): Token | Refusal => {
      const t = prioritised.acquire((clock[3] += 0.01), "sheddable");
      if (t.ok) t.pass(clock[3] + 0.005);
      return t;
    },
  },
  {
    name: "Limiter (AIMD) on a Date.now() clock",
    fn: (): Token | Refusal => {
      const t = epoch.acquire((clock[6] += 0.01));
      if (t.ok) t.pass(clock[6] + 0.005);
      return t;
    },
  },
  {
    name: "Limiter (Vegas)",
    fn: (): Token | Refusal => {
      const t = vegas.acquire((clock[4] += 0.01));
      if (t.ok) t.pass(clock[4] + 0.005);
      return t;
    },
  },
  {
    name: "Limiter (Gradient2)",
    fn: (): Token | Refusal => {
      const t = gradient.acquire((clock[5] += 0.01));
      if (t.ok) t.pass(clock[5] + 0.005);
      return t;
    },
  },
]);

console.log("\nbytes allocated per call (a token is an object holding a number)");
for (const [name, label] of [
  ["limiter", "@tideward/concurrency Limiter (AIMD)"],
  ["limiter-priority", "Limiter (AIMD), criticality, sheddable"],
  ["plain", "hand-written AIMD counter (+ token object)"],
  ["refused", "Limiter, limit full: a refusal"],
] as const) {
  console.log(`  ${label.padEnd(48)} ${allocation(name, "concurrency-allocation.ts").toFixed(1)}`);
}
