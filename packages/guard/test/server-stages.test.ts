// The server's keyed stages (admit's per-key limits and quota charge set) as stage modules: their
// parsers name the path under whichever holder reads them, and the pipeline's one asynchronous
// branch (a stage that answers later, at the last place) spends the stages kept for last only
// once it has admitted, at the clock's reading then, and gives everything back on a refusal or a
// failure, at clocks near 0 and near Date.now().
import { describe, expect, it } from "vitest";
import { QuotaEngine, QuotaKey, charge, perSecond } from "@tideward/quota-engine";
import { systemRandom } from "@tideward/time";
import { Pipeline } from "../src/pipeline";
import type { Held } from "../src/pipeline";
import type { Ask, Host, Stage, StageDef } from "../src/stage";
import { STAGES } from "../src/stages/index";

const def = (option: string): StageDef => {
  const d = (STAGES as readonly StageDef[]).find((s) => s.options[0] === option);
  if (d === undefined) throw new Error(`no stage owns ${option}`);
  return d;
};
const host = (owner: string, now: number): Host => ({
  side: "server",
  owner,
  now,
  random: systemRandom,
  retrying: false,
});
const held = (): Held => ({ t0: undefined, t1: undefined, t2: undefined, t3: undefined });
const ask = (key = "k", cost = 1): Ask => ({ cost, hedge: false, first: true, retryAfter: 0, key });

/** A stage that notes what the pipeline asks of it, refusing when `refuse` says so. */
function noting(name: string, log: string[], o: { last?: boolean; refuse?: () => boolean } = {}): Stage<string> {
  return {
    kind: name,
    last: o.last,
    peek: (now) => (log.push(`${name} peek ${now}`), o.refuse?.() !== true),
    enter: (now) => {
      log.push(`${name} enter ${now}`);
      return o.refuse?.() === true ? undefined : name;
    },
    release: (token, now) => void log.push(`${name} release ${token} ${now}`),
  };
}

/** A stage answering later with `answer` (a token, `undefined`, or a rejection when an Error). */
function later(log: string[], answer: () => string | undefined | Error, sync = false): Stage<string> {
  return {
    kind: "late",
    enter: () => {
      throw new Error("asked through enterThen");
    },
    enterThen(now, _ask, go, fail) {
      log.push(`late enter ${now}`);
      const a = answer();
      if (sync) return a instanceof Error ? fail(a) : go(a, false);
      return Promise.resolve().then(() => (a instanceof Error ? fail(a) : go(a, true)));
    },
    release: (token, now) => void log.push(`late release ${token} ${now}`),
  };
}

