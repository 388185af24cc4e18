// Client identity through real servers — node:http, Express 5 and Hono 4 on @hono/node-server —
// driven by real fetch over loopback with forged headers: who a request counts as, as the limits
// see it.
import { createServer } from "node:http";
import type { ServerOptions } from "node:http";
import { connect } from "node:net";
import express from "express";
import { Hono } from "hono";
import { afterEach, describe, expect, it } from "vitest";
import { admit, admitFetch } from "@tideward/guard";
import type { Admission } from "@tideward/guard";
import { admitNode } from "@tideward/guard/node";
import { seededRandom } from "@tideward/time";
import type { AdmitNodeOptions } from "@tideward/guard/node";
import { closeServers, listen, serveFetch } from "./support/servers";

// Room for a header of 100 000 entries (node's default is 16 KiB).
const serverOptions: ServerOptions = { maxHeaderSize: 4 * 1024 * 1024 };

afterEach(closeServers);

type Options = Pick<AdmitNodeOptions, "trustProxy" | "ipv6Prefix" | "key">;
type Start = (admission: Admission, options?: Options) => Promise<string>;

const starts: [string, Start][] = [
  [
    "node:http",
    (admission, options) => {
      const middleware = admitNode(admission, options);
      return listen(createServer(serverOptions, (req, res) => middleware(req, res, () => res.end("ok"))));
    },
  ],
  [
    "Express 5",
    (admission, options) => {
      const app = express();
      app.use(admitNode(admission, options));
      app.get("/", (_req, res) => void res.send("ok"));
      return listen(createServer(serverOptions, app));
    },
  ],
  [
    "Hono 4",
    async (admission, options) => {
      const app = new Hono();
      app.get("/", (c) => c.text("ok"));
      const key = options?.key;
      const handler = admitFetch(admission, app.fetch, {
        ...options,
        // The same key function, on the Fetch request.
        key: key === undefined ? undefined : (request) => request.headers.get("x-api-key") ?? undefined,
      });
      return listen(await serveFetch(handler, serverOptions));
    },
  ],
];

// The clock stands still: a limit of 100 an hour gains a place every 36 s, and under load the
// 10 000 requests below once took longer than that (101 passed).
const once = (quota: number, window = 3_600_000) =>
  admit({ limits: [{ name: "one", quota, window }], clock: () => 1_700_000_000_000.25 });

async function status(url: string, headers: Record<string, string>): Promise<number> {
  const res = await fetch(url, { headers });
  await res.arrayBuffer();
  return res.status;
}

/** The statuses of `requests`, sent `width` at a time over kept-alive connections. */
async function statuses(url: string, requests: readonly Record<string, string>[], width = 32): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < requests.length; i += width)
    out.push(...(await Promise.all(requests.slice(i, i + width).map((h) => status(url, h)))));
  return out;
}

/**
 * The statuses of `requests`, all written at once down one connection (HTTP/1.1 pipelining, which
 * each server answers in order): thousands of requests cost the client next to nothing, so the
 * time is the server's.
 */
function pipelined(url: string, requests: readonly Record<string, string>[]): Promise<number[]> {
  const { hostname, port } = new URL(url);
  const text = requests
    .map(
      (h) =>
        `GET / HTTP/1.1\r\nHost: ${hostname}:${port}\r\n${Object.entries(h)
          .map(([k, v]) => `${k}: ${v}\r\n`)
          .join("")}\r\n`,
    )
    .join("");
  return new Promise((resolve, reject) => {
    const out: number[] = [];
    let rest = "";
    const socket = connect(Number(port), hostname, () => socket.end(text));
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => {
      // A status line may be split across chunks: keep the unread tail.
      const all = rest + chunk;
      const line = /HTTP\/1\.1 (\d{3}) /g;
      let last = 0;
      for (let m = line.exec(all); m !== null; m = line.exec(all)) {
        out.push(Number(m[1]));
        last = line.lastIndex;
      }
      rest = all.slice(Math.max(last, all.length - 16));
      if (out.length === requests.length) socket.destroy();
    });
    socket.once("error", reject);
    socket.once("close", () =>
      out.length === requests.length
        ? resolve(out)
        : reject(new Error(`${out.length} answers for ${requests.length} pipelined requests`)),
    );
  });
}

const count = (xs: readonly number[], x: number) => xs.filter((y) => y === x).length;

/** An address of 2001:db8:aaaa:bbbb::/64, chosen by `draw`, in one of its textual forms. */
function inSubnet(draw: () => number): string {
  const low = Array.from({ length: 4 }, () => Math.floor(draw() * 0x10000));
  const groups = ["2001", "db8", "aaaa", "bbbb", ...low.map((g) => g.toString(16))];
  const padded = draw() < 0.5 ? groups.map((g) => g.padStart(4, "0")) : groups;
  let text = padded.join(":");
  if (low[0] === 0 && low[1] === 0) text = `${padded.slice(0, 4).join(":")}::${padded.slice(6).join(":")}`;
  if (draw() < 0.5) text = text.toUpperCase();
  return draw() < 0.5 ? `[${text}]:${Math.floor(draw() * 65_536)}` : text;
}

