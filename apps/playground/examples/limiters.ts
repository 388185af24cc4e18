// The burst table: one burst of forty calls every two seconds, offered to a token bucket, a
// sliding window and an aligned period, all with a quota of twenty a second.
//
// The timing, chosen so every number comes out of the algorithms rather than out of rounding:
// burst k fires forty calls 1.5 ms apart starting 30 ms before the second turns over at
// 2 000·k + 1 000 ms, so calls 0–19 land at 970 … 998.5 ms into their second and calls 20–39 at
// 1 000 … 1 028.5 ms — exactly twenty on each side of the boundary, straddling it.
// - bucket: it starts (and, after the 1.9 s lull, is again) full with 20 tokens. The burst lasts
//   58.5 ms, refilling 58.5 × 20/1000 = 1.17 tokens: the saved twenty pass, then one more once
//   call 34 arrives (at 20 + 34 × 1.5 × 0.02 = 21.02 tokens available, no tie to round), so 21.
// - sliding: all forty fall within one second, so exactly twenty pass; the previous burst is
//   two seconds old, long out of the window.
// - period: aligned on whole seconds, twenty pass in the period before the boundary and a
//   fresh twenty in the one that opens on it, so all forty pass.
import { Bucket, Period, Sliding } from "@tideward/limiters";

/** Calls in each burst. */
const CALLS = 40;
/** Milliseconds between the calls of a burst. */
const SPACING = 1.5;
/** Milliseconds between bursts. */
const EVERY = 2_000;
/** How many bursts to offer. */
const BURSTS = 4;
/** Calls a second each limiter allows. */
const QUOTA = 20;

/** Returns the lines this example prints: what is offered, then the burst table (21 / 20 / 40). */
export function main(): string[] {
  const bucket = new Bucket(QUOTA); // 20 tokens a second, a burst of 20, full at 0 ms
  const sliding = new Sliding(QUOTA, 1_000); // 20 in any one-second stretch
  const period = new Period(QUOTA, 1_000, { align: true }); // 20 in each whole second

  const lines = [
    `${CALLS} calls offered in each of ${BURSTS} bursts, one every ${EVERY / 1_000} s, straddling a second boundary; quota ${QUOTA} a second for each limiter`,
    `calls let through of the ${CALLS} in each burst:`,
    "burst    bucket  sliding  period",
  ];
  for (let k = 0; k < BURSTS; k++) {
    const boundary = k * EVERY + 1_000;
    const start = boundary - (CALLS / 2) * SPACING; // half the calls before the boundary
    let b = 0;
    let s = 0;
    let p = 0;
    for (let i = 0; i < CALLS; i++) {
      const now = start + i * SPACING;
      if (bucket.take(now)) b++;
      if (sliding.take(now)) s++;
      if (period.take(now) !== "over") p++;
    }
    lines.push(`${`burst ${k}`.padEnd(9)}${String(b).padEnd(8)}${String(s).padEnd(9)}${p}`);
  }
  return lines;
}
