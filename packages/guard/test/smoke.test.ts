import { describe, expect, it } from "vitest";
import { guard, isRefusal, isTimeoutError } from "@tideward/guard";
import { Scheduler } from "./scheduler";

describe("smoke", () => {
  it("runs", async () => {
    const s = new Scheduler(0);
    const g = guard(async (_a, x: number) => x * 2, { clock: s.now, timers: s, breaker: {}, bucket: { rate: 1 } });
    expect(await g(21)).toBe(42);
    const e = await g(1).catch((x: unknown) => x);
    expect(isRefusal(e)).toBe(true);
    const hang = guard(() => new Promise<never>(() => {}), { clock: s.now, timers: s, deadline: 100 });
    const p = hang().catch((x: unknown) => x);
    await s.run();
    expect(isTimeoutError(await p)).toBe(true);
    expect(s.pending).toBe(0);
  });
});
