// The adapters in front of real servers — plain node:http, Express 5 and Hono 4 (on
// @hono/node-server) — driven by real fetch over loopback.
import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import express from "express";
import { Hono } from "hono";
import { afterEach, describe, expect, it } from "vitest";
import { admit, admitFetch } from "@tideward/guard";
import type { Admission, AdmitOptions } from "@tideward/guard";
import { admitNode } from "@tideward/guard/node";
import type { AdmitNodeOptions } from "@tideward/guard/node";
import { QuotaEngine, QuotaKey, charge, perSecond } from "@tideward/quota-engine";
import type { QuotaStore } from "@tideward/quota-engine";
import { limits, policies, retryAfter } from "./fields";
import { until } from "./support/promises";
import { closeServers, listen, serveFetch } from "./support/servers";

afterEach(closeServers);

type Route = (req: IncomingMessage, res: ServerResponse) => void;

/** A plain node:http server: an upstream middleware that sets its own RateLimit member, then ours, then `route`. */
async function plain(admission: Admission, route: Route, options?: AdmitNodeOptions): Promise<string> {
  const middleware = admitNode(admission, options);
  return listen(
    createServer((req, res) => {
      res.appendHeader("RateLimit", '"upstream";r=5;t=10');
      middleware(req, res, () => route(req, res));
    }),
  );
}

async function express5(admission: Admission, options?: AdmitNodeOptions): Promise<string> {
  const app = express();
  app.set("env", "test"); // no stack traces printed for the failing route
  app.use((_req, res, next) => {
    res.appendHeader("RateLimit", '"upstream";r=5;t=10');
    next();
  });
  app.use(admitNode(admission, options));
  app.get("/ok", (_req, res) => void res.send("ok"));
  app.get("/boom", () => {
    throw new Error("handler failed");
  });
  app.get("/hang", () => undefined);
  return listen(createServer(app));
}

async function hono(admission: Admission): Promise<string> {
  const app = new Hono();
  app.onError((_e, c) => c.text("handler failed", 500));
  app.use(async (c, next) => {
    await next();
    c.res.headers.append("RateLimit", '"upstream";r=5;t=10');
  });
  app.get("/ok", (c) => c.text("ok"));
  app.get("/boom", () => {
    throw new Error("handler failed");
  });
  app.get("/hang", () => new Promise<Response>(() => undefined));
  return listen(await serveFetch(admitFetch(admission, app.fetch)));
}

const ok: Route = (_req, res) => {
  res.writeHead(200, { "content-type": "text/plain" });
  res.end("ok");
};

const options = (extra: AdmitOptions = {}): AdmitOptions => ({
  gate: 1_000,
  limits: [{ name: "burst", quota: 3, window: 3_000 }],
  ...extra,
});

describe.each([
  [
    "node:http",
    (a: Admission) =>
      plain(a, (req, res) => (req.url === "/boom" ? ((res.statusCode = 500), res.end("boom")) : ok(req, res))),
  ],
  ["Express 5", (a: Admission) => express5(a)],
  ["Hono 4", (a: Admission) => hono(a)],
] as const)("%s", (_name, start) => {
  it("appends RateLimit-Policy and RateLimit members after another middleware's, with the right numbers", async () => {
    const admission = admit(options());
    const url = await start(admission);
    const res = await fetch(`${url}/ok`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("ok");
    expect(policies(res.headers.get("ratelimit-policy"))).toEqual([{ name: "burst", q: 3, w: 3 }]);
    // The upstream member is kept, ours is appended.
    expect(limits(res.headers.get("ratelimit"))).toEqual([
      { name: "upstream", r: 5, t: 10 },
      { name: "burst", r: 2, t: 1 },
    ]);
    await until(() => admission.gate?.held === 0);
  });

  it("refuses past the limit with 429, Retry-After, r=0, and keeps clients apart by address", async () => {
    // The clock stands still: on a loaded machine four requests on the real clock could span the
    // second in which a token comes back, and the fourth pass.
    const admission = admit(options({ problem: true, clock: () => 1_700_000_000_000.25 }));
    const url = await start(admission);
    for (let i = 0; i < 3; i++) expect((await fetch(`${url}/ok`)).status).toBe(200);
    const refused = await fetch(`${url}/ok`);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("content-type")).toContain("application/problem+json");
    expect(await refused.json()).toMatchObject({ status: 429, "violated-policies": ["burst"] });
    expect(retryAfter(refused.headers.get("retry-after"))).toBe(1);
    expect(limits(refused.headers.get("ratelimit")).find((m) => m.name === "burst")).toEqual({
      name: "burst",
      r: 0,
      t: 1,
    });
    expect(admission.gate?.held).toBe(0);
  });

  it("releases the gate when the handler fails", async () => {
    const admission = admit(options());
    const url = await start(admission);
    const res = await fetch(`${url}/boom`);
    expect(res.status).toBe(500);
    await res.text();
    await until(() => admission.gate?.held === 0);
  });
});

