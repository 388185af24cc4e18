import { describe, expect, it } from "vitest";
import { main as backoff } from "../examples/backoff";

describe("example: backoff", () => {
  it("shows jitter breaking up the herd and a budget holding an outage's retries to a fifth", async () => {
    const lines = await backoff();
    expect(lines[0]).toMatch(/^1000 clients fail at t = 0/);
    const peaks = Object.fromEntries(
      lines.slice(1, 5).map((l) => {
        const m = /^ {2}(\S+): +(\d+) of 1000 retries$/.exec(l);
        if (m === null) throw new Error(`unexpected line: ${l}`);
        return [m[1], Number(m[2])];
      }),
    );
    expect(Object.keys(peaks)).toEqual(["rigid", "full", "equal", "spread(0.2)"]);
    expect(peaks.rigid).toBe(1_000); // all in one slot
    expect(peaks.full).toBe(20); // spread over 100 slots: about 10 each
    expect(peaks.equal).toBeGreaterThan(peaks.full); // half the room: twice as crowded
    expect(peaks["spread(0.2)"]).toBeGreaterThan(peaks.equal);
    const calls = lines.slice(6).map((l) => Number(/: +(\d+) calls reach the backend$/.exec(l)?.[1]));
    // No budget: every client makes all four attempts; a ratio of 0.2 allows a fifth of first attempts as retries.
    expect(calls).toEqual([4_000, 1_200]);
  });
});
