// @tideward/breaker: one call through a healthy breaker (ask, then report a success), against
// cockatiel's SamplingBreaker policy, opossum's fire, and two plain-JavaScript rings that evaluate
// the same formula: one walking its 40 buckets every call (go-zero's way), one keeping running
// sums (the floor: no permit object, no checks). A second tideward case at 4 000 buckets shows the
// cost does not grow with the window's size.
import { SamplingBreaker, circuitBreaker, handleAll } from "cockatiel";
import CircuitBreaker from "opossum";
import { Breaker } from "@tideward/breaker";
import { seededRandom } from "@tideward/time";
import { compare } from "./harness";

const draw = seededRandom(1);
const rolls = Float64Array.from({ length: 1_024 }, () => draw());
const STEP = 0.1; // ms per call: 2 500 calls a bucket at 40 buckets, 25 at 4 000

/** The formula of the issue, over counts the caller has summed. */
function drop(total: number, accepts: number, failing: number, size: number): number {
  const w = Math.max(1.5 - ((1.5 - 1.1) * failing) / size, 1.1);
  return (total - 5 - w * accepts) / (total + 1);
}

/** A plain ring of `size` buckets that walks them all on every call, as go-zero does. */
class WalkedRing {
  readonly total: Float64Array;
  readonly success: Float64Array;
  readonly failure: Float64Array;
  head = 0;
  last = 0;
  constructor(
    readonly size: number,
    readonly width: number,
  ) {
    this.total = new Float64Array(size);
    this.success = new Float64Array(size);
    this.failure = new Float64Array(size);
  }
  slot(now: number): number {
    const i = Math.floor(now / this.width);
    if (i > this.head) {
      for (let j = Math.max(this.head + 1, i - this.size + 1); j <= i; j++) {
        const s = j % this.size;
        this.total[s] = this.success[s] = this.failure[s] = 0;
      }
      this.head = i;
    }
    return this.head % this.size;
  }
  allow(now: number, roll: number): boolean {
    const head = this.slot(now);
    let total = 0;
    let accepts = 0;
    let failing = 0;
    let working = 0;
    for (let n = 1; n <= this.size; n++) {
      const s = (head + n) % this.size;
      const ok = this.success[s];
      const bad = this.failure[s];
      total += this.total[s];
      accepts += ok;
      if (ok > 0) failing = 0;
      else if (bad > 0) failing++;
      if (bad > 0) working = 0;
      else if (ok > 0) working++;
    }
    let d = drop(total, accepts, failing, this.size);
    if (d > 0 && now - this.last < 1_000) {
      d *= (this.size - working) / this.size;
      if (roll < d) {
        this.total[head]++;
        return false;
      }
    }
    this.last = now;
    return true;
  }
  pass(now: number): void {
    const s = this.slot(now);
    this.total[s]++;
    this.success[s]++;
  }
}

/**
 * A plain ring with running sums and the runs kept up to date, in flat arrays: what the
 * breaker does, without the permit, the policy, the window abstraction or the guards.
 */
class SummedRing {
  readonly total: Float64Array;
  readonly success: Float64Array;
  readonly failure: Float64Array;
  head = 0;
  last = 0;
  sumTotal = 0;
  sumSuccess = 0;
  withSuccess = 0;
  withFailure = 0;
  failing = 0;
  working = 0;
  constructor(
    readonly size: number,
    readonly width: number,
  ) {
    this.total = new Float64Array(size);
    this.success = new Float64Array(size);
    this.failure = new Float64Array(size);
  }
  slot(now: number): number {
    const i = Math.floor(now / this.width);
    if (i > this.head) {
      const h = this.head % this.size;
      if (this.success[h] > 0) this.failing = 0;
      else if (this.failure[h] > 0) this.failing++;
      if (this.failure[h] > 0) this.working = 0;
      else if (this.success[h] > 0) this.working++;
      if (i - this.head >= this.size) {
        this.total.fill(0);
        this.success.fill(0);
        this.failure.fill(0);
        this.sumTotal = this.sumSuccess = this.withSuccess = this.withFailure = this.failing = this.working = 0;
      } else {
        for (let j = this.head + 1; j <= i; j++) {
          const s = j % this.size;
          const ok = this.success[s];
          const bad = this.failure[s];
          this.sumTotal -= this.total[s];
          this.sumSuccess -= ok;
          if (ok > 0) this.withSuccess--;
          if (bad > 0) this.withFailure--;
          if (bad === 0) {
            if (ok > 0 && this.withFailure === 0) this.working--;
          } else if (ok === 0 && this.withSuccess === 0) this.failing--;
          this.total[s] = this.success[s] = this.failure[s] = 0;
        }
      }
      this.head = i;
    }
    return this.head % this.size;
  }
  allow(now: number, roll: number): boolean {
    const h = this.slot(now);
    const ok = this.success[h];
    const bad = this.failure[h];
    const failing = ok > 0 ? 0 : bad > 0 ? this.failing + 1 : this.failing;
    let d = drop(this.sumTotal, this.sumSuccess, failing, this.size);
    if (d > 0 && now - this.last < 1_000) {
      const working = bad > 0 ? 0 : ok > 0 ? this.working + 1 : this.working;
      d *= (this.size - working) / this.size;
      if (roll < d) {
        this.total[h]++;
        this.sumTotal++;
        return false;
      }
    }
    this.last = now;
    return true;
  }
  pass(now: number): void {
    const s = this.slot(now);
    this.total[s]++;
    if (this.success[s]++ === 0) this.withSuccess++;
    this.sumTotal++;
    this.sumSuccess++;
  }
}