describe("node:http: the fields are written with the head, however the handler writes it", () => {
  const OURS = { name: "burst", r: 2, t: 1 };
  /** A server with only our middleware in front of `route`. */
  async function only(route: Route, admission = admit(options())): Promise<string> {
    const middleware = admitNode(admission);
    return listen(createServer((req, res) => middleware(req, res, () => route(req, res))));
  }
  const read = async (url: string) => {
    const res = await fetch(url);
    await res.text();
    return {
      res,
      policies: policies(res.headers.get("ratelimit-policy")),
      limits: limits(res.headers.get("ratelimit")),
    };
  };

  it("writeHead with an object, a reason phrase, a flat array, a paired array, or no head at all", async () => {
    const routes: [string, Route, number, string][] = [
      ["object", (_q, res) => void res.writeHead(200, { "content-type": "text/plain" }).end("ok"), 200, "OK"],
      ["reason", (_q, res) => void res.writeHead(201, "Made", { "content-type": "text/plain" }).end("ok"), 201, "Made"],
      [
        "flat",
        (_q, res) => void res.writeHead(202, ["content-type", "text/plain", "x-one", "1"]).end("ok"),
        202,
        "Accepted",
      ],
      [
        "pairs",
        (_q, res) =>
          void res
            .writeHead(200, [
              ["content-type", "text/plain"],
              ["x-one", "1"],
            ] as unknown as string[])
            .end("ok"),
        200,
        "OK",
      ],
      ["none", (_q, res) => void res.writeHead(204).end(), 204, "No Content"],
      ["implicit", (_q, res) => ((res.statusCode = 203), void res.end("ok")), 203, "Non-Authoritative Information"],
    ];
    for (const [name, route, status, text] of routes) {
      const { res, policies: p, limits: l } = await read(await only(route));
      expect([name, res.status, res.statusText]).toEqual([name, status, text]);
      expect(p).toEqual([{ name: "burst", q: 3, w: 3 }]);
      expect(l).toEqual([OURS]);
      if (name === "flat" || name === "pairs") expect(res.headers.get("x-one")).toBe("1");
    }
  });

  it("a handler's own RateLimit member, set or written, is kept and ours follows it, never replacing it", async () => {
    const theirs = '"handler";r=9;t=9';
    for (const route of [
      ((_q, res) => void res.writeHead(200, { RateLimit: theirs }).end("ok")) as Route,
      ((_q, res) => void res.setHeader("RateLimit", theirs).end("ok")) as Route,
      ((_q, res) => (
        res.setHeader("ratelimit", theirs),
        void res.writeHead(200, { "content-type": "text/plain" }).end("ok")
      )) as Route,
    ]) {
      const { limits: l } = await read(await only(route));
      expect(l).toEqual([{ name: "handler", r: 9, t: 9 }, OURS]);
    }
  });

  it("a writeHead wrapped before the middleware (as on-headers does) still runs, once, and the fields are there", async () => {
    const admission = admit(options());
    const middleware = admitNode(admission);
    let fired = 0;
    const url = await listen(
      createServer((req, res) => {
        const before = res.writeHead.bind(res) as (...a: unknown[]) => ServerResponse;
        res.writeHead = (...args: unknown[]) => {
          fired++;
          res.setHeader("x-wrapped", "yes");
          return before(...args);
        };
        middleware(req, res, () => ok(req, res));
      }),
    );
    const { res, limits: l } = await read(url);
    expect(fired).toBe(1);
    expect(res.headers.get("x-wrapped")).toBe("yes");
    expect(l).toEqual([OURS]);
  });

  it("two admissions on one request: both policies in order, both released; a refusal by the second carries both", async () => {
    const outer = admit({ gate: 10, limits: [{ name: "outer", quota: 5, window: 5_000 }] });
    const inner = admit({ gate: 10, limits: [{ name: "inner", quota: 1, window: 1_000 }] });
    const [a, b] = [admitNode(outer), admitNode(inner)];
    const url = await listen(createServer((req, res) => a(req, res, () => b(req, res, () => ok(req, res)))));
    const first = await read(url);
    expect(first.res.status).toBe(200);
    expect(first.policies.map((p) => p.name)).toEqual(["outer", "inner"]);
    expect(first.limits).toEqual([
      { name: "outer", r: 4, t: 1 },
      { name: "inner", r: 0, t: 1 },
    ]);
    const second = await read(url);
    expect(second.res.status).toBe(429);
    expect(second.limits.map((m) => [m.name, m.r])).toEqual([
      ["outer", 3],
      ["inner", 0],
    ]);
    await until(() => outer.gate?.held === 0 && inner.gate?.held === 0);
  });

  it("two admissions with another writeHead wrapper between them, on node:http and Express: the same, written once", async () => {
    const wrapped = (res: ServerResponse, fired: { n: number }) => {
      const before = res.writeHead.bind(res) as (...a: unknown[]) => ServerResponse;
      res.writeHead = (...args: unknown[]) => {
        fired.n++;
        return before(...args);
      };
    };
    for (const server of ["node:http", "express"] as const) {
      const outer = admit({ gate: 10, limits: [{ name: "outer", quota: 5, window: 5_000 }] });
      const inner = admit({ gate: 10, limits: [{ name: "inner", quota: 1, window: 1_000 }] });
      const [a, b] = [admitNode(outer), admitNode(inner)];
      const fired = { n: 0 };
      let url: string;
      if (server === "node:http")
        url = await listen(
          createServer((req, res) => a(req, res, () => (wrapped(res, fired), b(req, res, () => ok(req, res))))),
        );
      else {
        const app = express();
        app.use(a);
        app.use((_req, res, next) => (wrapped(res, fired), next()));
        app.use(b);
        app.get("/", (_req, res) => void res.send("ok"));
        url = await listen(createServer(app));
      }
      const first = await read(url);
      expect([server, first.res.status, fired.n]).toEqual([server, 200, 1]);
      expect(first.policies.map((p) => p.name)).toEqual(["outer", "inner"]);
      expect(first.limits).toEqual([
        { name: "outer", r: 4, t: 1 },
        { name: "inner", r: 0, t: 1 },
      ]);
      const second = await read(url);
      expect([server, second.res.status]).toEqual([server, 429]);
      expect(second.limits.map((m) => [m.name, m.r])).toEqual([
        ["outer", 3],
        ["inner", 0],
      ]);
      await until(() => outer.gate?.held === 0 && inner.gate?.held === 0);
    }
  });
  it("two copies of the package on one response: the second adds to the first's list, hooking nothing", async () => {
    // A second instance of the middleware's module, as a second installed copy would load.
    const specifier = "../src/node/middleware.ts?second-copy";
    const copy = (await import(specifier)) as { admitNode: typeof admitNode };
    expect(copy.admitNode).not.toBe(admitNode);
    const a = admitNode(admit({ limits: [{ name: "outer", quota: 5, window: 5_000 }] }));
    const b = copy.admitNode(admit({ limits: [{ name: "inner", quota: 5, window: 5_000 }] }));
    let hooked = 0;
    const url = await listen(
      createServer((req, res) =>
        a(req, res, () => {
          // eslint-disable-next-line @typescript-eslint/unbound-method -- compared, never called
          const first = res.writeHead;
          b(req, res, () => {
            if (res.writeHead !== first) hooked++;
            ok(req, res);
          });
        }),
      ),
    );
    const { res, limits: l } = await read(url);
    expect([res.status, hooked]).toEqual([200, 0]);
    expect(l).toEqual([
      { name: "outer", r: 4, t: 1 },
      { name: "inner", r: 4, t: 1 },
    ]);
  });
});

