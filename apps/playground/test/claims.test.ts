// The claims the scoreboard and the READMEs state: claims.json is what the simulator gives
// today (each group of situations run again at its defaults on seed 1), the READMEs print what
// claims.json gives, and the arithmetic that reads it calls a tie a tie.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { scenario } from "@tideward/sim";
import { describe, expect, it } from "vitest";
import type { ClaimsData, SituationData } from "../src/claims/data";
import { claimsBlock, scoreboardBlock, sideBySide, within } from "../src/claims/markdown";
import { figuresOf, groups, runAt, settingsOf } from "../src/claims/measure";
import { TOKEN_BUDGET_SITUATIONS, situations } from "../src/claims/situations";
import { all, best, compare, range, tally, verdictOf } from "../src/claims/stats";

const app = join(import.meta.dirname, "..");
const claims = JSON.parse(readFileSync(join(app, "src", "claims", "claims.json"), "utf8")) as ClaimsData;

describe("claims.json", () => {
  it("holds every situation, each at the defaults and with each main knob 20 % either way, on the same seeds", () => {
    expect(claims.situations.map((s) => s.id)).toEqual(situations.map((s) => s.id));
    for (const x of situations) {
      const s = claims.situations.find((y) => y.id === x.id);
      expect(s?.settings, x.id).toEqual(settingsOf(x));
      for (const c of s?.contenders ?? []) {
        expect(c.values.length, `${x.id} / ${c.id}`).toBe(s?.settings.length);
        for (const row of c.values) expect(row.length, `${x.id} / ${c.id}`).toBe(claims.seeds.length);
      }
    }
  });

  it("moves each main knob by 20 % of its default, one at a time, over the situation's own parameters", () => {
    for (const x of situations) {
      const sim = scenario(x.scenario);
      if (sim === undefined) throw new Error(`no scenario ${x.scenario}`);
      const base = { ...sim.defaults, ...x.params };
      const [defaults, ...moved] = settingsOf(x);
      expect(defaults?.params, x.id).toEqual(x.params ?? {});
      expect(moved).toHaveLength(x.nearby.length * 2);
      moved.forEach((setting, i) => {
        const knob = x.nearby[Math.floor(i / 2)]?.knob ?? "";
        const changed = Object.keys(setting.params).filter((k) => setting.params[k] !== base[k]);
        expect(changed, `${x.id}: ${setting.label}`).toEqual([knob]);
        // An end that moves so a stretch scales is checked by the stretch; a knob by its own value.
        const start = x.nearby[Math.floor(i / 2)]?.from;
        const from = start === undefined ? 0 : Number(base[start]);
        const ratio = (Number(setting.params[knob]) - from) / (Number(base[knob]) - from);
        expect(Math.abs(ratio - (i % 2 === 0 ? 0.8 : 1.2)), `${x.id}: ${setting.label}`).toBeLessThan(0.06);
      });
    }
  });

  it(
    "is what the simulator gives today: every situation's figures at the defaults on seed 1, run again",
    { timeout: 120_000 },
    () => {
      const seed = claims.seeds.indexOf(1);
      expect(seed).toBeGreaterThanOrEqual(0);
      for (const g of groups(situations)) {
        const now = figuresOf(g, runAt(g, 0, 1));
        for (const x of g.situations) {
          const s = claims.situations.find((y) => y.id === x.id);
          for (const c of s?.contenders ?? []) {
            const v = now[x.id]?.[c.id];
            const stored = c.values[0]?.[seed] ?? null;
            const where = `${x.id} / ${c.id}: claims.json says ${String(stored)}, the simulator ${String(v)} (run pnpm claims)`;
            if (v === null || v === undefined) expect(stored, where).toBeNull();
            else expect(stored, where).toBeCloseTo(v, x.figure.digits + 1);
          }
        }
      }
    },
  );
});

describe("the READMEs", () => {
  it("print the scoreboard claims.json gives, between their markers", () => {
    const readme = readFileSync(join(app, "..", "..", "README.md"), "utf8");
    expect(within(readme, "scoreboard")).toBe(scoreboardBlock(claims));
  });

  it("the simulator's README prints every situation's ranges claims.json gives, between its markers", () => {
    const readme = readFileSync(join(app, "..", "..", "packages", "sim", "README.md"), "utf8");
    expect(within(readme, "claims")).toBe(claimsBlock(claims));
  });
});

