// What a guard holds on to: nothing of a finished attempt (its signal, its result) outlives it.
import { getEventListeners } from "node:events";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { guard } from "@tideward/guard";
import type { Attempt } from "@tideward/guard";
import { Expiry } from "../src/expiry";
import { Scheduler } from "./scheduler";

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

describe("the cut-off queue under steady load", () => {
  const entry = (at: number, log: number[]) => {
    const f = { at, done: false, slot: -1, expire: () => void log.push(at) };
    return f;
  };

  it("holds no ended flight: with one long flight in it, 10 000 short ones leave it bounded", async () => {
    const s = new Scheduler(1_700_000_000_000);
    const expiry = new Expiry(s, s.now);
    const log: number[] = [];
    const long = entry(s.now() + 60_000, log);
    expiry.add(long);
    let most = 0;
    for (let i = 0; i < 10_000; i++) {
      const f = entry(s.now() + 60_000 + i, log);
      expiry.add(f);
      most = Math.max(most, expiry.held);
      f.done = true;
      expiry.remove(f);
      most = Math.max(most, expiry.held);
    }
    expect(expiry.size).toBe(1);
    expect(most).toBeLessThan(100);
    await s.run();
    expect(log).toEqual([long.at]);
  });

  it("still cuts off in instant order, whatever ended in between", async () => {
    const s = new Scheduler(0);
    const expiry = new Expiry(s, s.now);
    const log: number[] = [];
    const live: ReturnType<typeof entry>[] = [];
    // Instants out of order, and every other one ended early: the rest expire in order.
    for (let i = 0; i < 500; i++) {
      const f = entry(((i * 7919) % 500) + 1, log);
      expiry.add(f);
      if (i % 2 === 1) {
        f.done = true;
        expiry.remove(f);
      } else live.push(f);
      expect(expiry.held).toBeLessThanOrEqual(2 * expiry.size + 65);
    }
    await s.run();
    expect(log).toEqual(live.map((f) => f.at).sort((a, b) => a - b));
  });

  it("a guard with a long timeout keeps none of its finished attempts' results", async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const s = new Scheduler(1_700_000_000_000);
    let release!: (v: object) => void;
    const slow = new Promise<object>((r) => (release = r));
    const g = guard((_a: Attempt, kind: string) => (kind === "slow" ? slow : { kind }), {
      timeout: 60_000,
      clock: s.now,
      timers: s,
    });
    const pending = g("slow");
    const refs: WeakRef<object>[] = [];
    for (let i = 0; i < 200; i++) {
      s.clock.advance(1);
      refs.push(new WeakRef(await g("fast")));
    }
    await s.settle();
    gc();
    expect(refs.filter((r) => r.deref() !== undefined).length).toBeLessThan(5);
    release({ kind: "slow" });
    expect(await pending).toEqual({ kind: "slow" });
  });
});
