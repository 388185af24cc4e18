// admit's per-key limits changed while the service runs: replaced, removed, and overridden for
// one key. Each key keeps its state, re-based as the quota engine re-bases it, and the fields
// advertise the limit in force from the next response on.
import { createServer } from "node:http";
import express from "express";
import fc from "fast-check";
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { admit, admitFetch } from "@tideward/guard";
import { admitNode } from "@tideward/guard/node";
import type { Admission, Limit, LimitKind, Verdict } from "@tideward/guard";
import { limits, policies } from "./fields";
import { sync } from "./support/admit";
import { listening, serveFetch } from "./support/servers";
import type { Listening } from "./support/servers";

/** An admission on a clock the test moves. */
function at(t0: number, ...given: Limit[]): { a: Admission; clock: { now: number } } {
  const clock = { now: t0 };
  return { a: admit({ limits: given, clock: () => clock.now }), clock };
}

const field = (v: Verdict, name: string) =>
  v.headers
    .filter(([n]) => n === name)
    .map(([, value]) => value)
    .join(", ");
const policy = (v: Verdict) => policies(field(v, "RateLimit-Policy"));
const state = (v: Verdict) => limits(field(v, "RateLimit"));

/** Admits `n` requests of `key` (cost 1 each), failing if one is refused. */
function take(a: Admission, key: string, n: number): void {
  for (let i = 0; i < n; i++) expect(sync(a.check(key)).allowed, `request ${i + 1} of ${n}`).toBe(true);
}

describe.each([0, 1_700_000_000_123.375])("replaceLimit with the clock at %d", (t0) => {
  it("a bucket keeps its level, clamped to the new quota, and refills at the new rate", () => {
    const { a, clock } = at(t0, { name: "api", quota: 10, window: 10_000 });
    take(a, "alice", 2); // holds 8
    a.replaceLimit({ name: "api", quota: 5, window: 10_000 });
    const v = sync(a.check("alice"));
    expect(policy(v)).toEqual([{ name: "api", q: 5, w: 10 }]);
    expect(state(v)).toEqual([{ name: "api", r: 4, t: 2 }]); // 5 held, one taken
    take(a, "alice", 4);
    expect(sync(a.check("alice")).retryAfter).toBe(2_000); // a token each 2 s under the new rate
    // Raised while it held little: the level is kept, not filled.
    a.replaceLimit({ name: "api", quota: 20, window: 10_000 });
    clock.now += 500;
    const w = sync(a.check("alice"));
    expect(state(w)).toEqual([{ name: "api", r: 0, t: 1 }]); // 0 + 500 ms at 2 a second = 1, taken
    // A key at rest is full under the new limit, as a key never seen is.
    take(a, "bob", 20);
  });

  it("a GCRA flow stays as far ahead of now as it was, at most the new burst's worth", () => {
    const { a } = at(t0, { name: "api", quota: 10, window: 1_000, kind: "gcra" }); // a unit each 100 ms
    take(a, "alice", 3); // 300 ms ahead
    a.replaceLimit({ name: "api", quota: 4, window: 800 }); // a unit each 200 ms, burst 4
    // 300 ms ahead of 800 tolerated: 2 more fit now (700), the third 100 ms later.
    take(a, "alice", 2);
    const v = sync(a.check("alice"));
    expect([v.allowed, v.retryAfter]).toEqual([false, 100]);
    expect(policy(v)).toEqual([{ name: "api", q: 4, w: 1 }]);
    // Far ahead, then a smaller burst: at most the new burst's worth ahead (a full wait of one unit).
    const { a: b } = at(t0, { name: "api", quota: 10, window: 1_000, kind: "gcra" });
    take(b, "alice", 10); // 1 000 ms ahead
    b.replaceLimit({ name: "api", quota: 2, window: 1_000 }); // 500 ms a unit, 1 000 tolerated
    expect(sync(b.check("alice")).retryAfter).toBe(500);
  });

  it("a fixed window keeps its count and closes when it would have, or a new window after now if sooner", () => {
    const { a, clock } = at(t0, { name: "jobs", quota: 10, window: 10_000, kind: "period" });
    take(a, "alice", 7);
    clock.now += 1_000;
    a.replaceLimit({ name: "jobs", quota: 5, window: 10_000 });
    const v = sync(a.check("alice"));
    expect([v.allowed, v.retryAfter]).toEqual([false, 9_000]); // 7 counted of 5: until it closes
    expect(policy(v)).toEqual([{ name: "jobs", q: 5, w: 10 }]);
    a.replaceLimit({ name: "jobs", quota: 8, window: 2_000 }); // a shorter window: closes 2 s from now
    take(a, "alice", 1);
    expect(sync(a.check("alice")).retryAfter).toBe(2_000);
    clock.now += 2_000;
    take(a, "alice", 8);
  });

  it("a sliding window keeps the events still inside the new window, never earlier than they came", () => {
    const { a, clock } = at(t0, { name: "s", quota: 4, window: 10_000, kind: "sliding" });
    take(a, "alice", 2);
    clock.now += 3_000;
    take(a, "alice", 1); // stamps at 0, 0 and 3 000
    a.replaceLimit({ name: "s", quota: 3, window: 10_000 });
    const v = sync(a.check("alice"));
    // All three counted as of the newest (3 000): the window is full until 13 000.
    expect([v.allowed, v.retryAfter]).toEqual([false, 10_000]);
    a.replaceLimit({ name: "s", quota: 3, window: 2_000 }); // a shorter window: they fall out 2 s after the newest
    clock.now += 2_000;
    take(a, "alice", 3);
  });

  it("leaves another limit's state and its fields alone; a removed limit leaves the fields", () => {
    const { a } = at(t0, { name: "burst", quota: 5, window: 1_000 }, { name: "daily", quota: 100, window: 86_400_000 });
    take(a, "alice", 3);
    a.replaceLimit({ name: "burst", quota: 10, window: 1_000 });
    const v = sync(a.check("alice"));
    expect(policy(v)).toEqual([
      { name: "burst", q: 10, w: 1 },
      { name: "daily", q: 100, w: 86_400 },
    ]);
    expect(state(v).map((m) => m.r)).toEqual([1, 96]);
    a.removeLimit("burst");
    const w = sync(a.check("alice"));
    expect(policy(w)).toEqual([{ name: "daily", q: 100, w: 86_400 }]);
    expect(state(w)).toEqual([{ name: "daily", r: 95, t: 864 }]);
    a.removeLimit("daily");
    const x = sync(a.check("alice"));
    expect([x.allowed, x.headers]).toEqual([true, []]);
  });
});