describe("client aborts", () => {
  // Ten rounds are enough to see a leak of one place a request (a leak shows at the first round);
  // more only cost minutes on a loaded machine.
  it("node:http: after 2,500 aborted requests the gate's held is back to zero", { timeout: 120_000 }, async () => {
    const admission = admit({ gate: 10_000 });
    let reached = 0;
    const url = await plain(admission, () => void reached++); // never answers
    const BATCH = 250;
    for (let sent = 0; sent < 2_500; sent += BATCH) {
      const controllers = Array.from({ length: BATCH }, () => new AbortController());
      const calls = controllers.map((c) =>
        fetch(`${url}/hang`, { signal: c.signal }).then(
          () => "answered",
          () => "aborted",
        ),
      );
      // A batch may take seconds to arrive on a loaded machine: the test's timeout bounds the wait.
      await until(() => reached === sent + BATCH, 60_000);
      expect(admission.gate?.held).toBe(BATCH);
      for (const c of controllers) c.abort();
      expect(new Set(await Promise.all(calls))).toEqual(new Set(["aborted"]));
      await until(() => admission.gate?.held === 0, 60_000);
    }
    expect(reached).toBe(2_500);
    expect(admission.gate?.held).toBe(0);
  });

  it("Express 5 and Hono 4: an aborted request releases its place", async () => {
    for (const start of [express5, hono]) {
      const admission = admit({ gate: 100 });
      const url = await start(admission);
      const controllers = Array.from({ length: 20 }, () => new AbortController());
      const calls = controllers.map((c) => fetch(`${url}/hang`, { signal: c.signal }).catch(() => "aborted"));
      await until(() => admission.gate?.held === 20);
      for (const c of controllers) c.abort();
      await Promise.all(calls);
      await until(() => admission.gate?.held === 0);
    }
  });
});

