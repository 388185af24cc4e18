// Bytes allocated per call of one case, as V8 accounts them: run in a child process of its own
// with --trace-gc-nvp (see `allocation` in harness.ts), it warms the case up, prints MARK, then
// makes CALLS calls; the parent sums the `allocated=` of every collection after the mark. Each
// case is a loop of its own, optimised whole as a caller's code would be, its clock in a typed
// array so that the measuring boxes no number.
import { Breaker } from "@tideward/breaker";
import { Bucket, Gcra } from "@tideward/limiters";
import { Shedder } from "@tideward/shedder";
import { Plain } from "./plain-shedder";
import { SummedRing } from "./rings";

export const CALLS = 20_000_000;
const clock = new Float64Array(1);
const STEP = 0.1;
/** Where the kept case keeps each permit: a global, as a caller holding on to permits would. */
export const held: unknown[] = [undefined];

const cases: Record<string, (n: number) => number> = {
  breaker: (n) => {
    const breaker = new Breaker();
    let passed = 0;
    for (let k = 0; k < n; k++) {
      const permit = breaker.allow((clock[0] += STEP), 0.5);
      permit?.pass(clock[0]);
      if (permit !== undefined) passed++;
    }
    return passed;
  },
  "breaker-kept": (n) => {
    const breaker = new Breaker();
    let passed = 0;
    for (let k = 0; k < n; k++) {
      const permit = breaker.allow((clock[0] += STEP), 0.5);
      permit?.pass(clock[0]);
      held[0] = permit;
      if (permit !== undefined) passed++;
    }
    return passed;
  },
  floor: (n) => {
    const ring = new SummedRing(40, 250);
    let passed = 0;
    for (let k = 0; k < n; k++) {
      if (ring.allow((clock[0] += STEP), 0.5)) {
        ring.pass(clock[0]);
        passed++;
      }
    }
    return passed;
  },
  shedder: (n) => {
    const shedder = new Shedder();
    let passed = 0;
    for (let k = 0; k < n; k++) {
      const ticket = shedder.allow((clock[0] += STEP), 500);
      ticket?.pass(clock[0] + 0.005);
      if (ticket !== undefined) passed++;
    }
    return passed;
  },
  "shedder-plain": (n) => {
    const plain = new Plain();
    let passed = 0;
    for (let k = 0; k < n; k++) {
      const ticket = plain.allow((clock[0] += STEP), 500);
      ticket?.pass(clock[0] + 0.005);
      if (ticket !== undefined) passed++;
    }
    return passed;
  },
};

// The limiters' take, refilled faster than it is drained so every call passes.
cases.bucket = (n) => {
  const bucket = new Bucket(1_000_000, { burst: 1_000 });
  let passed = 0;
  for (let k = 0; k < n; k++) if (bucket.take((clock[0] += STEP))) passed++;
  return passed;
};
cases.gcra = (n) => {
  const flow = new Gcra(1_000_000, { burst: 1_000 });
  let passed = 0;
  for (let k = 0; k < n; k++) if (flow.take((clock[0] += STEP))) passed++;
  return passed;
};

const name = process.argv[2] ?? "";
const run = cases[name];
if (run === undefined) throw new RangeError(`allocation: no case named ${JSON.stringify(name)}; there are ${Object.keys(cases).join(", ")}`);
run(CALLS / 10);
console.log("MARK");
const passed = run(CALLS);
console.log(`CALLS ${CALLS}`);
if (passed !== CALLS) throw new Error(`allocation ${name}: ${CALLS - passed} calls refused; every call should pass`);
