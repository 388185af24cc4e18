// The bodies guardFetch sends a real node:http server on loopback: sent again whole on a retry
// where they can be, sent once and never hedged where they cannot, and a body that cannot be sent
// refused at the call.
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { Breaker, client } from "@tideward/breaker";
import { guardFetch } from "@tideward/guard";
import { RetryBudget } from "@tideward/backoff";
import { Jitter } from "@tideward/backoff";
import { serveBackend } from "./backend";

const backend = await serveBackend();

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
