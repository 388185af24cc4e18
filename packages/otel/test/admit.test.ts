// Server admission reported through the real SDK: behind admitNode on a real node:http server,
// the verdicts counted are the statuses the clients got.
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Verdict } from "@tideward/guard";
import { admitNode } from "@tideward/guard/node";
import { QuotaEngine, charge, perMinute, QuotaKey } from "@tideward/quota-engine";
import type { AtomicReport, QuotaStore } from "@tideward/quota-engine";
import { Shedder } from "@tideward/shedder";
import { describe, expect, it } from "vitest";
import { instrumentAdmit, instrumentQuota } from "../src/index";
import { metricsSdk } from "./support/sdk";

const VERDICTS = "tideward.admit.verdicts";
const status = "http.response.status_code";
const policy = "tideward.refusal.kind";

describe("an instrumented admission behind admitNode", () => {
  it("counts each verdict by status and refusing policy, as the clients received them", async () => {
    const sdk = metricsSdk();
    const admission = instrumentAdmit(
      { gate: 2, limits: [{ name: "burst", quota: 5, window: 60_000 }] },
      { meter: sdk.meter, name: "web" },
    );
    const middleware = admitNode(admission, { key: (req) => String(req.headers["x-client"]) });
    // A slow request is held until the test lets it go, so that the gate is full for as long as
    // it takes the others to arrive, however slowly a loaded machine sends them.
    let letGo = () => {};
    const held = new Promise<void>((resolve) => (letGo = resolve));
    const server = createServer((req, res) =>
      middleware(req, res, () => {
        if (req.url === "/slow") void held.then(() => res.end("ok"));
        else res.end("ok");
      }),
    );
    await once(server.listen(0, "127.0.0.1"), "listening");
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const statuses: number[] = [];
    const send = async (path: string, client: string) => {
      const res = await fetch(url + path, { headers: { "x-client": client } });
      await res.text();
      statuses.push(res.status);
      if (statuses.filter((s) => s === 503).length === 2) letGo();
    };
    try {
      // Three clients, seven requests each, one after another: five pass the limit of five.
      for (const client of ["a", "b", "c"]) for (let i = 0; i < 7; i++) await send("/", client);
      // Four slow requests at once through a gate of two: two are held, two refused, and once
      // both refusals are back the held two are let go.
      await Promise.all(["d", "e", "f", "g"].map((client) => send("/slow", client)));
    } finally {
      letGo();
      server.closeAllConnections();
      server.close();
    }
    const count = (s: number) => statuses.filter((x) => x === s).length;
    expect([count(200), count(429), count(503)]).toEqual([17, 6, 2]);
    const m = await sdk.collect();
    expect(m.sum(VERDICTS, { [status]: 200 })).toBe(count(200));
    expect(m.sum(VERDICTS, { [status]: 429, [policy]: "rate" })).toBe(count(429));
    expect(m.sum(VERDICTS, { [status]: 503, [policy]: "gate" })).toBe(count(503));
    expect(m.sum(VERDICTS)).toBe(statuses.length);
    // The admitted one carries no policy: only a refusal has one.
    expect(m.points(VERDICTS, { [status]: 200 })[0]?.attributes[policy]).toBeUndefined();
    expect(m.sum("tideward.admit.keys", { "tideward.name": "web" })).toBe(admission.keys);
    // Three clients, and the two slow ones the gate let in: a refusal for capacity charges no key.
    expect(admission.keys).toBe(5);
    admission.close();
    await sdk.shutdown();
  });

  it("counts the shedder's refusals, and reports the load it was handed, its calls in flight and its capacity", async () => {
    const sdk = metricsSdk();
    let load = 1000; // thousandths: the process is hot
    const shedder = new Shedder({}, 0);
    const admission = instrumentAdmit(
      { shedder, load: () => load, clock: () => 0 },
      { meter: sdk.meter, name: "shed" },
    );
    // Three in flight; one leaves, so the moving average of calls in flight rises above the
    // capacity a hot process has (a tenth of a call): the next is refused.
    const held = [0, 1, 2].map(() => admission.check() as Verdict);
    held[0]?.release();
    const refused = admission.check() as Verdict;
    expect(held.map((v) => v.status)).toEqual([200, 200, 200]);
    expect([refused.status, refused.reason]).toEqual([503, "shed"]);
    let m = await sdk.collect();
    expect(m.sum(VERDICTS, { [status]: 503, [policy]: "shed" })).toBe(1);
    expect(m.sum(VERDICTS, { [status]: 200 })).toBe(3);
    expect(m.sum("tideward.shedder.load")).toBe(1);
    expect(m.sum("tideward.shedder.active_calls")).toBe(shedder.flying);
    expect(m.sum("tideward.shedder.active_calls")).toBe(2);
    expect(m.sum("tideward.shedder.average_active_calls")).toBe(shedder.average);
    expect(m.sum("tideward.shedder.capacity")).toBe(shedder.capacity(0, 1000));
    // The load cools; what is reported is the last reading.
    load = 250;
    (admission.check() as Verdict).release();
    m = await sdk.collect();
    expect(m.sum("tideward.shedder.load")).toBe(0.25);
    await sdk.shutdown();
  });

  it("counts a quota store's refusals as 429s of policy quota, and a store that fails by its error type", async () => {
    const sdk = metricsSdk();
    const engine = new QuotaEngine();
    engine.addLimit(perMinute("tenant", 2));
    const store = instrumentQuota(engine, { meter: sdk.meter, name: "quota" });
    const admission = instrumentAdmit(
      {
        quota: {
          store,
          limits: [engine.limit("tenant") ?? perMinute("tenant", 2)],
          charges: (key, cost) => [charge(new QuotaKey("t", key, "api"), "tenant", cost)],
        },
        clock: () => 0,
      },
      { meter: sdk.meter, name: "quota-web" },
    );
    const answers = ["k", "k", "k"].map((k) => (admission.check(k) as Verdict).status);
    expect(answers).toEqual([200, 200, 429]);
    // A Redis store whose server is gone rejects: that is no verdict, and it is counted by error type.
    const down: QuotaStore = {
      ...engine,
      addLimit: (s) => engine.addLimit(s),
      limit: (n) => engine.limit(n),
      addLink: (l) => engine.addLink(l),
      checkAtomic: (): Promise<AtomicReport> => Promise.reject(new Error("connection is closed")),
      peekAtomic: (c, n) => engine.peekAtomic(c, n),
      checkGcra: (...a) => engine.checkGcra(...a),
      checkHierarchy: (...a) => engine.checkHierarchy(...a),
      checkMany: (...a) => engine.checkMany(...a),
      checkTokenBucket: (...a) => engine.checkTokenBucket(...a),
      checkWindow: (...a) => engine.checkWindow(...a),
    };
    const failing = instrumentAdmit(
      { quota: { store: down, limits: engine.limits(), charges: () => [] } },
      { meter: sdk.meter, name: "quota-web" },
    );
    await expect(failing.check("k")).rejects.toThrow("connection is closed");
    const m = await sdk.collect();
    expect(m.sum(VERDICTS, { [status]: 200 })).toBe(2);
    expect(m.sum(VERDICTS, { [status]: 429, [policy]: "quota" })).toBe(1);
    expect(m.sum(VERDICTS, { "error.type": "Error" })).toBe(1);
    expect(m.points(VERDICTS, { "error.type": "Error" })[0]?.attributes[status]).toBeUndefined();
    // The store was counted too, one decision a charge.
    expect(m.sum("tideward.quota.decisions", { "tideward.quota.limit": "tenant", "tideward.quota.reason": "ok" })).toBe(
      2,
    );
    expect(m.sum("tideward.quota.decisions", { "tideward.quota.reason": "exhausted" })).toBe(1);
    await sdk.shutdown();
  });

  it("refuses a bad key or cost as admit does, counting nothing", async () => {
    const sdk = metricsSdk();
    const admission = instrumentAdmit({}, { meter: sdk.meter, name: "cost" });
    expect(() => admission.check("k", 0)).toThrow("admit check cost must be a whole number from 1, got 0");
    expect(() => admission.check(42 as never)).toThrow(TypeError);
    const keyed = instrumentAdmit(
      { limits: [{ name: "burst", quota: 2, window: 60_000 }] },
      { meter: sdk.meter, name: "keyed" },
    );
    expect(() => keyed.check("k".repeat(257))).toThrow(RangeError);
    expect((await sdk.collect()).sum(VERDICTS)).toBe(0);
    // Without per-key limits a long key is no mistake: admitted, and counted.
    expect((admission.check("k".repeat(257)) as Verdict).status).toBe(200);
    expect((await sdk.collect()).sum(VERDICTS, { [status]: 200 })).toBe(1);
    await sdk.shutdown();
  });
});