describe.each(starts)("%s", (_name, start) => {
  it("reads no header without a trusted proxy: forged X-Forwarded-For and Forwarded change nothing", async () => {
    const admission = once(2);
    const url = await start(admission);
    const forged: Record<string, string>[] = [
      { "x-forwarded-for": "198.51.100.1" },
      { "x-forwarded-for": "2001:db8::1, 198.51.100.2" },
      { forwarded: "for=198.51.100.3" },
      { forwarded: 'for="[2001:db8::3]:4711"', "x-forwarded-for": "198.51.100.4" },
      { "x-forwarded-for": "unknown" },
    ];
    expect(await statuses(url, forged, 1)).toEqual([200, 200, 429, 429, 429]);
    expect(admission.keys).toBe(1); // the socket's peer, 127.0.0.1
  });

  it("reads only the header the trusted proxy writes: the other is the client's word", async () => {
    const viaForwarded = once(2);
    const url = await start(viaForwarded, { trustProxy: { hops: 1, header: "forwarded" } });
    const same = { forwarded: "for=198.51.100.7;proto=https" };
    expect(
      await statuses(
        url,
        [1, 2, 3].map((i) => ({ ...same, "x-forwarded-for": `203.0.113.${i}` })),
        1,
      ),
    ).toEqual([200, 200, 429]);
    expect(await status(url, { forwarded: 'for="[2001:db8::7]:4711"' })).toBe(200); // another client
    expect(viaForwarded.keys).toBe(2);

    const viaXff = once(2);
    const url2 = await start(viaXff, { trustProxy: 1 });
    expect(
      await statuses(
        url2,
        [1, 2, 3].map((i) => ({ "x-forwarded-for": "198.51.100.7:40000", forwarded: `for=203.0.113.${i}` })),
        1,
      ),
    ).toEqual([200, 200, 429]);
  });

  it("counts 10 000 addresses of one /64, in any of their textual forms, against one limit", async () => {
    const admission = once(100);
    const url = await start(admission, { trustProxy: 1 });
    const draw = seededRandom(0x51);
    const requests = Array.from({ length: 10_000 }, () => ({ "x-forwarded-for": `203.0.113.250, ${inSubnet(draw)}` }));
    const got = await pipelined(url, requests);
    expect([count(got, 200), count(got, 429)]).toEqual([100, 9_900]);
    expect(admission.keys).toBe(1);
    // Another /64 is another client; a /48 prefix makes its neighbours one.
    expect(await status(url, { "x-forwarded-for": "2001:db8:aaaa:bbbc::1" })).toBe(200);
    const wide = once(1);
    const url2 = await start(wide, { trustProxy: { hops: 1, header: "forwarded" }, ipv6Prefix: 48 });
    expect(await status(url2, { forwarded: 'for="[2001:db8:aaaa:1::1]"' })).toBe(200);
    expect(await status(url2, { forwarded: 'for="[2001:DB8:AAAA:FFFF::2]:443"' })).toBe(429);
  });

  it("keys an IPv4-mapped IPv6 address as the IPv4 address, and a malformed entry by the socket", async () => {
    const admission = once(1);
    const url = await start(admission, { trustProxy: 1 });
    expect(await status(url, { "x-forwarded-for": "203.0.113.9" })).toBe(200);
    expect(await status(url, { "x-forwarded-for": "::ffff:cb00:7109" })).toBe(429); // the same address
    expect(await status(url, { "x-forwarded-for": "[::FFFF:203.0.113.9]:1" })).toBe(429);
    expect(await status(url, { "x-forwarded-for": "203.0.113.09" })).toBe(200); // no address: the socket's key
    expect(await status(url, { "x-forwarded-for": "unknown" })).toBe(429); // the socket's again
    expect(admission.keys).toBe(2);
  });

  it("reads a header of 100 000 entries for the one the trusted proxies wrote", async () => {
    const admission = once(1);
    const url = await start(admission, { trustProxy: 2 });
    const spoofed = (seed: number) =>
      Array.from({ length: 99_998 }, (_, i) => `10.${seed}.${(i >> 8) & 255}.${i & 255}`).join(", ");
    const header = (seed: number, client: string) => ({ "x-forwarded-for": `${spoofed(seed)}, ${client}, 10.0.0.1` });
    expect(await status(url, header(1, "198.51.100.9"))).toBe(200);
    expect(await status(url, header(2, "198.51.100.9"))).toBe(429); // other spoofed entries, the same client
    expect(await status(url, header(3, "198.51.100.10"))).toBe(200);
    const viaForwarded = once(1);
    const url2 = await start(viaForwarded, { trustProxy: { hops: 1, header: "forwarded" } });
    // The client's part opens a quote it never closes: the proxy's element still reads.
    const forged = `for="${Array.from({ length: 100_000 }, (_, i) => `for=10.0.${(i >> 8) & 255}.${i & 255}`).join(", ")}`;
    expect(await status(url2, { forwarded: `${forged}, for=198.51.100.9` })).toBe(200);
    expect(await status(url2, { forwarded: `for=198.51.100.9` })).toBe(429);
  });

  it("keys a request by its address where the key function answers undefined", async () => {
    const admission = once(1);
    const url = await start(admission, {
      trustProxy: 1,
      key: (req) => (typeof req.headers["x-api-key"] === "string" ? req.headers["x-api-key"] : undefined),
    });
    expect(await status(url, { "x-forwarded-for": "198.51.100.1" })).toBe(200);
    expect(await status(url, { "x-forwarded-for": "198.51.100.2" })).toBe(200); // another address
    expect(await status(url, { "x-forwarded-for": "198.51.100.1" })).toBe(429);
    expect(await status(url, { "x-forwarded-for": "198.51.100.3", "x-api-key": "k" })).toBe(200);
    expect(await status(url, { "x-forwarded-for": "198.51.100.4", "x-api-key": "k" })).toBe(429); // one key, any address
  });
});
