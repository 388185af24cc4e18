// The client against a real node:http server on loopback: real fetch, real timers, real clock.
import { monitorEventLoopDelay } from "node:perf_hooks";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Breaker, client } from "@tideward/breaker";
import { guard, guardFetch, isRefusal, isTimeoutError } from "@tideward/guard";
import type { Attempt, OutcomeEvent, RefuseEvent, RetryEvent } from "@tideward/guard";
import { Bucket } from "@tideward/limiters";
import { RetryBudget } from "@tideward/backoff";
import { Jitter } from "@tideward/backoff";
import { systemClock } from "@tideward/time";
import { startBackend } from "./backend";
import type { Backend } from "./backend";

let backend: Backend;
beforeAll(async () => {
  backend = await startBackend();
});
afterAll(async () => {
  await backend.stop();
});

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

describe("guardFetch: the response a caller gets is never one it discarded", () => {
  const later = (ms: number) => new Promise((r) => setTimeout(r, ms));
  // "/hold" answers after 60 ms, holding its gate place; anything else fails at once with a body.
  const stand = async (input: string | URL | Request): Promise<Response> => {
    if ((input instanceof Request ? input.url : input.toString()).endsWith("/hold")) {
      await later(60);
      return new Response("held");
    }
    return new Response("boom", { status: 500 });
  };
  const retry = { attempts: 2, base: 1, cap: 1 };
  it.each([
    ["the bucket", { bucket: { rate: 1, burst: 1 }, retry }],
    [
      "the breaker",
      { breaker: new Breaker({ protection: 0, probe: Infinity }, systemClock()), random: () => 0, retry },
    ],
    ["the gate, held by another call", { gate: 1, retry: { attempts: 2, base: 30, cap: 30 } }],
    ["the deadline", { deadline: 50, retry: { attempts: 2, base: 100, cap: 100 } }],
    ["the budget", { budget: { ratio: 0, minPerSecond: 0 }, retry }],
  ] as const)("a retry refused by %s answers the 500 with its body unread", async (_, options) => {
    const f = guardFetch(stand, options);
    const answer = f("http://backend.test/fail");
    // For the gate: the first attempt has failed and its retry waits 30 ms; another call takes the place.
    await later(5);
    const held = "gate" in options ? f("http://backend.test/hold") : undefined;
    const res = await answer;
    expect([res.status, res.bodyUsed]).toEqual([500, false]);
    expect(await res.text()).toBe("boom");
    expect(await held?.then((r) => r.text())).toBe(held === undefined ? undefined : "held");
  });
});

