// The chain runs each side's policies through the guard's pipeline: in their order, every one
// settled in order when the attempt ends, and on a refusal (or a throw) the ones before it released
// last first — with more policies on a side than the pipeline keeps in fields (six here), on both
// sides, at clocks near 0 and near Date.now().
import { describe, expect, it } from "vitest";
import { isCallbackError, latency, simulate, traffic } from "@tideward/sim";
import type { Adapter, PolicySpec } from "@tideward/sim";

type Entry = readonly [what: string, policy: string, now: number, detail?: unknown];

/** A policy named `name` that logs everything it is asked; `answer(n)` decides its n-th admission. */
function logged(
  name: string,
  side: "client" | "server",
  log: Entry[],
  answer: (n: number) => "ok" | "no" | "throw" = () => "ok",
): PolicySpec {
  return {
    name,
    create(): Adapter {
      let n = 0;
      return {
        name,
        side,
        reason: name,
        admit(now) {
          const a = answer(++n);
          log.push(["admit", name, now, a]);
          if (a === "throw") throw new Error(`boom ${name}`);
          return a === "ok" ? n : undefined;
        },
        settle: (token, now, ok) => void log.push(["settle", name, now, [token, ok]]),
        release: (token, now) => void log.push(["release", name, now, token]),
      };
    },
  };
}

const clients = ["c0", "c1", "c2", "c3", "c4", "c5"];

describe.each([0, 1_700_000_000_000.375])("the chain on the guard's pipeline, the clock at %d", (start) => {
  it("asks six policies a side in order, settles them in order, releases them last first", () => {
    const log: Entry[] = [];
    const policies = [
      ...clients.map((c, i) => logged(c, "client", log, i === 5 ? (n) => (n % 3 === 0 ? "no" : "ok") : undefined)),
      logged("s0", "server", log),
      logged("s1", "server", log, (n) => (n % 4 === 0 ? "no" : "ok")),
    ];
    const r = simulate({
      start,
      seed: 3,
      duration: 2_000,
      traffic: traffic.poisson({ rate: 200 }),
      backend: { latency: latency.fixed(5) },
      policies,
    });
    expect(r.summary.calls).toBeGreaterThan(300);
    let clientRefusals = 0;
    let serverRefusals = 0;
    let settledAll = 0;
    for (let i = 0; i < log.length; i++) {
      const [what, name, now, detail] = log[i];
      const next = (k: number): Entry => log[i + 1 + k];
      if (what === "admit" && name === "c0") {
        // The client side, in its order, up to the first refusal.
        for (let k = 0; k < 5; k++) expect(next(k).slice(0, 3)).toEqual(["admit", clients[k + 1], now]);
      }
      if (what === "admit" && name === "c5" && detail === "no") {
        clientRefusals++;
        expect(log.slice(i + 1, i + 6).map((e) => e.slice(0, 3))).toEqual(
          [4, 3, 2, 1, 0].map((k) => ["release", clients[k], now]),
        );
      }
      if (what === "admit" && name === "s1" && detail === "no") {
        serverRefusals++;
        // The server side's first policy, then every client-side one, last first.
        expect(log.slice(i + 1, i + 8).map((e) => e.slice(0, 3))).toEqual([
          ["release", "s0", now],
          ...[5, 4, 3, 2, 1, 0].map((k) => ["release", clients[k], now]),
        ]);
      }
      if (what === "settle" && name === "s0") {
        expect(next(0).slice(0, 3)).toEqual(["settle", "s1", now]);
        // No network: the client hears at once, and settles its side in order.
        expect(log.slice(i + 2, i + 8).map((e) => e.slice(0, 3))).toEqual(clients.map((c) => ["settle", c, now]));
        settledAll++;
      }
    }
    expect(clientRefusals).toBeGreaterThan(50);
    expect(serverRefusals).toBeGreaterThan(20);
    expect(settledAll).toBe(r.summary.admitted);
    expect(r.summary.refusedBy).toEqual({ c5: clientRefusals, s1: serverRefusals });
    // Every admission ended once: settled or released.
    const admitted = log.filter((e) => e[0] === "admit" && e[3] === "ok").length;
    const ended = log.filter((e) => e[0] === "settle" || e[0] === "release").length;
    expect(ended).toBe(admitted);
  });

  it("a policy that throws is named, and the places the ones before it gave are released", () => {
    const log: Entry[] = [];
    const policies = clients.map((c, i) =>
      logged(c, "client", log, i === 3 ? (n) => (n === 20 ? "throw" : "ok") : undefined),
    );
    let thrown: unknown;
    try {
      simulate({ start, seed: 3, duration: 2_000, traffic: traffic.poisson({ rate: 200 }), policies });
    } catch (e) {
      thrown = e;
    }
    expect(isCallbackError(thrown)).toBe(true);
    const e = thrown as Error & { callback: string; cause: unknown };
    expect(e.callback).toBe("policy c3 admit");
    expect(String(e.cause)).toBe("Error: boom c3");
    const at = log.findIndex((x) => x[3] === "throw");
    const now = log[at][2];
    expect(log.slice(at + 1).map((x) => x.slice(0, 3))).toEqual([2, 1, 0].map((k) => ["release", clients[k], now]));
  });
});
