// @tideward/breaker: one call through a healthy breaker (ask, then report a success), against
// cockatiel's SamplingBreaker policy, opossum's fire, and two plain-JavaScript rings that evaluate
// the same formula: one walking its 40 buckets every call (go-zero's way), one keeping running
// sums (the floor: no permit object, no checks). Two more tideward cases at 4 000 buckets show the
// cost does not grow with the window's size: one over the same 10 s (a new bucket every 25 calls
// instead of every 2 500), one of 250 ms buckets like the preset's (the same calls per bucket).
import { SamplingBreaker, circuitBreaker, handleAll } from "cockatiel";
import CircuitBreaker from "opossum";
import { Breaker, client } from "@tideward/breaker";
import { seededRandom } from "@tideward/time";
import { allocation, compare, fastest } from "./harness";
import { SummedRing, WalkedRing } from "./rings";

const draw = seededRandom(1);
const rolls = Float64Array.from({ length: 1_024 }, () => draw());
const STEP = 0.1; // ms per call: 2 500 calls a bucket at 40 buckets, 25 at 4 000

const small = new Breaker();
// The same at Date.now() magnitudes, where a float step is 2^-12 ms: "the same bucket" is still
// one comparison with the window's own boundary.
const EPOCH = 1_700_000_000_000.1;
const epoch = new Breaker({}, EPOCH);
const large = new Breaker({ size: 4_000 });
const long = new Breaker({ size: 4_000, window: 1_000_000 });
// The client preset: ten buckets over 750 ms, so a new bucket every 750 calls here, and the
// half-open check on each bucket's first success.
const guarded = new Breaker(client);
const walked = new WalkedRing(40, 250);
const walkedLarge = new WalkedRing(4_000, 2.5);
const summed = new SummedRing(40, 250);
// Each case's clock lives in a typed array: a module-level `let` holding a fraction would box a
// new number on every step, an allocation of the measuring that every case would pay.
const clock = new Float64Array(8);
const [A, B, C, D, E, F, G, H] = [0, 1, 2, 3, 4, 5, 6, 7];
clock[G] = EPOCH;
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
    name: "@tideward/breaker on a Date.now() clock",
    fn: () => {
      const permit = epoch.allow((clock[G] += STEP), rolls[i++ & 1_023] ?? 0);
      permit?.pass(clock[G]);
      return permit !== undefined;
    },
  },
  {
    name: "@tideward/breaker, the client preset",
    fn: () => {
      const permit = guarded.allow((clock[H] += STEP), rolls[i++ & 1_023] ?? 0);
      permit?.pass(clock[H]);
      return permit !== undefined;
    },
  },
  {
    name: "@tideward/breaker, 4 000 buckets of 250 ms",
    fn: () => {
      const permit = long.allow((clock[F] += STEP), rolls[i++ & 1_023] ?? 0);
      permit?.pass(clock[F]);
      return permit !== undefined;
    },
  },
  {
    name: "@tideward/breaker, 4 000 buckets over 10 s",
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

// The target, against the floor: allow + pass at most 2× the plain ring's cost. Rounds of each
// taken in turn, the order alternating, the quietest of each kept: on a shared machine a case
// measured alone for 400 ms (the table above) can catch a burst of another tenant's work. Then
// again once another breaker in the process has throttled and gone half-open, so that allow's
// code has met its throttle (V8 compiles one allow for every breaker).
const target = (title: string): void => {
  const [ours, preset, plain] = fastest(title, [
    {
      name: "@tideward/breaker allow + permit.pass",
      fn: () => {
        const permit = small.allow((clock[A] += STEP), rolls[i++ & 1_023] ?? 0);
        permit?.pass(clock[A]);
        return permit !== undefined;
      },
    },
    {
      name: "@tideward/breaker, the client preset",
      fn: () => {
        const permit = guarded.allow((clock[H] += STEP), rolls[i++ & 1_023] ?? 0);
        permit?.pass(clock[H]);
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
  ]);
  console.log(
    `  allow + pass over the floor: ${(ours.ns / plain.ns).toFixed(2)}×, the client preset ${(preset.ns / plain.ns).toFixed(2)}× (target: at most 2×)`,
  );
};
target("allow + pass against the floor, a healthy process");
{
  // A client breaker through outage after outage: 1.2 s failing, 0.8 s healthy, every 2 s.
  const b = new Breaker(client, clock[B]);
  for (let k = 0; k < 2_000_000; k++) {
    const permit = b.allow((clock[B] += STEP), rolls[k & 1_023] ?? 0);
    if (permit === undefined) continue;
    if (clock[B] % 2_000 < 1_200) permit.fail(clock[B]);
    else permit.pass(clock[B]);
  }
}
target("allow + pass against the floor, after another breaker has throttled and gone half-open");

// Allocation per allow + pass, read from V8's own account of what each collection found allocated
// (--trace-gc-nvp), each case in a child process of its own: see allocation.ts.
console.log("\nbytes allocated per allow + pass (a permit is one object of 32 bytes)");
for (const [name, label] of [
  ["breaker", "@tideward/breaker, permit settled and dropped"],
  ["breaker-kept", "@tideward/breaker, permit kept in a global"],
  ["breaker-half-open", "@tideward/breaker, client, half-open every 2 s (per allow)"],
  ["breaker-throttled", "@tideward/breaker, sre, throttling a dead backend (per allow)"],
  ["floor", "plain ring, running sums (floor)"],
] as const) {
  console.log(`  ${label.padEnd(48)} ${allocation(name).toFixed(1)}`);
}