const small = new Breaker();
const large = new Breaker({ size: 4_000 });
const walked = new WalkedRing(40, 250);
const walkedLarge = new WalkedRing(4_000, 2.5);
const summed = new SummedRing(40, 250);
// Each case's clock lives in a typed array: a module-level `let` holding a fraction would box a
// new number on every step, an allocation of the measuring that every case would pay.
const clock = new Float64Array(5);
const [A, B, C, D, E] = [0, 1, 2, 3, 4];
let i = 0;

const cockatiel = circuitBreaker(handleAll, {
  halfOpenAfter: 10_000,
  breaker: new SamplingBreaker({ threshold: 0.5, duration: 10_000 }),
});
const answer = (): number => 42;
// opossum's own example wraps an async function; that is what its users hand it.
// eslint-disable-next-line @typescript-eslint/require-await
const opossum = new CircuitBreaker(async () => 42);

await compare("allow + pass on a healthy breaker (40 buckets over 10 s unless stated)", [
  {
    // Returns what the plain rings return, whether the call went through: a caller settles its
    // permit and drops it. (The permit is still allocated: it escapes into `pass`.)
    name: "@tideward/breaker allow + permit.pass",
    fn: () => {
      const permit = small.allow((clock[A] += STEP), rolls[i++ & 1_023] ?? 0);
      permit?.pass(clock[A]);
      return permit !== undefined;
    },
  },
  {
    // Handing each permit to the benchmark's sink, a global, adds the write barrier of storing a
    // young object into an old one: a cost of the measuring, shown here for completeness.
    name: "@tideward/breaker, permit kept in a global",
    fn: () => {
      const permit = small.allow((clock[A] += STEP), rolls[i++ & 1_023] ?? 0);
      permit?.pass(clock[A]);
      return permit;
    },
  },
  {
    name: "@tideward/breaker, 4 000 buckets",
    fn: () => {
      const permit = large.allow((clock[B] += STEP), rolls[i++ & 1_023] ?? 0);
      permit?.pass(clock[B]);
      return permit !== undefined;
    },
  },
  {
    name: "plain ring, running sums (floor, no permit)",
    fn: () => {
      const ok = summed.allow((clock[C] += STEP), rolls[i++ & 1_023] ?? 0);
      if (ok) summed.pass(clock[C]);
      return ok;
    },
  },
  {
    name: "plain ring, 40 buckets walked per call",
    fn: () => {
      const ok = walked.allow((clock[D] += STEP), rolls[i++ & 1_023] ?? 0);
      if (ok) walked.pass(clock[D]);
      return ok;
    },
  },
  {
    name: "plain ring, 4 000 buckets walked per call",
    fn: () => {
      const ok = walkedLarge.allow((clock[E] += STEP), rolls[i++ & 1_023] ?? 0);
      if (ok) walkedLarge.pass(clock[E]);
      return ok;
    },
  },
  { name: "cockatiel 3.2.1 SamplingBreaker execute (sync fn)", fn: () => cockatiel.execute(answer) },
  { name: "opossum 9.0.0 fire (async fn, defaults)", fn: () => opossum.fire() },
]);
opossum.shutdown();