describe("a client that leaves while an asynchronous quota store decides", () => {
  // The store answers only when told to, so every client is gone before there is a verdict.
  const held = () => {
    const engine = new QuotaEngine();
    const spec = perSecond("api", 1_000);
    engine.addLimit(spec);
    let open = (): void => undefined;
    const decided = new Promise<void>((resolve) => (open = resolve));
    const store = {
      limit: (name: string) => engine.limit(name),
      checkAtomic: async (charges, now) => {
        await decided;
        return engine.checkAtomic(charges, now);
      },
    } as Pick<QuotaStore, "checkAtomic" | "limit"> as QuotaStore;
    const admission = admit({
      gate: 4,
      quota: { store, limits: [spec], charges: (key) => [charge(new QuotaKey("s", key, "r"), "api")] },
    });
    return { admission, open };
  };
  // Each app's server, not yet listening (the test watches its connections).
  const apps: readonly (readonly [string, (a: Admission, handled: () => void) => Server | Promise<Server>])[] = [
    [
      "node:http",
      (a, handled) => {
        const middleware = admitNode(a);
        return createServer((req, res) => middleware(req, res, () => (handled(), res.end("ok"))));
      },
    ],
    [
      "Express 5",
      (a, handled) => {
        const app = express();
        app.use(admitNode(a));
        app.get("/ok", (_req, res) => (handled(), void res.send("ok")));
        return createServer(app);
      },
    ],
    [
      "Hono 4",
      async (a, handled) => {
        const app = new Hono();
        app.get("/ok", (c) => (handled(), c.text("ok")));
        return serveFetch(admitFetch(a, app.fetch));
      },
    ],
  ];

  it.each(apps)("%s: its place comes back once the store answers, and no handler runs", async (_name, start) => {
    const { admission, open } = held();
    let handled = 0;
    const server = await start(admission, () => void handled++);
    // Each aborted request's connection, seen closed on the server's side.
    let closed = 0;
    server.on("connection", (socket) => socket.on("close", () => void closed++));
    const url = await listen(server);
    const controllers = Array.from({ length: 4 }, () => new AbortController());
    const calls = controllers.map((c) => fetch(`${url}/ok`, { signal: c.signal }).catch(() => "aborted"));
    await until(() => admission.gate?.held === 4);
    for (const c of controllers) c.abort();
    expect(new Set(await Promise.all(calls))).toEqual(new Set(["aborted"]));
    // Every aborted connection closed on the server's side before the store answers.
    await until(() => closed >= 4);
    await new Promise((r) => setTimeout(r, 20));
    open();
    await until(() => admission.gate?.held === 0);
    expect(handled).toBe(0);
    // The gate is whole again: four more are admitted and served.
    const more = await Promise.all(Array.from({ length: 4 }, () => fetch(`${url}/ok`)));
    expect(more.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    await Promise.all(more.map((r) => r.text()));
    expect(handled).toBe(4);
    expect(admission.gate?.held).toBe(0);
  });
});

describe("the adapters' own options and callbacks are named as the user typed them", () => {
  it("a key or cost that is not a function is refused at once; a cost answering a bad number fails the request", async () => {
    const admission = admit({ gate: 1 });
    expect(() => admitNode(admission, { key: 5 as never })).toThrow(
      new TypeError("admitNode key must be a function, got number 5"),
    );
    expect(() => admitFetch(admission, () => new Response(), { cost: "2" as never })).toThrow(
      new TypeError('admitFetch cost must be a function, got string "2"'),
    );
    const errors: unknown[] = [];
    const middleware = admitNode(admission, { cost: () => Number.NaN });
    middleware({ socket: { remoteAddress: "203.0.113.7" } } as IncomingMessage, {} as ServerResponse, (e) =>
      errors.push(e),
    );
    expect(errors).toEqual([new RangeError("admitNode cost(req) must be a whole number from 1, got NaN")]);
    const handler = admitFetch(admission, () => new Response("ok"), { cost: () => 0 });
    await expect(handler(new Request("http://localhost/"))).rejects.toThrow(
      new RangeError("admitFetch cost(request) must be a whole number from 1, got 0"),
    );
    expect(admission.gate?.held).toBe(0);
  });
});

describe("admitNode and a clock that throws once the response has closed", () => {
  it("does not end the process: the place is given back and the next request is served", async () => {
    let broken = false;
    const clock = () => {
      if (broken) throw new Error("clock broke");
      return Date.now();
    };
    const admission = admit({ clock, gate: 1, shedder: {}, load: () => 0 });
    const middleware = admitNode(admission);
    const url = await listen(
      createServer((req, res) =>
        middleware(req, res, () => {
          broken = true; // read next as the response closes, by the shedder's ticket
          res.end("ok");
        }),
      ),
    );
    const first = await fetch(url);
    expect([first.status, await first.text()]).toEqual([200, "ok"]);
    await until(() => admission.gate?.held === 0);
    expect(admission.shedder?.flying).toBe(0);
    broken = false;
    expect((await fetch(url)).status).toBe(200);
  });
});

describe("client identity", () => {
  it("reads X-Forwarded-For only with trusted hops, and then the entry the trusted proxy saw", async () => {
    const admission = admit({ limits: [{ name: "one", quota: 1, window: 60_000 }] });
    const url = await plain(admission, ok, { trustProxy: 1 });
    const as = (xff: string) => fetch(`${url}/ok`, { headers: { "x-forwarded-for": xff } }).then((r) => r.status);
    // The proxy appended 198.51.100.1; whatever the client wrote before it is not trusted.
    expect(await as("10.0.0.1, 198.51.100.1")).toBe(200);
    expect(await as("10.0.0.2, 198.51.100.1")).toBe(429); // the same client: the spoofed entry changes nothing
    expect(await as("198.51.100.2")).toBe(200); // another client
    const untrusting = admit({ limits: [{ name: "one", quota: 1, window: 60_000 }] });
    const url2 = await plain(untrusting, ok);
    expect(await fetch(`${url2}/ok`, { headers: { "x-forwarded-for": "1.1.1.1" } }).then((r) => r.status)).toBe(200);
    // Without trusted hops the header is ignored: the socket address is the key.
    expect(await fetch(`${url2}/ok`, { headers: { "x-forwarded-for": "2.2.2.2" } }).then((r) => r.status)).toBe(429);
  });

  it("uses the caller's key function when given one", async () => {
    const admission = admit({ limits: [{ name: "one", quota: 1, window: 60_000 }] });
    const url = await plain(admission, ok, { key: (req) => String(req.headers["x-api-key"] ?? "anonymous") });
    const as = (key: string) => fetch(`${url}/ok`, { headers: { "x-api-key": key } }).then((r) => r.status);
    expect(await as("a")).toBe(200);
    expect(await as("b")).toBe(200);
    expect(await as("a")).toBe(429);
  });
});
