// The client against a real node:http server on loopback: real fetch, real timers, real clock.
// guardFetch against it is in client-fetch.test.ts, the bodies it sends in client-fetch-bodies.test.ts.
import { monitorEventLoopDelay } from "node:perf_hooks";
import { describe, expect, it } from "vitest";
import { Breaker } from "@tideward/breaker";
import { guard, isRefusal, isTimeoutError } from "@tideward/guard";
import type { Attempt, OutcomeEvent, RefuseEvent, RetryEvent } from "@tideward/guard";
import { Bucket } from "@tideward/limiters";
import { RetryBudget } from "@tideward/backoff";
import { Jitter } from "@tideward/backoff";
import { systemClock } from "@tideward/time";
import { serveBackend } from "./backend";

const backend = await serveBackend();

/** A GET through the guard's signal that throws on a 5xx, as a typical client writes it. */
const get =
  (path: string) =>
  async ({ signal }: Attempt, query = ""): Promise<{ status: number; body: string }> => {
    const res = await fetch(`${backend.url}${path}${query}`, { signal });
    const body = await res.text();
    if (res.status >= 500) throw Object.assign(new Error(`HTTP ${res.status}`), { status: res.status });
    return { status: res.status, body };
  };

const rigid = { jitter: Jitter.rigid };

/**
 * Starts measuring how late this process's timers run; the function it returns stops and gives the
 * worst lateness in ms. On a loaded machine every timer, a deadline's included, fires late by as
 * much, so a call's time is judged net of it.
 */
function lateness(): () => number {
  const lag = monitorEventLoopDelay({ resolution: 10 });
  lag.enable();
  return () => {
    lag.disable();
    return lag.max / 1e6;
  };
}