describe("guardFetch against a real server", () => {
  it("counts 5xx and network errors as failures, 4xx not, and returns a final 5xx as a response", async () => {
    const outcomes: string[] = [];
    const f = guardFetch(fetch, { onOutcome: (o) => void outcomes.push(o.outcome) });
    expect((await f(`${backend.url}/status/404`)).status).toBe(404);
    expect((await f(`${backend.url}/fail`)).status).toBe(500);
    await expect(f("http://127.0.0.1:1/")).rejects.toThrow();
    expect(outcomes).toEqual(["success", "failure", "failure"]);
  });

  it("retries idempotent requests, and POST only with an Idempotency-Key", async () => {
    const f = guardFetch(fetch, { retry: { attempts: 3, base: 1, cap: 1, jitter: Jitter.rigid } });
    backend.flaky = 0;
    expect((await f(`${backend.url}/flaky/2`)).status).toBe(200);
    backend.flaky = 0;
    expect((await f(`${backend.url}/flaky/2`, { method: "POST", body: "x" })).status).toBe(503);
    backend.flaky = 0;
    expect(
      (await f(`${backend.url}/flaky/1`, { method: "POST", body: "x", headers: { "Idempotency-Key": "k1" } })).status,
    ).toBe(200);
    backend.flaky = 0;
    const request = new Request(`${backend.url}/flaky/1`, { method: "PUT", body: "payload" });
    expect((await f(request)).status).toBe(200);
  });

  it("a streamed body: a Request's is retried (each attempt a clone), the same stream as init.body is sent once", async () => {
    const f = guardFetch(fetch, { retry: { attempts: 3, base: 1, cap: 1 } });
    const stream = () =>
      new ReadableStream({
        start(c) {
          c.enqueue(new TextEncoder().encode("streamed"));
          c.close();
        },
      });
    const init = { method: "PUT", duplex: "half" } as RequestInit;
    backend.flaky = 0;
    expect((await f(`${backend.url}/flaky/1`, { ...init, body: stream() })).status).toBe(503);
    expect(backend.flaky).toBe(1);
    backend.flaky = 0;
    expect((await f(new Request(`${backend.url}/flaky/1`, { ...init, body: stream() }))).status).toBe(200);
    expect(backend.flaky).toBe(2);
  });

  it("honours Retry-After in seconds and as an HTTP date, RateLimit, and X-RateLimit-Reset", async () => {
    const f = guardFetch(fetch, { retry: { attempts: 2, base: 1, cap: 1, jitter: Jitter.rigid } });
    const id = Math.random();
    const timed = async (path: string) => {
      const t0 = Date.now();
      const res = await f(`${backend.url}${path}?id=${id}`);
      return { status: res.status, waited: Date.now() - t0 };
    };
    const [seconds, date, ratelimit, reset] = await Promise.all([
      timed("/429/seconds/1"),
      timed("/429/date/1"),
      timed("/429/ratelimit/1"),
      timed("/429/x-reset/1"),
    ]);
    for (const r of [seconds, date, ratelimit, reset]) {
      expect(r.status).toBe(200);
      expect(r.waited).toBeGreaterThanOrEqual(990);
      expect(r.waited).toBeLessThan(2_500);
    }
  });

  it("hedged: a 429 with Retry-After starts no hedge at once; the retry waits as the server asked", async () => {
    const f = guardFetch(fetch, { hedge: { delay: 200, max: 2 }, retry: { attempts: 2, base: 1, cap: 1 } });
    const path = "/429/seconds/1";
    const from = backend.seen.length;
    const res = await f(`${backend.url}${path}?id=${Math.random()}`);
    expect([res.status, await res.text()]).toEqual([200, "ok"]);
    const at = backend.seen
      .slice(from)
      .filter((s) => s.path === path)
      .map((s) => s.at);
    expect(at.length).toBe(2); // the 429, then the retry after its second
    expect(at[1] - at[0]).toBeGreaterThanOrEqual(990);
  });

  it("gives up on, or caps, a Retry-After above maxRetryAfter", async () => {
    const id = Math.random();
    const giveUp = guardFetch(fetch, { retry: { attempts: 2, base: 1, cap: 1 }, maxRetryAfter: 500 });
    const t0 = Date.now();
    expect((await giveUp(`${backend.url}/429/seconds/30?id=${id}`)).status).toBe(429);
    expect(Date.now() - t0).toBeLessThan(400);
    const cap = guardFetch(fetch, {
      retry: { attempts: 2, base: 1, cap: 1 },
      maxRetryAfter: 100,
      overMaxRetryAfter: "cap",
    });
    const t1 = Date.now();
    const res = await cap(`${backend.url}/429/seconds/30?id=${id}x`);
    expect(res.status).toBe(429); // still limited after the capped wait
    expect(Date.now() - t1).toBeGreaterThanOrEqual(95);
  });

  it("a retry refused at admission answers the last response unread, its body whole", async () => {
    const f = guardFetch(fetch, { bucket: { rate: 1, burst: 1 }, retry: { attempts: 2, base: 1, cap: 1 } });
    const res = await f(`${backend.url}/fail`);
    expect([res.status, res.bodyUsed]).toEqual([500, false]);
    expect(await res.text()).toBe("500");
  });

  it("stops at the caller's signal", async () => {
    const f = guardFetch(fetch, { retry: { attempts: 5 } });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error("caller gave up")), 50);
    await expect(f(`${backend.url}/hang`, { signal: controller.signal })).rejects.toThrow("caller gave up");
  });
});

