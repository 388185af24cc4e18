// guardFetch against a real node:http server on loopback: what counts as a failure, what is
// retried, the server's hints honoured, and a response the caller gets never one it discarded.
import { describe, expect, it } from "vitest";
import { Breaker } from "@tideward/breaker";
import { guardFetch } from "@tideward/guard";
import { Jitter } from "@tideward/backoff";
import { systemClock } from "@tideward/time";
import { serveBackend } from "./backend";

const backend = await serveBackend();

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
