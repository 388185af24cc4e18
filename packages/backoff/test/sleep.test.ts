import { afterEach, describe, expect, it, vi } from "vitest";
import { sleep } from "@tideward/backoff";

afterEach(() => {
  vi.useRealTimers();
});

describe("sleep (the real one)", () => {
  it("waits about the span for real", async () => {
    const started = performance.now();
    await sleep(6);
    expect(performance.now() - started).toBeGreaterThanOrEqual(5);
  });

  it("rejects with the reason before setting a timer when the signal has already fired", async () => {
    vi.useFakeTimers();
    const reason = new Error("gone");
    await expect(sleep(1_000, AbortSignal.abort(reason))).rejects.toBe(reason);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("stops at once when the signal fires mid-sleep, clearing its timer", async () => {
    vi.useFakeTimers();
    const controller = new AbortController();
    const wait = sleep(60_000, controller.signal);
    expect(vi.getTimerCount()).toBe(1);
    controller.abort("enough");
    await expect(wait).rejects.toBe("enough");
    expect(vi.getTimerCount()).toBe(0);
  });

  it("waits past setTimeout's 24.8-day limit instead of firing after 1 ms", async () => {
    vi.useFakeTimers();
    let done = false;
    void sleep(3_000_000_000).then(() => (done = true));
    await vi.advanceTimersByTimeAsync(2_147_483_647);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(3_000_000_000 - 2_147_483_647 - 1);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(done).toBe(true);
  });

  it("treats a NaN or negative span as no wait", async () => {
    vi.useFakeTimers();
    let done = 0;
    void sleep(Number.NaN).then(() => done++);
    void sleep(-5).then(() => done++);
    await vi.advanceTimersByTimeAsync(0);
    expect(done).toBe(2);
  });
});
