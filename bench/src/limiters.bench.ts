// @tideward/limiters on the hot path: Bucket.take against limiter 3.0.0's
// TokenBucket.tryRemoveTokens and a plain-JS token bucket; Period.take against a plain
// fixed-window counter; Sliding.take at quotas of 1 000 and 100 000 (its cost should not move);
// and the bytes Bucket.take and Gcra.take allocate (none), from V8's own accounting.
//
// The machine is shared and noisy, so every group runs ROUNDS times (default 3) in one process
// and the file ends with each ratio's median over the rounds. A second figure follows, robust
// to a loaded machine: every case runs as its own loop in many short batches, interleaved, and
// keeps its fastest batch (a batch nobody preempted); its ratios are the ones to report.
//
// The workload is the same for every case of a group: a synthetic clock advancing a fixed step
// per call, offering twice what the limit admits, so half the calls pass and half are refused.
// `limiter` reads its own clock (performance.now() inside getMilliseconds()) and cannot be
// handed one; a second group therefore gives tideward the same chore for a like-for-like figure.
import { TokenBucket } from "limiter";
import { Bucket, Period, Sliding } from "@tideward/limiters";
import { allocation, compare, fastest } from "./harness";
import type { Case, Result } from "./harness";

// Each case's clock lives in a typed array: a module-level `let` holding a fraction would box a
// new number on every step, an allocation of the measuring that every case would pay.
const clock = new Float64Array(8);

const ROUNDS = Number(process.env.ROUNDS ?? 3);
const medians = new Map<string, { title: string; first: string; ratios: Map<string, number[]> }>();