describe("the package READMEs", () => {
  it("the quota engine's README sets the token-budget situations side by side as claims.json gives them, a row each way and the oracle, a column each figure", () => {
    const readme = readFileSync(join(app, "..", "..", "packages", "quota-engine", "README.md"), "utf8");
    const block = within(readme, "token-budget");
    expect(block).toBe(sideBySide(claims, TOKEN_BUDGET_SITUATIONS));
    const served = claims.situations.find((s) => s.id === "token-budget-served");
    if (served === undefined) throw new Error("no token-budget-served");
    const rows =
      block?.split("\n").filter((l) => l.startsWith("| ") && !l.startsWith("| |") && !l.startsWith("| ---")) ?? [];
    expect(rows.map((l) => l.split(" | ")[0]?.slice(2))).toEqual(served.contenders.map((c) => c.label));
    for (const l of rows) expect(l.split(" | ")).toHaveLength(TOKEN_BUDGET_SITUATIONS.length + 1);
    // The oracle is a reference: printed, never the best baseline.
    for (const id of TOKEN_BUDGET_SITUATIONS) {
      const s = claims.situations.find((x) => x.id === id);
      expect(s && best(s, "baseline")?.side, id).toBe("baseline");
    }
  });

  /** What a README quotes of the claims: a situation's range for one run, over every setting. */
  const quoted: readonly { readme: string; situation: string; contender: string }[] = [
    { readme: "breaker", situation: "breaker-outage-reached", contender: "tideward" },
    { readme: "breaker", situation: "breaker-outage-reached", contender: "classic" },
    { readme: "breaker", situation: "breaker-outage-reached", contender: "sre" },
    { readme: "breaker", situation: "breaker-outage-recovery", contender: "tideward" },
    { readme: "breaker", situation: "breaker-outage-recovery", contender: "classic" },
    { readme: "breaker", situation: "breaker-outage-recovery", contender: "sre" },
    { readme: "quota-engine", situation: "token-budget-estimate", contender: "reserve" },
  ];

  it("quote the ranges claims.json gives, as it prints them", () => {
    for (const q of quoted) {
      const text = readFileSync(join(app, "..", "..", "packages", q.readme, "README.md"), "utf8").replace(/\s+/g, " ");
      const s = claims.situations.find((x) => x.id === q.situation);
      const c = s?.contenders.find((x) => x.id === q.contender);
      if (s === undefined || c === undefined) throw new Error(`no ${q.situation} / ${q.contender}`);
      // As a sentence quotes it: the figures and their unit, the unit once.
      const printed = range(s, all(c));
      expect(text, `${q.readme} quotes ${q.situation} / ${q.contender}`).toContain(printed.replace(/ (%|s)$/, ""));
    }
  });
});

describe("reading the claims", () => {
  const s: Pick<SituationData, "figure"> = {
    figure: { label: "", unit: "s", better: "lower", digits: 1, none: "never" },
  };
  const figure = fc.option(fc.double({ min: 0, max: 1_000, noNaN: true }), { nil: null });

  it("calls two figures that print alike a tie, never a win by a digit nobody sees, and a run with none the worst", () => {
    expect(compare(s, 1.04, 0.96)).toBe(0);
    expect(compare(s, 1.06, 0.96)).toBe(1);
    expect(compare(s, 0.9, null)).toBe(-1);
    expect(compare(s, null, null)).toBe(0);
    fc.assert(
      fc.property(figure, figure, (a, b) => {
        expect(compare(s, a, b)).toBe(-compare(s, b, a) || 0);
        if (a !== null && b !== null) expect(compare(s, a, b) === 0).toBe(a.toFixed(1) === b.toFixed(1));
      }),
    );
  });

  it("counts every run once, and names the verdict the counts give", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(figure, figure), { minLength: 1, maxLength: 30 }), (pairs) => {
        const data: SituationData = {
          ...s,
          id: "x",
          scenario: "x",
          title: "",
          reason: "",
          scoreboard: true,
          ranked: true,
          moved: [],
          settings: [{ label: "", params: {} }],
          contenders: [
            { id: "a", label: "a", side: "tideward", values: [pairs.map(([a]) => a)] },
            { id: "b", label: "b", side: "baseline", values: [pairs.map(([, b]) => b)] },
          ],
        };
        const [a, b] = data.contenders as [SituationData["contenders"][0], SituationData["contenders"][0]];
        const t = tally(data, a, b);
        expect(t.ahead + t.tied + t.behind).toBe(pairs.length);
        const v = verdictOf(t);
        expect(v === "tie").toBe(t.ahead === 0 && t.behind === 0);
        if (v === "ahead") expect(t.behind).toBe(0);
        if (v === "behind") expect(t.ahead).toBe(0);
      }),
    );
  });

  it("prints a range as least to most, with the runs that had none", () => {
    expect(range(s, [1, 0.5, 3])).toBe("0.5–3.0 s");
    expect(range(s, [2, 2])).toBe("2.0 s");
    expect(range(s, [1, null, 3, null])).toBe("1.0–3.0 s, never in 2 of 4");
    expect(range(s, [null, null])).toBe("never (all 2)");
  });
});
