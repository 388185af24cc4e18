// @tideward/guard's admit with a concurrency limit: one request's check(key, cost, priority) and
// its verdict's release, with a Limiter (AIMD, criticality, the request at "critical"), against
// admit with no policy at all (the floor of a verdict: the admission's own path) and against a
// hand-written AIMD counter (plain-aimd.ts: the least the limit's job needs, a token object
// included), and the Limiter alone (acquire + pass) to show what admit adds over its stage. One
// request at a time, each ending 0.005 ms after it began, so the limit never fills and every case
// admits. Every case reads its clock from a typed array, as the concurrency bench does: a
// module-level number holding a fraction would box a new one on every step.
//
//   flock /tmp/tideward-bench.lock npx -y pnpm@12.4.2 bench admit
import { AimdLimit, Limiter, criticality } from "@tideward/concurrency";
import type { Refusal, Token } from "@tideward/concurrency";
import { admit } from "@tideward/guard";
import type { Verdict } from "@tideward/guard";
import { fastest } from "./harness";
import { PlainAimd } from "./plain-aimd";
import type { PlainToken } from "./plain-aimd";

// Each case's clock at the scale of Date.now(), where the guard runs.
const clock = new Float64Array(4).fill(1_700_000_000_000.1);
const STEP = 0.01;

const limited = admit({
  limit: new Limiter(new AimdLimit(), { priorities: criticality, now: clock[0] }),
  clock: () => (clock[0] += STEP),
});
const bare = admit({ clock: () => (clock[1] += STEP) });
const plain = new PlainAimd();
const limiter = new Limiter(new AimdLimit(), { priorities: criticality, now: clock[3] });

const cases = [
  {
    name: "admit + a Limiter (AIMD), priority",
    fn: (): Verdict => {
      const v = limited.check("", 1, "critical") as Verdict;
      v.release(true);
      return v;
    },
  },
  {
    name: "admit, no policy",
    fn: (): Verdict => {
      const v = bare.check("", 1, "critical") as Verdict;
      v.release(true);
      return v;
    },
  },
  {
    name: "hand-written AIMD counter (+ token object)",
    fn: (): PlainToken | undefined => {
      const t = plain.acquire((clock[2] += STEP));
      t?.pass(clock[2] + STEP / 2);
      return t;
    },
  },
  {
    name: "the Limiter alone, acquire + pass",
    fn: (): Token | Refusal => {
      const t = limiter.acquire((clock[3] += STEP), "critical");
      if (t.ok) t.pass(clock[3] + STEP / 2);
      return t;
    },
  },
] as const;

// Every case admits: a refusal would be a cheaper path, and not the one measured.
const admitted = [cases[0].fn().allowed, cases[1].fn().allowed, cases[2].fn() !== undefined, cases[3].fn().ok];
if (admitted.includes(false)) throw new Error(`admit bench: a case refused (${admitted.join(", ")})`);

// The fastest of many short rounds taken in turn: the steadier figure on a busy machine.
const best = fastest("check + release, one request at a time", cases, { rounds: 40, batch: 100_000 });
const [withLimit, floor, counter, alone] = best.map((r) => r.ns);
console.log(
  `\n  admit with a limit costs ${(withLimit - floor).toFixed(1)} ns a request over admit with no policy (${(withLimit / floor).toFixed(2)}× it), ${(withLimit / counter).toFixed(2)}× the hand-written AIMD counter, ${(withLimit / alone).toFixed(2)}× its Limiter alone`,
);
