// What a guard holds on to: nothing of a finished attempt (its signal, its result) outlives it.
import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { guard } from "@tideward/guard";
import type { Attempt } from "@tideward/guard";

describe("each attempt's own signal", () => {
  it("with nothing that can abort, every attempt of every guard gets a signal of its own", async () => {
    const seen: AbortSignal[] = [];
    const listen = ({ signal }: Attempt, fail: boolean): string => {
      seen.push(signal);
      signal.addEventListener("abort", () => undefined);
      if (fail && seen.length % 2 === 1) throw new Error("once");
      return "ok";
    };
    const once = guard(listen); // the direct path, one attempt
    const retried = guard(listen, { retry: { attempts: 2, base: 0, cap: 0 } }); // its retries
    const other = guard(listen, { retry: { attempts: 2, base: 0, cap: 0 }, budget: false });
    await once(false);
    await once(false);
    await retried(true); // fails once, then a retry
    await other(true);
    expect(seen.length).toBe(6);
    expect(new Set(seen).size).toBe(6);
    for (const s of seen) expect([s.aborted, getEventListeners(s, "abort").length]).toEqual([false, 1]);
  });
});
