// Running a situation: its settings (the defaults, and each main knob 20 % either way) and its
// figures from one run of the scenario. Situations on the same scenario, parameters and knobs
// share their runs (a group), so an outage's calls reaching the backend and its recovery come
// from the same runs. Used by `pnpm claims` and by the test that checks claims.json is what the
// simulator gives today.
import { scenario } from "@tideward/sim";
import type { KnobValue, Scenario, ScenarioResult } from "@tideward/sim";
import type { SettingData } from "./data.ts";
import { FACTORS } from "./situations.ts";
import type { Situation } from "./situations.ts";

/** Situations that share their runs. */
export interface Group {
  readonly scenario: Scenario;
  readonly situations: readonly Situation[];
  readonly settings: readonly SettingData[];
}

function scenarioOf(name: string): Scenario {
  const s = scenario(name);
  if (s === undefined) throw new Error(`@tideward/sim has no scenario ${JSON.stringify(name)}`);
  return s;
}

/** A knob's value moved by `factor`, as the knob takes it (whole for an integer knob). */
function scaled(s: Scenario, knob: string, factor: number): number {
  const k = s.knobs.find((x) => x.name === knob);
  if (k === undefined || (k.kind !== "number" && k.kind !== "integer"))
    throw new Error(`${s.name} has no numeric knob ${JSON.stringify(knob)}`);
  const v = k.default * factor;
  return k.kind === "integer" ? Math.round(v) : Number(v.toPrecision(12));
}

/** An end moved so the stretch from the knob `from` to it scales by `factor` (a whole number of seconds, as the ends are). */
function stretched(d: Readonly<Record<string, KnobValue>>, from: string, to: string, factor: number): number {
  const a = Number(d[from]);
  return Math.round(a + (Number(d[to]) - a) * factor);
}

/** The settings a situation runs at: the defaults first, then each main knob at 0.8 and 1.2 of its default. */
export function settingsOf(x: Situation): SettingData[] {
  const s = scenarioOf(x.scenario);
  const own = x.params ?? {};
  const defaults: Record<string, KnobValue> = { ...s.defaults, ...own };
  const out: SettingData[] = [{ label: "the defaults", params: own }];
  for (const n of x.nearby)
    for (const f of FACTORS) {
      const moved =
        n.from === undefined
          ? { [n.knob]: scaled(s, n.knob, f) }
          : { [n.knob]: stretched(defaults, n.from, n.knob, f) };
      out.push({
        label: `${n.what} ${f < 1 ? "−" : "+"}${Math.round(Math.abs(f - 1) * 100)} %`,
        params: { ...own, ...moved },
      });
    }
  return out;
}

/** The situations grouped by the runs they share, in the order first met. */
export function groups(all: readonly Situation[]): Group[] {
  const out = new Map<string, { scenario: Scenario; situations: Situation[]; settings: SettingData[] }>();
  for (const x of all) {
    const settings = settingsOf(x);
    const key = `${x.scenario} ${JSON.stringify(settings)}`;
    const g = out.get(key);
    if (g === undefined) out.set(key, { scenario: scenarioOf(x.scenario), situations: [x], settings });
    else g.situations.push(x);
  }
  return [...out.values()];
}

/** One run of a group's scenario at setting `setting` on `seed`. */
export function runAt(g: Group, setting: number, seed: number): ScenarioResult {
  const at = g.settings[setting];
  if (at === undefined) throw new Error(`${g.scenario.name} has no setting ${setting}`);
  return g.scenario.run({ ...at.params, seed }, { start: 0 });
}

/** Each situation's figure of each contender in one result: `figures[situation id][contender id]`. */
export function figuresOf(g: Group, result: ScenarioResult): Record<string, Record<string, number | null>> {
  return Object.fromEntries(
    g.situations.map((x) => [x.id, Object.fromEntries(x.contenders.map((c) => [c.id, x.figure.read(result, c.id)]))]),
  );
}
