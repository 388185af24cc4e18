// Bytes allocated per call of one case, as V8 accounts them: run in a child process of its own
// with --trace-gc-nvp (see `allocation` in harness.ts), it warms the case up, prints MARK, then
// makes CALLS calls; the parent sums the `allocated=` of every collection after the mark. Each
// case is a loop of its own, optimised whole as a caller's code would be, its clock in a typed
// array so that the measuring boxes no number. The asynchronous cases (a guarded call, and its
// peers) are awaited one after another, as a caller's loop would, and make fewer calls.
import { ExponentialBackoff, SamplingBreaker, circuitBreaker, handleAll, retry, wrap } from "cockatiel";
import CircuitBreaker from "opossum";
import { Breaker, client } from "@tideward/breaker";
import { guard } from "@tideward/guard";
import { Bucket, Gcra } from "@tideward/limiters";
import { Shedder } from "@tideward/shedder";
import { systemClock } from "@tideward/time";
import { RATE, chainOf, floorOf } from "./floors";
import { Plain } from "./plain-shedder";
import { SummedRing } from "./rings";

export const CALLS = 20_000_000;
/** Calls of an asynchronous case: each costs a few hundred nanoseconds, and a promise or two. */
export const ASYNC_CALLS = 2_000_000;
const clock = new Float64Array(1);
const STEP = 0.1;
/** Where the kept case keeps each permit: a global, as a caller holding on to permits would. */
export const held: unknown[] = [undefined];

const cases: Record<string, (n: number) => number | Promise<number>> = {
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
  // The client preset, outage after outage: 1.2 s of failures (longer than its window), then
  // 0.8 s of successes, so it is half-open in every outage, the probe fires through it, and the
  // probe's success clears the window at every recovery (once every 20 000 calls). Most calls of
  // an outage are refused, which is the point here: it returns every call asked, so its figure is
  // bytes per allow, a refusal included, and shows that closing the window allocates nothing.
  "breaker-half-open": (n) => {
    const breaker = new Breaker(client);
    for (let k = 0; k < n; k++) {
      const permit = breaker.allow((clock[0] += STEP), 0.5);
      if (permit === undefined) continue;
      if (clock[0] % 2_000 < 1_200) permit.fail(clock[0]);
      else permit.pass(clock[0]);
    }
    return n;
  },
  // go-zero's preset throttling a dead backend: 20 failures, then every call refused but the
  // probe (one a second). Every refusal is counted in the window: it returns every call asked, so
  // its figure is bytes per refusal, which should be none.
  "breaker-throttled": (n) => {
    const breaker = new Breaker({ protection: 0 }, clock[0]);
    for (let k = 0; k < 20; k++) breaker.allow(clock[0], 0.999)?.fail(clock[0]);
    let refused = 0;
    for (let k = 0; k < n; k++) {
      const permit = breaker.allow((clock[0] += STEP), 0.5);
      if (permit === undefined) refused++;
      else permit.fail(clock[0]);
    }
    return refused > 0 ? n : 0;
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

// A guarded call and its peers, around an async function that resolves at once (guard.bench.ts).
// eslint-disable-next-line @typescript-eslint/require-await -- an async function that resolves at once is the point
const answer = async (): Promise<number> => 42;
const awaited =
  (call: () => Promise<number>) =>
  async (n: number): Promise<number> => {
    let passed = 0;
    for (let k = 0; k < n; k++) if ((await call()) === 42) passed++;
    return passed;
  };
const asyncCases: Record<string, () => () => Promise<number>> = {
  // The loop and the function alone: what every case below pays before its own work.
  "async-loop": () => answer,
  guard: () =>
    guard(answer, { breaker: new Breaker({}, systemClock()), bucket: new Bucket(RATE, { now: systemClock() }) }),
  "guard-retry": () =>
    guard(answer, {
      breaker: new Breaker({}, systemClock()),
      bucket: new Bucket(RATE, { now: systemClock() }),
      retry: { attempts: 3 },
    }),
  "guard-timeout": () =>
    guard(answer, {
      breaker: new Breaker({}, systemClock()),
      bucket: new Bucket(RATE, { now: systemClock() }),
      timeout: 1_000,
    }),
  "guard-floor": () => floorOf(answer),
  "guard-chain": () => chainOf(answer),
  cockatiel: () => {
    const policy = wrap(
      retry(handleAll, { maxAttempts: 2, backoff: new ExponentialBackoff() }),
      circuitBreaker(handleAll, {
        halfOpenAfter: 10_000,
        breaker: new SamplingBreaker({ threshold: 0.5, duration: 10_000 }),
      }),
    );
    return () => policy.execute(answer);
  },
  opossum: () => {
    const breaker = new CircuitBreaker(answer);
    return () => breaker.fire();
  },
};
for (const [key, make] of Object.entries(asyncCases)) cases[key] = (n) => awaited(make())(n);

const name = process.argv[2] ?? "";
const run = cases[name];
if (run === undefined)
  throw new RangeError(`allocation: no case named ${JSON.stringify(name)}; there are ${Object.keys(cases).join(", ")}`);
const calls = name in asyncCases ? ASYNC_CALLS : CALLS;
await run(calls / 10);
console.log("MARK");
const passed = await run(calls);
console.log(`CALLS ${calls}`);
if (passed !== calls) throw new Error(`allocation ${name}: ${calls - passed} calls refused; every call should pass`);
process.exit(0); // opossum's timers would otherwise hold the process for its window