describe.each([0, 1_700_000_000_123.375])("setOverride with the clock at %d", (t0) => {
  it("gives one key its own quota, advertised to it alone, and keeps it over a replaced limit", () => {
    const { a, clock } = at(t0, { name: "api", quota: 10, window: 10_000 });
    take(a, "acme", 4); // holds 6
    a.setOverride("acme", "api", { quota: 50 });
    const v = sync(a.check("acme"));
    expect(policy(v)).toEqual([{ name: "api", q: 50, w: 10 }]);
    expect(state(v)[0].r).toBe(5); // the level kept: 6, one taken
    expect(policy(sync(a.check("bob")))).toEqual([{ name: "api", q: 10, w: 10 }]);
    clock.now += 10_000; // acme refills at 50 per 10 s to 50
    take(a, "acme", 50);
    expect(sync(a.check("acme")).allowed).toBe(false);
    // The limit's window changes: acme keeps its quota over the new window, bob takes both.
    a.replaceLimit({ name: "api", quota: 10, window: 20_000 });
    expect(policy(sync(a.check("bob")))).toEqual([{ name: "api", q: 10, w: 20 }]);
    const w = sync(a.check("acme"));
    expect([w.allowed, policy(w)]).toEqual([false, [{ name: "api", q: 50, w: 20 }]]);
    expect(w.retryAfter).toBe(400); // 50 per 20 s: a unit each 400 ms
    // Taken away: acme's state re-based onto the limit (empty stays empty).
    a.removeOverride("acme", "api");
    const x = sync(a.check("acme"));
    expect([x.allowed, x.retryAfter, policy(x)]).toEqual([false, 2_000, [{ name: "api", q: 10, w: 20 }]]);
  });

  it("a key with no state yet starts from its own limit; a second setOverride replaces the first", () => {
    const { a } = at(t0, { name: "api", quota: 2, window: 1_000, kind: "period" });
    a.setOverride("acme", "api", { quota: 3 });
    a.setOverride("acme", "api", { window: 5_000 });
    const v = sync(a.check("acme"));
    expect(policy(v)).toEqual([{ name: "api", q: 2, w: 5 }]);
    take(a, "acme", 1);
    expect(sync(a.check("acme")).retryAfter).toBe(5_000);
  });
});