describe("guardFetch bodies against a real server", () => {
  const text = "hello";
  const bytes = () => new TextEncoder().encode(text);
  const stream = () =>
    new ReadableStream({
      start(c) {
        c.enqueue(bytes());
        c.close();
      },
    });
  // What fetch reads afresh on each attempt, and what the first attempt uses up.
  const replayable: readonly (readonly [string, () => unknown, string])[] = [
    ["a string", () => text, text],
    ["an ArrayBuffer", () => bytes().buffer, text],
    ["a Uint8Array", bytes, text],
    ["a DataView", () => new DataView(bytes().buffer), text],
    ["a Buffer", () => Buffer.from(text), text],
    ["a Blob", () => new Blob([text]), text],
    ["URLSearchParams", () => new URLSearchParams({ a: text }), "a=hello"],
  ];
  const once: readonly (readonly [string, () => unknown])[] = [
    ["a ReadableStream", stream],
    [
      "an async generator",
      () =>
        (async function* () {
          await Promise.resolve();
          yield bytes();
        })(),
    ],
    ["a Node Readable", () => Readable.from([text])],
    ["a Blob's stream()", () => new Blob([text]).stream()],
  ];
  const put = (body: unknown): RequestInit => ({ method: "PUT", body, duplex: "half" }) as RequestInit;
  const retrying = guardFetch(fetch, { retry: { attempts: 3, base: 1, cap: 1, jitter: Jitter.rigid } });
  const hedging = guardFetch(fetch, { hedge: { delay: 10 } });

  it.each(replayable)("%s is sent again on the retry of a 503, whole", async (_, body, sent) => {
    const id = String(Math.random());
    const res = await retrying(`${backend.url}/body/1?id=${id}`, put(body()));
    expect([res.status, await res.text()]).toEqual([200, "ok"]);
    expect(backend.bodies(id)).toEqual([sent, sent]);
  });

  it("FormData is sent again on the retry of a 503, whole", async () => {
    const id = String(Math.random());
    const form = new FormData();
    form.set("a", text);
    const res = await retrying(`${backend.url}/body/1?id=${id}`, put(form));
    expect(res.status).toBe(200);
    // Each send draws a boundary of its own: the parts are the same.
    const parts = backend.bodies(id).map((b) => b.replace(/-+formdata-[\w-]+/g, "--B"));
    expect(parts).toHaveLength(2);
    expect(parts[0]).toContain(`name="a"\r\n\r\n${text}`);
    expect(parts[1]).toBe(parts[0]);
  });

  // An async generator retried was sent empty (the server got ["hello", ""], the call answered
  // 200), and a Readable's retry threw "Response body object should not be disturbed or locked".
  it.each(once)("%s is sent once: the 503 is the answer, and the server got the body whole", async (_, body) => {
    const id = String(Math.random());
    const res = await retrying(`${backend.url}/body/1?id=${id}`, put(body()));
    expect([res.status, await res.text()]).toEqual([503, "503"]);
    expect(backend.bodies(id)).toEqual([text]);
  });

  it.each(once)("%s is never hedged", async (_, body) => {
    const id = String(Math.random());
    const res = await hedging(`${backend.url}/body-slow/60?id=${id}`, put(body()));
    expect([res.status, await res.text()]).toEqual([200, "slow"]);
    expect(backend.bodies(id)).toEqual([text]);
  });

  it("a string is hedged (the hedge carries the same body)", async () => {
    const id = String(Math.random());
    const res = await hedging(`${backend.url}/body-slow/60?id=${id}`, put(text));
    expect(res.status).toBe(200);
    await new Promise((r) => setTimeout(r, 20));
    expect(backend.bodies(id)).toEqual([text, text]);
  });
});

describe.each([0, 1_700_000_000_000.375])("guardFetch, a body that cannot be sent, at a clock of %d", (t0) => {
  // An already-read Request threw "unusable" from clone() inside the attempt: a backend failure,
  // retried; after 20 such calls the shared breaker refused a good call.
  const from = performance.now();
  const clock = () => t0 + (performance.now() - from);
  const unsendable: readonly (readonly [string, () => Promise<readonly [string | Request, RequestInit?]>])[] = [
    [
      "a Request already read",
      async () => {
        const r = new Request(`${backend.url}/ok`, { method: "PUT", body: "x" });
        await r.text();
        return [r];
      },
    ],
    [
      "a Request whose body a reader holds",
      () => {
        const r = new Request(`${backend.url}/ok`, { method: "PUT", body: "x" });
        r.body?.getReader();
        return Promise.resolve([r]);
      },
    ],
    [
      "a stream as init.body that a reader holds",
      () => {
        const body = new ReadableStream({ start: (c) => c.close() });
        body.getReader();
        return Promise.resolve([`${backend.url}/ok`, { method: "PUT", body, duplex: "half" }]);
      },
    ],
  ];
  it.each(unsendable)(
    "%s: rejects with a TypeError before any policy, the breaker and budget untouched",
    async (_, make) => {
      const breaker = new Breaker(client, clock());
      const budget = new RetryBudget({ ratio: 0, minPerSecond: 10, window: 1_000 }, clock());
      const events: string[] = [];
      const f = guardFetch(fetch, {
        breaker,
        budget,
        clock,
        retry: { attempts: 3, base: 1, cap: 1 },
        onOutcome: (e) => void events.push(e.outcome),
        onRefuse: (e) => void events.push(e.kind),
      });
      const before = budget.available(clock());
      const seen = backend.seen.length;
      for (let i = 0; i < 20; i++) {
        const [input, init] = await make();
        const error = await f(input, init).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(TypeError);
        expect((error as Error).message).toMatch(/^guardFetch (input|init\.body) .*cannot be sent/);
      }
      expect([events, backend.seen.length - seen]).toEqual([[], 0]);
      expect([breaker.ratio(clock()), budget.available(clock())]).toEqual([0, before]);
      const good = await f(`${backend.url}/ok`);
      expect([good.status, await good.text()]).toEqual([200, "ok"]);
    },
  );
});
