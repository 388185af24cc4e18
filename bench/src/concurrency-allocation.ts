// Bytes allocated per acquire + pass of the concurrency limiter and of its hand-written baseline,
// measured as allocation.ts measures (run by harness.allocation in a child process with
// --trace-gc-nvp): warm up, print MARK, make CALLS calls, each loop its own, the clock in a typed array.
import { AimdLimit, Limiter, criticality } from "@tideward/concurrency";
import { PlainAimd } from "./plain-aimd";

const CALLS = 20_000_000;
const clock = new Float64Array(1);
const STEP = 0.1;

const cases: Record<string, (n: number) => number> = {
  limiter: (n) => {
    const limiter = new Limiter(new AimdLimit());
    let passed = 0;
    for (let k = 0; k < n; k++) {
      const token = limiter.acquire((clock[0] += STEP));
      if (token.ok) {
        token.pass(clock[0] + 0.05);
        passed++;
      }
    }
    return passed;
  },
  "limiter-priority": (n) => {
    const limiter = new Limiter(new AimdLimit(), { priorities: criticality });
    let passed = 0;
    for (let k = 0; k < n; k++) {
      const token = limiter.acquire((clock[0] += STEP), "sheddable");
      if (token.ok) {
        token.pass(clock[0] + 0.05);
        passed++;
      }
    }
    return passed;
  },
  plain: (n) => {
    const plain = new PlainAimd();
    let passed = 0;
    for (let k = 0; k < n; k++) {
      const token = plain.acquire((clock[0] += STEP));
      if (token !== undefined) {
        token.pass(clock[0] + 0.05);
        passed++;
      }
    }
    return passed;
  },
  // A limit held full: every call refused, and a refusal allocates nothing.
  refused: (n) => {
    const limiter = new Limiter(new AimdLimit(), { priorities: criticality });
    while (limiter.acquire(0, 0).ok);
    let refused = 0;
    for (let k = 0; k < n; k++) if (!limiter.acquire((clock[0] += STEP), k & 3).ok) refused++;
    return refused;
  },
};

const name = process.argv[2] ?? "";
const run = cases[name];
if (run === undefined)
  throw new RangeError(
    `concurrency-allocation: no case named ${JSON.stringify(name)}; there are ${Object.keys(cases).join(", ")}`,
  );
run(CALLS / 10);
console.log("MARK");
const answered = run(CALLS);
console.log(`CALLS ${CALLS}`);
if (answered !== CALLS) throw new Error(`concurrency-allocation ${name}: ${CALLS - answered} calls went the other way`);