describe("client guard against a real server", () => {
  it("the breaker throttles under failures and still lets probes through", async () => {
    // A window of 2 s and probes after 200 ms with nothing let through.
    const breaker = new Breaker({ window: 2_000, size: 8, probe: 200 }, systemClock());
    const refused: RefuseEvent[] = [];
    const call = guard(
      async ({ signal }) => {
        const res = await fetch(`${backend.url}/fail`, { signal });
        await res.text();
        throw new Error(`HTTP ${res.status}`);
      },
      { breaker, onRefuse: (e) => void refused.push(e) },
    );
    const before = backend.count("/fail");
    let refusals = 0;
    let failures = 0;
    // Sixty calls one after another: counted, not timed, so a loaded machine changes nothing.
    for (let i = 0; i < 60; i++) {
      const e = await call().catch((x: unknown) => x);
      if (isRefusal(e)) {
        expect(e.kind).toBe("breaker");
        refusals++;
      } else failures++;
    }
    expect(backend.count("/fail") - before).toBe(failures);
    expect(refusals).toBeGreaterThan(failures); // throttling: most calls never reach the server
    expect(failures).toBeGreaterThan(5); // the protection's five, then the drops begin
    expect(refused.length).toBe(refusals);
    expect(refused.every((e) => e.kind === "breaker" && e.attempt === 1)).toBe(true);
    expect(breaker.ratio(systemClock())).toBeGreaterThan(0.5);
    // Nothing let through for longer than the probe: the next call goes to the server.
    await new Promise((r) => setTimeout(r, 250));
    const probed = backend.count("/fail");
    const e = await call().catch((x: unknown) => x);
    expect(isRefusal(e)).toBe(false);
    expect(backend.count("/fail") - probed).toBe(1);
  });

  it("the bucket refuses calls over its rate with the time to its next token", async () => {
    const call = guard(get("/ok"), { bucket: new Bucket(10, { burst: 2, now: systemClock() }) });
    const answers = await Promise.allSettled([call(), call(), call()]);
    expect(answers.map((a) => a.status)).toEqual(["fulfilled", "fulfilled", "rejected"]);
    const e = (answers[2] as PromiseRejectedResult).reason as unknown;
    expect(isRefusal(e) && e.kind).toBe("rate");
    // 10 a second: the next token is at most 100 ms away.
    expect(isRefusal(e) && e.retryAfter).toBeGreaterThan(0);
    expect(isRefusal(e) && e.retryAfter).toBeLessThanOrEqual(100);
  });

  it("the bucket waits for a token when maxWait allows, and refuses when it does not", async () => {
    const bucket = new Bucket(20, { burst: 1, now: systemClock() }); // a token every 50 ms
    const waiting = guard(get("/ok"), { bucket, maxWait: 200 });
    const t0 = performance.now();
    const results = await Promise.all([waiting(), waiting(), waiting()]);
    const elapsed = performance.now() - t0;
    expect(results.map((r) => r.body)).toEqual(["ok", "ok", "ok"]);
    expect(elapsed).toBeGreaterThanOrEqual(95); // two waits of 50 ms
    // Two calls in the same instant against a bucket of one token: one at most passes at once.
    const impatient = guard(get("/ok"), { bucket, maxWait: 10 });
    const both = await Promise.allSettled([impatient(), impatient()]);
    const refusals = both.filter((r) => r.status === "rejected" && isRefusal(r.reason) && r.reason.kind === "rate");
    expect(refusals.length).toBeGreaterThanOrEqual(1);
  });

  it("the deadline aborts a hanging call through its signal", async () => {
    const before = backend.seen.length;
    const hang = get("/hang");
    let fetched: unknown; // what fetch rejected with
    const call = guard(
      (a: Attempt) =>
        hang(a).catch((x: unknown) => {
          fetched = x;
          throw x;
        }),
      { deadline: 80 },
    );
    const late = lateness();
    const t0 = performance.now();
    const e = await call().catch((x: unknown) => x);
    const elapsed = performance.now() - t0;
    expect(isTimeoutError(e) && e.scope).toBe("deadline");
    expect(elapsed).toBeGreaterThanOrEqual(79);
    expect(elapsed - late()).toBeLessThan(1_000);
    // The signal reached fetch: it gave up with the deadline's error.
    await expect.poll(() => fetched, { timeout: 10_000 }).toBeDefined();
    expect(isTimeoutError(fetched) && fetched.scope).toBe("deadline");
    // And the server saw the client go away. (On a loaded machine the request may not have been
    // sent within 80 ms; fetch then gives up before the server sees it.)
    await expect
      .poll(() => backend.seen.slice(before).every((s) => s.path !== "/hang" || s.aborted), { timeout: 10_000 })
      .toBe(true);
  });

  it("the deadline abandons a call whose function ignores the signal, settling it as a failure", async () => {
    const outcomes: OutcomeEvent[] = [];
    const breaker = new Breaker({ protection: 0 }, systemClock());
    let late = false;
    const call = guard(
      async () => {
        await fetch(`${backend.url}/slow/300`).then((r) => r.text()); // no signal: it runs on
        late = true;
        return "late";
      },
      { deadline: 60, breaker, onOutcome: (o) => void outcomes.push(o) },
    );
    const e = await call().catch((x: unknown) => x);
    expect(isTimeoutError(e)).toBe(true);
    expect(late).toBe(false); // rejected before the slow answer came
    expect(outcomes.map((o) => o.outcome)).toEqual(["timeout"]);
    // Recorded as a failure: with no protection, one failure and no success make the breaker refuse.
    expect(breaker.ratio(systemClock())).toBeGreaterThan(0);
    await expect.poll(() => late, { timeout: 2_000 }).toBe(true);
    expect(outcomes).toHaveLength(1); // the late answer changed nothing
  });

  it("retries stop at the policy: three attempts, then the last error", async () => {
    backend.flaky = 0;
    const retries: RetryEvent[] = [];
    const call = guard(get("/flaky/10"), {
      retry: { attempts: 3, base: 5, cap: 5, ...rigid },
      onRetry: (e) => void retries.push(e),
    });
    const before = backend.count("/flaky");
    const e = await call().catch((x: unknown) => x);
    expect((e as Error).message).toBe("HTTP 503");
    expect(backend.count("/flaky") - before).toBe(3);
    expect(retries.map((r) => [r.attempt, r.delay])).toEqual([
      [1, 5],
      [2, 5],
    ]);
  });

  it("retries succeed once the server recovers", async () => {
    backend.flaky = 0;
    const call = guard(get("/flaky/2"), { retry: { attempts: 4, base: 5, cap: 5, ...rigid } });
    expect((await call()).body).toBe("ok");
  });

  it("retries stop at the budget, which every call through the guard shares", async () => {
    backend.flaky = 0;
    const budget = new RetryBudget({ ratio: 0, minPerSecond: 0.2, window: 10_000 }, systemClock()); // 2 retries in all
    const refused: RefuseEvent[] = [];
    const call = guard(get("/flaky/1000"), {
      retry: { attempts: 5, base: 1, cap: 1, ...rigid },
      budget,
      onRefuse: (e) => void refused.push(e),
    });
    const before = backend.count("/flaky");
    for (let i = 0; i < 3; i++) await call().catch(() => undefined);
    // Three first attempts and the two retries the budget allowed, not 15 attempts.
    expect(backend.count("/flaky") - before).toBe(5);
    expect(refused.filter((r) => r.kind === "budget").length).toBe(3); // one per call, once spent
  });

  it("retries stop at the deadline, without sleeping past it", async () => {
    backend.flaky = 0;
    const refused: RefuseEvent[] = [];
    const call = guard(get("/flaky/1000"), {
      retry: { attempts: 10, base: 150, cap: 150, ...rigid },
      deadline: 400,
      onRefuse: (e) => void refused.push(e),
    });
    const before = backend.count("/flaky");
    const late = lateness();
    const t0 = performance.now();
    const e = await call().catch((x: unknown) => x);
    const elapsed = performance.now() - t0 - late();
    // Attempts at about 0, 150 and 300 ms; the next would start past 400, so none is made and
    // the call ends with the backend's last answer (or, on a starved machine, the deadline's cut).
    if (isTimeoutError(e)) expect(e.scope).toBe("deadline");
    else {
      expect((e as Error).message).toBe("HTTP 503");
      expect(refused.at(-1)?.kind).toBe("deadline");
    }
    expect(elapsed).toBeLessThan(450);
    expect(backend.count("/flaky") - before).toBeLessThanOrEqual(3);
  });

  it("a per-attempt timeout cuts a slow attempt off and the retry answers", async () => {
    const id = `t${Math.random()}`;
    // The slow answer comes after 10 s; an attempt has 500 ms, room for a quick answer on a loaded
    // machine (with 150 ms every attempt timed out there once, the quick ones too).
    const call = guard(get("/slow-once/10000"), { timeout: 500, retry: { attempts: 3, base: 1, cap: 1, ...rigid } });
    const t0 = performance.now();
    expect((await call(`?id=${id}`)).body).toBe("fast");
    expect(performance.now() - t0).toBeLessThan(10_000); // the slow attempt was not waited for
  });

  it("a hedge wins against a slow first attempt, and the loser is aborted", async () => {
    const id = `h${Math.random()}`;
    const before = backend.seen.length;
    const hedges: number[] = [];
    const call = guard(get("/slow-once/2000"), { hedge: { delay: 30 }, onHedge: (e) => void hedges.push(e.attempt) });
    const t0 = performance.now();
    expect((await call(`?id=${id}`)).body).toBe("fast");
    expect(performance.now() - t0).toBeLessThan(1_000);
    expect(hedges).toEqual([2]);
    await expect
      .poll(() => backend.seen.slice(before).filter((s) => s.path === "/slow-once/2000" && s.aborted).length)
      .toBe(1);
  });
});

describe("timers on the real clock", () => {
  it("a thousand idle guards hold no timer, and after their calls none holds the process open", async () => {
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;
    const before = timers();
    const guards = Array.from({ length: 1_000 }, () =>
      // eslint-disable-next-line @typescript-eslint/require-await -- an async function that answers at once
      guard(async () => "x", {
        timeout: 30_000,
        deadline: 60_000,
        breaker: {},
        bucket: { rate: 100 },
        hedge: { delay: 10_000 },
      }),
    );
    expect(timers()).toBe(before);
    expect(await Promise.all(guards.map((g) => g()))).toHaveLength(1_000);
    expect(timers()).toBe(before);
  });
});
