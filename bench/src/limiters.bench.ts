// @tideward/limiters on the hot path: Bucket.take against limiter 3.0.0's
// TokenBucket.tryRemoveTokens and a plain-JS token bucket; Period.take against a plain
// fixed-window counter; Sliding.take at quotas of 1 000 and 100 000 (its cost should not move).
//
// The workload is the same for every case of a group: a synthetic clock advancing a fixed step
// per call, offering twice what the limit admits, so half the calls pass and half are refused.
// `limiter` reads its own clock (performance.now() inside getMilliseconds()) and cannot be
// handed one; a second group therefore gives tideward the same chore for a like-for-like figure.
import { TokenBucket } from "limiter";
import { Bucket, Period, Sliding } from "@tideward/limiters";
import { compare } from "./harness";

/** The textbook token bucket in plain JavaScript, taking `now` like ours: the floor to beat. */
class PlainBucket {
  private tokens: number;
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
let t1 = 0;
let t2 = 0;
await compare("Bucket.take, synthetic clock (limiter reads its own)", [
  { name: "@tideward/limiters Bucket.take(now)", fn: () => bucket.take((t1 += STEP)) },
  { name: "plain-JS token bucket take(now)", fn: () => plainBucket.take((t2 += STEP)) },
  { name: "limiter 3.0.0 TokenBucket.tryRemoveTokens(1)", fn: () => peer.tryRemoveTokens(1) },
]);

const clocked = new Bucket(RATE, { burst: 1_000, now: performance.now() });
const clockedPlain = new PlainBucket(RATE, 1_000);
await compare("Bucket.take, every case reading performance.now()", [
  { name: "@tideward/limiters Bucket.take(performance.now())", fn: () => clocked.take(performance.now()) },
  { name: "plain-JS token bucket take(performance.now())", fn: () => clockedPlain.take(performance.now()) },
  { name: "limiter 3.0.0 TokenBucket.tryRemoveTokens(1)", fn: () => peer.tryRemoveTokens(1) },
]);

// 100 000 a second in periods of 10 ms (1 000 each), offered 200 000 a second.
const period = new Period(1_000, 10);
const plainWindow = new PlainWindow(1_000, 10);
let t3 = 0;
let t4 = 0;
await compare("Period.take (fixed window, 1 000 per 10 ms)", [
  { name: "@tideward/limiters Period.take(now)", fn: () => period.take((t3 += STEP)) },
  { name: "plain-JS fixed-window counter", fn: () => plainWindow.take((t4 += STEP)) },
]);

// The same rate as a sliding window at two quotas: 1 000 per 10 ms and 100 000 per second.
const small = new Sliding(1_000, 10);
const large = new Sliding(100_000, 1_000);
let t5 = 0;
let t6 = 0;
await compare("Sliding.take: cost per call at quota 1 000 vs 100 000", [
  { name: "@tideward/limiters Sliding.take, quota 1 000", fn: () => small.take((t5 += STEP)) },
  { name: "@tideward/limiters Sliding.take, quota 100 000", fn: () => large.take((t6 += STEP)) },
]);