describe("runtime limit changes refuse bad input, naming it, and change nothing", () => {
  const made = () =>
    at(0, { name: "burst", quota: 5, window: 1_000 }, { name: "daily", quota: 100, window: 86_400_000 });
  it.each([
    [
      (a: Admission) => a.replaceLimit({ name: "brust", quota: 3, window: 1_000 }),
      RangeError,
      'admit replaceLimit limit.name "brust" is not one of admit\'s limits ("burst", "daily"); did you mean "burst"?',
    ],
    [
      (a: Admission) => a.replaceLimit({ name: "burst", quota: 0, window: 1_000 }),
      RangeError,
      "admit replaceLimit limit.quota must be",
    ],
    [
      (a: Admission) => a.replaceLimit({ name: "burst", quota: 3, window: 1_000, kind: "sliding" }),
      TypeError,
      'admit replaceLimit limit.kind "sliding" is not the limit\'s kind ("bucket"): a key\'s state does not carry over between algorithms',
    ],
    [
      (a: Admission) => a.replaceLimit({ name: "burst", quota: 3, windw: 1_000 } as never),
      TypeError,
      'did you mean "window"?',
    ],
    [
      (a: Admission) => a.replaceLimit(null as never),
      TypeError,
      "admit replaceLimit limit options must be an object, got null",
    ],
    [
      (a: Admission) => a.removeLimit("weekly"),
      RangeError,
      'admit removeLimit name "weekly" is not one of admit\'s limits',
    ],
    [(a: Admission) => a.setOverride("k", "dayly", { quota: 1 }), RangeError, 'did you mean "daily"?'],
    [(a: Admission) => a.setOverride("k", "daily", { qouta: 1 } as never), TypeError, 'did you mean "quota"?'],
    [
      (a: Admission) => a.setOverride("k", "daily", { quota: 1.5 }),
      RangeError,
      "admit setOverride fields.quota must be",
    ],
    [
      (a: Admission) => a.setOverride(5 as never, "daily", { quota: 1 }),
      TypeError,
      "admit setOverride key must be a string, got number 5",
    ],
    [
      (a: Admission) => a.removeOverride("k", "daily"),
      RangeError,
      'admit removeOverride: key "k" has no override of "daily"',
    ],
  ] as const)("%#", (change, error, message) => {
    const { a } = made();
    take(a, "k", 2);
    expect(() => change(a)).toThrow(error);
    expect(() => change(a)).toThrow(message);
    // Nothing changed: the same figures, the same state.
    const v = sync(a.check("k"));
    expect(policy(v)).toEqual([
      { name: "burst", q: 5, w: 1 },
      { name: "daily", q: 100, w: 86_400 },
    ]);
    expect(state(v).map((m) => m.r)).toEqual([2, 97]);
  });

  it("an admission without per-key limits says so; limits past maxBytes are refused whole", () => {
    expect(() => admit({ gate: 1 }).replaceLimit({ name: "x", quota: 1, window: 1 })).toThrow(
      "admit replaceLimit: this admission has no per-key limits (give them in its limits option)",
    );
    const a = admit({
      maxKeys: 100,
      maxBytes: 200_000,
      limits: [{ name: "s", quota: 10, window: 1_000, kind: "sliding" }],
    });
    expect(() => a.replaceLimit({ name: "s", quota: 1_000, window: 1_000 })).toThrow(
      /^admit replaceLimit: the limits would hold up to 8952 B a key \(limits\[0\] "s", a sliding window of quota 1000/,
    );
    expect(() => a.setOverride("big", "s", { quota: 1_000 })).toThrow(
      'admit setOverride would have key "big" hold up to 8952 B, past what a key may hold (maxBytes / maxKeys: 2.0 KiB)',
    );
    expect(policy(sync(a.check("big")))).toEqual([{ name: "s", q: 10, w: 1 }]);
  });

  it("at most maxKeys keys have overrides", () => {
    const a = admit({ maxKeys: 2, limits: [{ name: "api", quota: 5, window: 1_000 }] });
    a.setOverride("a", "api", { quota: 1 });
    a.setOverride("b", "api", { quota: 1 });
    a.setOverride("b", "api", { quota: 2 }); // a key that has one already
    expect(() => a.setOverride("c", "api", { quota: 1 })).toThrow(
      "admit setOverride: 2 keys have overrides already, the most maxKeys allows",
    );
    a.removeOverride("a", "api");
    a.setOverride("c", "api", { quota: 1 });
  });
});

const kinds: readonly LimitKind[] = ["bucket", "gcra", "period", "sliding"];

/** Random traffic: gaps (ms) and costs, for one or two keys. */
const traffic = fc.array(
  fc.record({
    gap: fc.double({ min: 0, max: 400, noNaN: true }),
    key: fc.constantFrom("a", "b"),
    cost: fc.integer({ min: 1, max: 3 }),
  }),
  { maxLength: 40 },
);

describe.each([0, 1_700_000_000_123.375])("runtime limit properties with the clock at %d", (t0) => {
  it("a replace by the same figures, or an override taken away again, changes no answer", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...kinds),
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 1, max: 3_000 }),
        traffic,
        traffic,
        (kind, quota, window, before, after) => {
          const l: Limit = { name: "l", quota, window, kind };
          const plain = at(t0, l);
          const changed = at(t0, l);
          const run = (steps: typeof before) =>
            steps.map((s) =>
              [plain, changed].map((r) => {
                r.clock.now += s.gap;
                const v = sync(r.a.check(s.key, s.cost));
                return { allowed: v.allowed, retryAfter: v.retryAfter, policy: policy(v), state: state(v) };
              }),
            );
          for (const [p, c] of run(before)) expect(c).toEqual(p);
          changed.a.replaceLimit({ ...l });
          for (const [p, c] of run(before)) expect(c).toEqual(p);
          changed.a.setOverride("a", "l", { quota: quota + 1 });
          changed.a.removeOverride("a", "l");
          // Through another limit and back: a bucket's level is re-based as q − (q − level), a
          // float step or so apart, which a wait may show in its last digits (never a unit); a
          // sliding window's events are all counted as of the newest (later, never earlier).
          for (const [p, c] of run(after)) {
            if (kind === "sliding" && c.allowed !== p.allowed) {
              expect([p.allowed, c.allowed]).toEqual([true, false]); // stricter, never looser
              break;
            }
            expect([c.allowed, c.policy]).toEqual([p.allowed, p.policy]);
            if (kind === "sliding") continue;
            expect(c.state.map((m) => m.r)).toEqual(p.state.map((m) => m.r));
            if (c.retryAfter !== p.retryAfter)
              expect(Math.abs(c.retryAfter - p.retryAfter)).toBeLessThanOrEqual(1e-9 * window);
            expect(Math.abs(c.state[0].t - p.state[0].t)).toBeLessThanOrEqual(kind === "bucket" ? 1 : 0);
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it("after a bucket or GCRA is replaced, a key admits no more than it held (clamped) and the new rate brings", () => {
    fc.assert(
      fc.property(
        fc.constantFrom<LimitKind>("bucket", "gcra"),
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 100, max: 5_000 }),
        traffic,
        traffic,
        (kind, quota, next, window, before, after) => {
          const { a, clock } = at(t0, { name: "l", quota, window, kind });
          let r = quota;
          for (const s of before) {
            clock.now += s.gap;
            r = state(sync(a.check("a", s.cost)))[0].r;
          }
          // What the key holds, read off its last RateLimit member: r whole units, under r + 1. A
          // GCRA flow keeps how far ahead it runs: at least (quota − r − 1) units of the old interval.
          const start = clock.now;
          a.replaceLimit({ name: "l", quota: next, window });
          // A key that is whole is at rest: whole under the new limit too, as a key never seen.
          const held =
            r >= quota
              ? next
              : kind === "bucket"
                ? Math.min(r + 1, next)
                : Math.max(0, next - ((quota - r - 1) * window) / quota / (window / next));
          let admitted = 0;
          for (const s of after) {
            clock.now += s.gap;
            if (sync(a.check("a", s.cost)).allowed) admitted += s.cost;
          }
          const refilled = ((clock.now - start) * next) / window;
          expect(admitted).toBeLessThanOrEqual(Math.min(next, held) + refilled + 1e-6 * next);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("after a fixed window is replaced, the open window admits no more than the new quota less its count", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 100, max: 5_000 }),
        fc.integer({ min: 100, max: 5_000 }),
        traffic,
        traffic,
        (quota, next, window, nextWindow, before, after) => {
          const { a, clock } = at(t0, { name: "l", quota, window, kind: "period" });
          let last = { r: quota, t: 0 };
          let lastAt = clock.now;
          for (const s of before) {
            clock.now += s.gap;
            const v = sync(a.check("a", s.cost));
            // A cost past the quota never fits: its t is no window's end.
            if (s.cost <= quota) [last, lastAt] = [state(v)[0], clock.now];
          }
          const used = quota - last.r;
          // The open window ends no later than it would have (t read when `last` was, not now),
          // nor later than a new window from now.
          const end = Math.min(used > 0 ? lastAt + last.t * 1_000 : clock.now, clock.now + nextWindow);
          a.replaceLimit({ name: "l", quota: next, window: nextWindow });
          let admitted = 0;
          for (const s of after) {
            clock.now += s.gap;
            const v = sync(a.check("a", s.cost));
            if (clock.now >= end - 1_000) break; // t is whole seconds: past the end's second, a new window may be open
            if (v.allowed) admitted += s.cost;
          }
          if (used > 0) expect(admitted).toBeLessThanOrEqual(Math.max(0, next - used));
        },
      ),
      {
        numRuns: 300,
        // The window closed while a request too large for it was refused: its count is gone.
        examples: [
          [
            1,
            1,
            100,
            1_000,
            [
              { gap: 0, key: "a", cost: 1 },
              { gap: 104.96773083693222, key: "a", cost: 2 },
            ],
            [{ gap: 0, key: "a", cost: 1 }],
          ],
        ],
      },
    );
  });
});

