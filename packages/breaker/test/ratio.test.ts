// Hand-computed cases: counts put into given buckets give the ratio the formula gives, worked out
// here by hand. The preset has 40 buckets of 250 ms, k 1.5 decaying to 1.1, protection 5:
//   w = max(k − (k − floor)·failing/size, floor); drop = (total − protection − w·accepts)/(total + 1);
//   ratio = drop·(size − working)/size, or 0 when drop ≤ 0.
import { describe, expect, it } from "vitest";
import { Breaker } from "@tideward/breaker";
import { feed, refuse } from "./helpers";

describe("ratio, hand-computed", () => {
  it("is 0 for an empty window", () => {
    expect(new Breaker().ratio(0)).toBe(0);
    expect(new Breaker({}, 5_000).ratio(123_456)).toBe(0);
  });

  it("protection: five failures cost nothing, the sixth starts the throttle", () => {
    const b = new Breaker();
    feed(b, 0, 0, 5);
    expect(b.ratio(0)).toBe(0); // (5 − 5 − 0)/6 = 0
    feed(b, 0, 0, 1);
    expect(b.ratio(0)).toBeCloseTo(1 / 7, 12); // (6 − 5)/7, no working buckets to scale it
    feed(b, 0, 0, 4);
    expect(b.ratio(0)).toBeCloseTo(5 / 11, 12);
  });

  it("a success pays for k = 1.5 calls", () => {
    const b = new Breaker();
    feed(b, 0, 10, 0);
    feed(b, 250, 0, 12); // a mixed history: 10 successes, then a bucket of failures
    // total 22, accepts 10, failing 1 (the last bucket), working 0:
    // w = 1.5 − 0.4·1/40 = 1.49; drop = (22 − 5 − 14.9)/23 = 2.1/23
    expect(b.ratio(250)).toBeCloseTo(2.1 / 23, 12);
  });

  it("decay of k: each all-failure bucket at the head lowers what old successes are worth", () => {
    const b = new Breaker();
    feed(b, 0, 4, 0);
    for (let i = 1; i <= 10; i++) feed(b, i * 250, 0, 3);
    // total 34, accepts 4, failing 10: w = 1.5 − 0.4·10/40 = 1.4; drop = (34 − 5 − 5.6)/35.
    // Without the decay (w = 1.5) it would be 23/35.
    expect(b.ratio(2_500)).toBeCloseTo(23.4 / 35, 12);
  });

  it("decay of k down towards floor, then the old successes age out of the window", () => {
    const b = new Breaker();
    feed(b, 0, 10, 0);
    for (let i = 1; i < 40; i++) feed(b, i * 250, 0, 1);
    // total 49, accepts 10, failing 39: w = 1.5 − 0.4·39/40 = 1.11; drop = (49 − 5 − 11.1)/50
    expect(b.ratio(9_750)).toBeCloseTo(32.9 / 50, 12);
    // At 10 s the bucket of successes has left: total 39, accepts 0, drop = 34/40.
    expect(b.ratio(10_000)).toBeCloseTo(34 / 40, 12);
    b.allow(10_000, 0.999); // acting at 10 s (a pass) leaves the same reading
    expect(b.ratio(10_000)).toBeCloseTo(34 / 40, 12);
  });

  it("a custom policy: k 2 decaying to 1 over 4 buckets", () => {
    const b = new Breaker({ k: 2, floor: 1, size: 4, window: 1_000 });
    feed(b, 0, 8, 0);
    for (const t of [250, 500, 750]) feed(b, t, 0, 4);
    // total 20, accepts 8, failing 3: w = 2 − 1·3/4 = 1.25; drop = (20 − 5 − 10)/21
    expect(b.ratio(750)).toBeCloseTo(5 / 21, 12);
  });

  it("working scale: all-success buckets at the head scale the drop down by (size − working)/size", () => {
    const b = new Breaker();
    feed(b, 0, 0, 20);
    for (const t of [250, 500, 750]) feed(b, t, 1, 0);
    // total 23, accepts 3, failing 0, working 3: drop = (23 − 5 − 4.5)/24 = 0.5625, × 37/40
    expect(b.ratio(750)).toBeCloseTo(0.5625 * (37 / 40), 12);
  });

  it("a drop-only bucket neither extends nor resets the failing run", () => {
    const b = new Breaker();
    feed(b, 0, 2, 0);
    feed(b, 250, 0, 12);
    expect(refuse(b, 500, 4)).toBe(4); // bucket 2 holds only drops
    feed(b, 750, 0, 3);
    // total 2 + 12 + 4 + 3 = 21, accepts 2, failing 2 (buckets 1 and 3), working 0:
    // w = 1.5 − 0.4·2/40 = 1.48; drop = (21 − 5 − 2.96)/22. (failing 1 or 3 would give 13.02 or 13.06.)
    expect(b.ratio(750)).toBeCloseTo(13.04 / 22, 12);
  });

  it("a drop-only bucket neither extends nor resets the working run", () => {
    const b = new Breaker();
    feed(b, 0, 0, 20);
    feed(b, 250, 1, 0);
    expect(refuse(b, 500, 3)).toBe(3);
    feed(b, 750, 1, 0);
    // total 20 + 1 + 3 + 1 = 25, accepts 2, failing 0, working 2: (25 − 5 − 3)/26 × 38/40
    expect(b.ratio(750)).toBeCloseTo((17 / 26) * (38 / 40), 12);
  });

  it("a mixed bucket resets both runs", () => {
    const b = new Breaker();
    feed(b, 0, 3, 0);
    feed(b, 250, 1, 8);
    // total 12, accepts 4, failing 0, working 0: (12 − 5 − 6)/13, unscaled
    expect(b.ratio(250)).toBeCloseTo(1 / 13, 12);
  });

  it("empty buckets in between neither extend nor reset the runs", () => {
    const b = new Breaker();
    feed(b, 0, 0, 20);
    feed(b, 250, 2, 0);
    feed(b, 2_000, 2, 0); // buckets 2–7 stay empty
    // total 24, accepts 4, working 2: (24 − 5 − 6)/25 × 38/40; an empty current bucket changes nothing
    expect(b.ratio(2_000)).toBeCloseTo((13 / 25) * (38 / 40), 12);
    expect(b.ratio(2_400)).toBeCloseTo((13 / 25) * (38 / 40), 12);
  });

  it("a gap longer than the window forgets everything, the runs included", () => {
    // k under 1 with no protection throttles even a healthy backend, which lets the working run
    // show. Bucket 0 fails, bucket 1 succeeds, then a gap of nine buckets sweeps both out.
    const b = new Breaker({ k: 0.5, floor: 0.5, protection: 0, size: 2, window: 2 });
    feed(b, 0, 0, 1);
    feed(b, 1, 1, 0);
    feed(b, 10, 4, 0);
    // Only bucket 10 counts: total 4, accepts 4, working 1: (4 − 0 − 2)/5 = 0.4, × (2 − 1)/2
    expect(b.ratio(10)).toBeCloseTo(0.2, 12);
  });

  it("allow refuses exactly when the roll falls under the ratio", () => {
    const make = (): Breaker => {
      const b = new Breaker();
      feed(b, 0, 0, 20);
      for (const t of [250, 500, 750]) feed(b, t, 1, 0);
      return b;
    };
    const ratio = make().ratio(750);
    expect(make().allow(750, ratio - 1e-12)).toBeUndefined();
    expect(make().allow(750, ratio)).toBeDefined();
  });
});
