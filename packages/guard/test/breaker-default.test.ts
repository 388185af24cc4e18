// The breaker a guard builds from `breaker: {}` or `true`: @tideward/breaker's client preset,
// with the user's fields over it. Call for call on a simulated scheduler at both clock scales,
// then against a real node:http server on loopback through a full outage.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Breaker, client, sre } from "@tideward/breaker";
import { guard, isRefusal } from "@tideward/guard";
import type { GuardOptions } from "@tideward/guard";
import { startBackend } from "./backend";
import type { Backend } from "./backend";
import { Scheduler } from "./scheduler";

const STARTS = [0, 1_700_000_000_123.375];

describe.each(STARTS)("breaker: {} with the clock at %d", (t0) => {
  // A call every 10 ms: healthy for 1 s, every call failing for 2 s, then healthy for 2 s. Each
  // call's answer in order: "ok", "fail" or "refused".
  const OUTAGE = [1_000, 3_000];
  const trace = async (breaker: GuardOptions["breaker"] | ((now: number) => Breaker)): Promise<string[]> => {
    const s = new Scheduler(t0);
    const g = guard(
      () => {
        const t = s.now() - t0;
        if (t >= OUTAGE[0] && t < OUTAGE[1]) throw new Error("down");
        return "ok";
      },
      { clock: s.now, timers: s, random: () => 0.5, breaker: typeof breaker === "function" ? breaker(t0) : breaker },
    );
    const answers: string[] = [];
    for (let i = 0; i < 500; i++) {
      await s.advance(10);
      answers.push(
        await g().then(
          () => "ok",
          (e: unknown) => (isRefusal(e) ? "refused" : "fail"),
        ),
      );
    }
    return answers;
  };
  /** Index of the call at `t` ms after the start (the first call is at 10 ms). */
  const at = (t: number): number => t / 10 - 1;

  it("and breaker: true are the client preset, call for call, and not sre", async () => {
    const preset = await trace((now) => new Breaker(client, now));
    expect(await trace({})).toEqual(preset);
    expect(await trace(true)).toEqual(preset);
    const outage = preset.slice(at(OUTAGE[0]), at(OUTAGE[1]));
    // At the outage's start the window's successes excuse failures until the drop passes the
    // roll (0.5 here), within one window (750 ms); then, half-open, only a probe every 400 ms.
    const through = outage.flatMap((a, i) => (a === "refused" ? [] : [i * 10]));
    expect(through.length).toBeLessThanOrEqual(75); // one window of calls
    const late = through.filter((t) => t >= 750);
    expect(late.length).toBeGreaterThan(0);
    expect(late.length).toBeLessThanOrEqual(Math.ceil((OUTAGE[1] - OUTAGE[0] - 750) / 400));
    expect(late.every((t, i) => i === 0 || t - (late[i - 1] ?? 0) >= 400)).toBe(true);
    // The first probe after the outage succeeds and closes it: within 400 ms, then nothing refused.
    expect(preset.slice(at(OUTAGE[1] + 400))).toEqual(preset.slice(at(OUTAGE[1] + 400)).map(() => "ok"));
    expect(preset.slice(0, at(OUTAGE[0]))).toEqual(preset.slice(0, at(OUTAGE[0])).map(() => "ok"));
    // go-zero's constants still refuse a second after the outage: its failures stay for 10 s.
    const plain = await trace((now) => new Breaker(sre, now));
    expect(plain.slice(at(OUTAGE[1] + 1_000), at(OUTAGE[1] + 1_500))).toContain("refused");
  });

  it("lays the given fields over the client preset; sre itself, or a Breaker, is taken as it is", async () => {
    const over = { probe: 100, k: 3, window: undefined };
    expect(await trace(over)).toEqual(await trace((now) => new Breaker({ ...client, probe: 100, k: 3 }, now)));
    expect(await trace({ halfOpen: false })).toEqual(
      await trace((now) => new Breaker({ ...client, halfOpen: false }, now)),
    );
    const plain = await trace((now) => new Breaker(undefined, now));
    expect(await trace(sre)).toEqual(plain);
    expect(await trace({ ...sre, k: 2 })).toEqual(await trace((now) => new Breaker({ k: 2 }, now)));
    expect(await trace(false)).toEqual(await trace(undefined));
    expect((await trace(false)).filter((a) => a === "refused")).toEqual([]);
  });
});

describe("breaker: {} against a real server through an outage", () => {
  let backend: Backend;
  beforeAll(async () => {
    backend = await startBackend();
  });
  afterAll(async () => {
    await backend.stop();
  });

  it("at 100 calls a second, keeps most of a 3 s outage off the server and succeeds again within 2 s", async () => {
    // Healthy for 1 s, every request a 500 for 3 s, then healthy for 3.5 s; calls started at 100
    // a second whatever the answers, as independent callers would. The rate and the timeout
    // leave room for a machine busy with other suites: a loopback call that waits seconds for
    // the CPU times out, and the breaker rightly counts it as a failure.
    const RATE = 100;
    const [down, up, end] = [1_000, 4_000, 7_500];
    const g = guard(
      async ({ signal }) => {
        const res = await fetch(`${backend.url}/switch`, { signal });
        await res.text();
        if (res.status >= 500) throw new Error(`HTTP ${res.status}`);
      },
      { breaker: {}, timeout: 5_000 },
    );
    const calls: { at: number; answer: Promise<string> }[] = [];
    const start = performance.now();
    backend.downBetween = [start + down, start + up];
    const seenBefore = backend.seen.length;
    await new Promise<void>((resolve) => {
      const tick = (): void => {
        const t = performance.now() - start;
        // Catch up on the calls due by now, so a late timer on a loaded machine keeps the rate.
        while (calls.length < Math.min(Math.floor((t * RATE) / 1_000), (end * RATE) / 1_000)) {
          const answer = g().then(
            () => "ok",
            (e: unknown) => (isRefusal(e) ? "refused" : "fail"),
          );
          calls.push({ at: performance.now() - start, answer });
        }
        if (t < end) setTimeout(tick, 2);
        else resolve();
      };
      tick();
    });
    const answers = await Promise.all(calls.map((c) => c.answer));
    backend.downBetween = undefined;
    const seen = backend.seen.slice(seenBefore).map((s) => s.at - start);
    const between = (from: number, to: number): number[] =>
      calls.flatMap((c, i) => (c.at >= from && c.at < to ? [i] : []));

    const offered = between(down, up).length;
    const reached = seen.filter((t) => t >= down && t < up).length;
    expect(offered).toBeGreaterThan(150); // the load was offered: about 300 calls
    // What the window excuses at the start (about a window's calls), then 2.5 probes a second:
    // 17–44 % of the offered calls in six runs on a loaded two-core machine, the most where
    // answers came back late and calls went out before the breaker heard of the failures. With
    // no breaker, all of them.
    expect(reached).toBeLessThan(0.6 * offered);
    // Healthy before the outage: nothing refused.
    expect(between(0, down).filter((i) => answers[i] === "refused")).toEqual([]);
    // Healed: the first probe succeeds and closes it; from 2 s after, 90 % or more succeed.
    const after = between(up + 2_000, end);
    const tally: Record<string, number> = {};
    for (const i of after) tally[answers[i]] = (tally[answers[i]] ?? 0) + 1;
    expect(after.length).toBeGreaterThan(75);
    expect(tally.ok ?? 0, `answers 2 s after healing: ${JSON.stringify(tally)}`).toBeGreaterThanOrEqual(
      0.9 * after.length,
    );
  }, 20_000);
});