/** Runs `compare` ROUNDS times over the same cases, keeping each case's cost ratio to the first. */
async function group(title: string, cases: readonly Case[]): Promise<void> {
  const entry = { title, first: cases[0]?.name ?? "", ratios: new Map<string, number[]>() };
  medians.set(title, entry);
  for (let round = 1; round <= ROUNDS; round++) {
    const results: Result[] = await compare(`${title} — round ${round}/${ROUNDS}`, cases);
    const first = results[0];
    for (const r of results.slice(1)) entry.ratios.set(r.name, [...(entry.ratios.get(r.name) ?? []), r.ns / first.ns]);
  }
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** The textbook token bucket in plain JavaScript, taking `now` like ours: the floor to beat. */
class PlainBucket {
  private tokens = 0;
  private at = 0;
  private readonly perMs: number;
  constructor(
    rate: number,
    private readonly burst: number,
  ) {
    this.tokens = burst;
    this.perMs = rate / 1_000;
  }
  take(now: number): boolean {
    if (now > this.at) {
      this.tokens = Math.min(this.burst, this.tokens + (now - this.at) * this.perMs);
      this.at = now;
    }
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

/** A plain fixed-window counter: a period opens on the first call after the last one closed. */
class PlainWindow {
  private end = -Infinity;
  private count = 0;
  constructor(
    private readonly quota: number,
    private readonly period: number,
  ) {}
  take(now: number): boolean {
    if (now >= this.end) {
      this.end = now + this.period;
      this.count = 0;
    }
    if (this.count >= this.quota) return false;
    this.count++;
    return true;
  }
}

// 100 000 tokens a second offered 200 000 calls a second (a call every 5 µs).
const RATE = 100_000;
const STEP = 0.005;

const bucket = new Bucket(RATE, { burst: 1_000 });
const plainBucket = new PlainBucket(RATE, 1_000);
const peer = new TokenBucket({ bucketSize: 1_000, tokensPerInterval: RATE, interval: "second" });
await group("Bucket.take, synthetic clock (limiter reads its own)", [
  { name: "@tideward/limiters Bucket.take(now)", fn: () => bucket.take((clock[1] += STEP)) },
  { name: "plain-JS token bucket take(now)", fn: () => plainBucket.take((clock[2] += STEP)) },
  { name: "limiter 3.0.0 TokenBucket.tryRemoveTokens(1)", fn: () => peer.tryRemoveTokens(1) },
]);

const clocked = new Bucket(RATE, { burst: 1_000, now: performance.now() });
const clockedPlain = new PlainBucket(RATE, 1_000);
await group("Bucket.take, every case reading performance.now()", [
  { name: "@tideward/limiters Bucket.take(performance.now())", fn: () => clocked.take(performance.now()) },
  { name: "plain-JS token bucket take(performance.now())", fn: () => clockedPlain.take(performance.now()) },
  { name: "limiter 3.0.0 TokenBucket.tryRemoveTokens(1)", fn: () => peer.tryRemoveTokens(1) },
]);

// 100 000 a second in periods of 10 ms (1 000 each), offered 200 000 a second.
const period = new Period(1_000, 10);
const plainWindow = new PlainWindow(1_000, 10);
await group("Period.take (fixed window, 1 000 per 10 ms)", [
  { name: "@tideward/limiters Period.take(now)", fn: () => period.take((clock[3] += STEP)) },
  { name: "plain-JS fixed-window counter", fn: () => plainWindow.take((clock[4] += STEP)) },
]);

// The same rate as a sliding window at two quotas: 1 000 per 10 ms and 100 000 per second.
const small = new Sliding(1_000, 10);
const large = new Sliding(100_000, 1_000);
await group("Sliding.take: cost per call at quota 1 000 vs 100 000", [
  { name: "@tideward/limiters Sliding.take, quota 1 000", fn: () => small.take((clock[5] += STEP)) },
  { name: "@tideward/limiters Sliding.take, quota 100 000", fn: () => large.take((clock[6] += STEP)) },
]);

console.log(`\nMedian over ${ROUNDS} rounds: the peer's cost per call ÷ tideward's (above 1: tideward is faster)`);
for (const { title, first, ratios } of medians.values()) {
  console.log(`  ${title}`);
  for (const [name, rs] of ratios)
    console.log(`    ${name}: ${median(rs).toFixed(2)}× ${first}  (rounds: ${rs.map((r) => r.toFixed(2)).join(", ")})`);
}

// The same operations timed as the fastest of interleaved rounds, the steadier figure on a busy machine.
const TRIALS = Number(process.env.TRIALS ?? 150);

{
  const b = new Bucket(RATE, { burst: 1_000 });
  const plain = new PlainBucket(RATE, 1_000);
  const lim = new TokenBucket({ bucketSize: 1_000, tokensPerInterval: RATE, interval: "second" });
  let tb = 0;
  let tp = 0;
  fastest(
    "Bucket.take",
    [
      { name: "@tideward/limiters Bucket.take(now)", fn: () => b.take((tb += STEP)) },
      { name: "plain-JS token bucket take(now)", fn: () => plain.take((tp += STEP)) },
      { name: "limiter 3.0.0 TokenBucket.tryRemoveTokens(1)", fn: () => lim.tryRemoveTokens(1) },
    ],
    { rounds: TRIALS },
  );
}

{
  const p = new Period(1_000, 10);
  const plain = new PlainWindow(1_000, 10);
  let tt = 0;
  let tp = 0;
  fastest(
    "Period.take",
    [
      { name: "@tideward/limiters Period.take(now)", fn: () => p.take((tt += STEP)) !== "over" },
      { name: "plain-JS fixed-window counter", fn: () => plain.take((tp += STEP)) },
    ],
    { rounds: TRIALS },
  );
}

{
  const small = new Sliding(1_000, 10);
  const large = new Sliding(100_000, 1_000);
  let ts = 0;
  let tl = 0;
  fastest(
    "Sliding.take",
    [
      { name: "@tideward/limiters Sliding.take, quota 1 000", fn: () => small.take((ts += STEP)) },
      { name: "@tideward/limiters Sliding.take, quota 100 000", fn: () => large.take((tl += STEP)) },
    ],
    { rounds: TRIALS },
  );
}

// Bytes a take allocates, from V8's own accounting, each in a process of its own (allocation.ts).
console.log("\nBytes allocated per take (V8's accounting, 20 000 000 calls, every one passing)");
for (const [label, name] of [
  ["@tideward/limiters Bucket.take(now)", "bucket"],
  ["@tideward/limiters Gcra.take(now)", "gcra"],
] as const) {
  console.log(`  ${label.padEnd(48)} ${allocation(name).toFixed(1)}`);
}