type Serve = (admission: Admission) => Promise<Listening>;

const servers: readonly (readonly [string, Serve])[] = [
  [
    "node:http",
    (a) => {
      const middleware = admitNode(a, { key: (req) => req.headers["x-api-key"]?.toString() });
      return listening(createServer((req, res) => middleware(req, res, () => res.end("ok"))));
    },
  ],
  [
    "Express 5",
    (a) => {
      const app = express();
      app.use(admitNode(a, { key: (req) => req.headers["x-api-key"]?.toString() }));
      app.get("/", (_req, res) => void res.send("ok"));
      return listening(createServer(app));
    },
  ],
  [
    "Hono 4",
    async (a) => {
      const app = new Hono();
      app.get("/", (c) => c.text("ok"));
      return listening(
        await serveFetch(admitFetch(a, app.fetch, { key: (request) => request.headers.get("x-api-key") ?? undefined })),
      );
    },
  ],
];

describe.each(servers)("%s: limits changed while the server runs", (_name, start) => {
  it("advertises a replaced limit from the next response on, and a key's override to that key alone", async () => {
    const admission = admit({ limits: [{ name: "api", quota: 3, window: 60_000 }] });
    const { url, close } = await start(admission);
    try {
      const as = async (key: string) => {
        const res = await fetch(url, { headers: { "x-api-key": key } });
        await res.text();
        return {
          status: res.status,
          policy: policies(res.headers.get("ratelimit-policy")),
          r: limits(res.headers.get("ratelimit"))[0].r,
        };
      };
      expect(await as("acme")).toEqual({ status: 200, policy: [{ name: "api", q: 3, w: 60 }], r: 2 });
      admission.replaceLimit({ name: "api", quota: 2, window: 60_000 }); // acme holds 2: kept
      expect(await as("acme")).toEqual({ status: 200, policy: [{ name: "api", q: 2, w: 60 }], r: 1 });
      admission.setOverride("acme", "api", { quota: 50 });
      expect(await as("acme")).toEqual({ status: 200, policy: [{ name: "api", q: 50, w: 60 }], r: 0 });
      expect(await as("bob")).toEqual({ status: 200, policy: [{ name: "api", q: 2, w: 60 }], r: 1 });
      admission.removeOverride("acme", "api");
      expect((await as("acme")).status).toBe(429);
      admission.removeLimit("api");
      const res = await fetch(url, { headers: { "x-api-key": "acme" } });
      expect([res.status, await res.text(), res.headers.has("ratelimit-policy")]).toEqual([200, "ok", false]);
    } finally {
      await close();
    }
  });
});