describe.each([0, 1_700_000_000_123.375])("the server's keyed stages, the clock at %d", (t0) => {
  it("read their options under the holder's name, naming the path typed", () => {
    const keyed = def("limits");
    const quota = def("quota");
    expect(keyed.place.client).toBeUndefined();
    expect(quota.place.client).toBeUndefined();
    expect(keyed.parse({}, host("policy.stage", t0))).toBeUndefined();
    expect(() => keyed.parse({ limits: [{ name: "a", quota: 0, window: 1_000 }] }, host("policy.stage", t0))).toThrow(
      /^policy\.stage limits\[0\]\.quota must be/,
    );
    expect(() => keyed.parse({ maxKeys: 0 }, host("policy.stage", t0))).toThrow(/^policy\.stage maxKeys must be/);
    expect(() =>
      keyed.parse({ limits: [{ name: "a", quota: 2 ** 20, window: 1_000, kind: "sliding" }] }, host("sim", t0)),
    ).toThrow(/^sim limits hold up to \d+ B a key \(limits\[0\] "a", a sliding window of quota 1048576/);
    const engine = new QuotaEngine();
    engine.addLimit(perSecond("api", 5));
    const charges = () => [charge(new QuotaKey("s", "k", "r"), "api")];
    expect(() => quota.parse({ quota: { store: engine, charges, reserve: { ttl: -1 } } }, host("sim", t0))).toThrow(
      /^sim quota\.reserve\.ttl \(ms\) must be/,
    );
    expect(() => quota.parse({ quota: { store: engine, charges, limits: ["apu"] } }, host("sim", t0))).toThrow(
      'sim quota.limits[0] names the limit "apu", which quota.store does not have',
    );
    expect(() => quota.parse({ quota: { store: {}, charges } }, host("sim", t0))).toThrow(
      /^sim quota\.store must be a QuotaStore/,
    );
    expect(() => quota.parse({ quota: { store: engine, charges }, busyRetryAfter: -1 }, host("sim", t0))).toThrow(
      /^sim busyRetryAfter \(ms\) must be/,
    );
    // A charge naming a limit the store lacks is refused at the request, under the same name.
    const stage = quota.parse(
      { quota: { store: engine, charges: () => [charge(new QuotaKey("s", "k", "r"), "apu")] } },
      host("sim", t0),
    ) as Stage;
    expect(() => stage.enter(t0, ask())).toThrow(
      'sim quota.charges named the limit "apu", which is not in quota.store',
    );
  });

  it("the per-key limits charge each key its own, and only look when a quota set follows them", () => {
    const keyed = def("limits");
    const limits = [{ name: "a", quota: 2, window: 1_000 }];
    const alone = keyed.parse({ limits }, host("admit", t0)) as Stage;
    const before = keyed.parse({ limits, quota: {} }, host("admit", t0)) as Stage;
    expect(alone.last).toBe(false);
    expect(before.last).toBe(true);
    for (let i = 0; i < 5; i++) expect(before.peek?.(t0, ask("x", 1))).toBe(true); // looks, takes nothing
    expect(alone.enter(t0, ask("x", 2))).toBe(true);
    const a = ask("x", 1);
    expect(alone.enter(t0, a)).toBeUndefined();
    expect(a.retryAfter).toBeCloseTo(500, 6); // a unit of 2 a second
    expect(alone.enter(t0, ask("y", 2))).toBe(true); // another key's own
  });

  it("a stage that answers later stands last: the pipeline refuses one anywhere else, unless its holder does not wait", () => {
    const log: string[] = [];
    // A holder that does not wait (a simulated chain) enters it as any other stage.
    const plain = new Pipeline([
      { kind: "late", enter: () => (log.push("late enter"), "e"), enterThen: () => "then" } as Stage,
      noting("a", log),
    ]);
    expect(plain.admit(t0, ask(), held())).toBe(true);
    expect(log).toEqual(["late enter", `a enter ${t0}`]);
    expect(() => new Pipeline([later(log, () => "q"), noting("a", log)], true)).toThrow(
      "a stage that answers later (late) must stand last",
    );
  });

  it("spends the stages kept for last once the late stage admitted, at the clock's reading then", async () => {
    const log: string[] = [];
    const p = new Pipeline([noting("a", log), noting("k", log, { last: true }), later(log, () => "q")], true);
    const h = held();
    const answer = await p.admitThen(
      t0,
      ask(),
      h,
      () => t0 + 7.5,
      (ok, late) => ({ ok, late }),
    );
    expect(answer).toEqual({ ok: true, late: true });
    expect(log).toEqual([`a enter ${t0}`, `k peek ${t0}`, `late enter ${t0}`, `k enter ${t0 + 7.5}`]);
    // Every token kept, released last place first.
    p.release(t0 + 9, h);
    expect(log.slice(4)).toEqual([`late release q ${t0 + 9}`, `k release k ${t0 + 9}`, `a release a ${t0 + 9}`]);
    // Answered at once, it goes on at once, at the same instant.
    const now: string[] = [];
    const q = new Pipeline([noting("k", now, { last: true }), later(now, () => "q", true)], true);
    expect(
      q.admitThen(
        t0,
        ask(),
        held(),
        () => Number.NaN,
        (ok, late) => ({ ok, late }),
      ),
    ).toEqual({ ok: true, late: false });
    expect(now).toEqual([`k peek ${t0}`, `late enter ${t0}`, `k enter ${t0}`]);
  });

  it("gives everything back when the late stage refuses, a stage kept for last refuses after it, or its store fails", async () => {
    for (const [answer, refuseK, expected] of [
      [() => undefined, false, 2],
      [() => "q", true, 1],
    ] as const) {
      const log: string[] = [];
      const p = new Pipeline(
        [
          noting("a", log),
          noting("k", log, { last: true, refuse: () => refuseK && log.length > 3 }),
          later(log, answer),
        ],
        true,
      );
      const h = held();
      const got = await p.admitThen(
        t0,
        ask(),
        h,
        () => t0 + 1,
        (ok) => ({ ok, by: p.refusedBy }),
      );
      expect(got).toEqual({ ok: false, by: expected });
      // Given back at NaN: a stage that needs the time reads it then.
      expect(log.filter((l) => l.includes("release"))).toEqual(
        refuseK ? ["late release q NaN", "a release a NaN"] : ["a release a NaN"],
      );
      expect(h).toEqual(held());
    }
    const log: string[] = [];
    const p = new Pipeline([noting("a", log), later(log, () => new Error("store down"))], true);
    const h = held();
    await expect(
      p.admitThen(
        t0,
        ask(),
        h,
        () => t0,
        () => "decided",
      ),
    ).rejects.toThrow("store down");
    expect(log).toEqual([`a enter ${t0}`, `late enter ${t0}`, "a release a NaN"]);
    expect(h).toEqual(held());
    // A stage before it that refuses: the late one is never asked.
    const early: string[] = [];
    const r = new Pipeline([noting("a", early, { refuse: () => true }), later(early, () => "q")], true);
    expect(
      r.admitThen(
        t0,
        ask(),
        held(),
        () => t0,
        (ok, late) => ({ ok, late, by: r.refusedBy }),
      ),
    ).toEqual({
      ok: false,
      late: false,
      by: 0,
    });
    expect(early).toEqual([`a enter ${t0}`]);
  });
});
