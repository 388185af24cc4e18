// guardFetch with a stand-in fetch: what it answers for input fetch itself would reject.
import { describe, expect, it } from "vitest";
import { guardFetch } from "@tideward/guard";

describe("guardFetch answers a promise, whatever it is given", () => {
  const seen: unknown[] = [];
  const get = guardFetch(
    (_input, init) => {
      seen.push(init?.method);
      return Promise.resolve(new Response("ok"));
    },
    { retry: { attempts: 2 } },
  );

  it("rejects, never throws, for a request whose headers fetch would refuse", async () => {
    let p: Promise<Response> | undefined;
    expect(() => (p = get("http://x/", { method: "POST", headers: { "bad name": "1" } }))).not.toThrow();
    expect(p).toBeInstanceOf(Promise);
    await expect(p).rejects.toThrow(TypeError);
  });

  it("passes a method that is not a string on to fetch, and rejects if it cannot be read", async () => {
    let p: Promise<Response> | undefined;
    expect(() => (p = get("http://x/", { method: 123 as unknown as string }))).not.toThrow();
    expect((await p)?.status).toBe(200);
    expect(seen).toEqual([123]);
    const bad = {
      toString() {
        throw new Error("no name");
      },
    };
    expect(() => (p = get("http://x/", { method: bad as unknown as string }))).not.toThrow();
    await expect(p).rejects.toThrow("no name");
  });
});
