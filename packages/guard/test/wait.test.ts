// Callers waiting on a bucket with maxWait: served in arrival order, each at the instant its
// token lands, refused only when that instant would pass maxWait (or the deadline).
import { describe, expect, it } from "vitest";
import { guard, isRefusal } from "@tideward/guard";
import { Bucket } from "@tideward/limiters";
import { Scheduler } from "./scheduler";

const STARTS = [0, 1_700_000_000_123.375];

describe.each(STARTS)("waiting for a token with the clock at %d", (t0) => {
  /** `count` callers at once on a bucket of 10 a second, burst `burst`; when each ended, and how. */
  async function crowd(count: number, burst: number, options: { maxWait: number; deadline?: number }) {
    const s = new Scheduler(t0);
    const bucket = new Bucket(10, { burst, now: t0 });
    const admitted: [number, number][] = [];
    const g = guard((_a, id: number) => void admitted.push([id, s.now()]), {
      clock: s.now,
      timers: s,
      bucket,
      ...options,
    });
    const answers = Array.from({ length: count }, (_, id) =>
      g(id).then(
        () => ["ok", s.now()] as const,
        (e: unknown) => [isRefusal(e) ? e.kind : String(e), s.now()] as const,
      ),
    );
    await s.run();
    return { admitted, answers: await Promise.all(answers) };
  }

  /** When the bucket lets `n` callers through one after another, each as soon as it can. */
  function instants(n: number, burst: number): number[] {
    const twin = new Bucket(10, { burst, now: t0 });
    const out: number[] = [];
    let t = t0;
    for (let i = 0; i < n; i++) {
      t += twin.next(t);
      expect(twin.take(t)).toBe(true);
      out.push(t);
    }
    return out;
  }

  it("20 callers whose waits fit maxWait are all admitted, in order, each as its token lands", async () => {
    const { admitted, answers } = await crowd(20, 1, { maxWait: 5_000 });
    expect(answers.map(([r]) => r)).toEqual(Array<string>(20).fill("ok"));
    expect(admitted.map(([id]) => id)).toEqual([...Array(20).keys()]);
    const want = instants(20, 1);
    admitted.forEach(([, at], i) => expect(at - t0).toBeCloseTo(want[i] - t0, 6));
  });

  it("past the burst, callers whose token would land after maxWait are refused at once", async () => {
    // Burst 3, then one every 100 ms: within 1 050 ms, 3 + 10 tokens.
    const { admitted, answers } = await crowd(20, 3, { maxWait: 1_050 });
    expect(answers.map(([r]) => r)).toEqual([...Array<string>(13).fill("ok"), ...Array<string>(7).fill("rate")]);
    expect(admitted.map(([id]) => id)).toEqual([...Array(13).keys()]);
    const want = instants(13, 3);
    admitted.forEach(([, at], i) => expect(at - t0).toBeCloseTo(want[i] - t0, 6));
    for (const [, at] of answers.slice(13)) expect(at).toBe(t0);
  });

  it("a wait that fits maxWait but not the deadline is the deadline's", async () => {
    const { answers } = await crowd(10, 1, { maxWait: 5_000, deadline: 450 });
    expect(answers.map(([r]) => r)).toEqual([...Array<string>(5).fill("ok"), ...Array<string>(5).fill("deadline")]);
  });
});
