// What a situation of the claims is: a scenario of the simulator's catalogue, the figure a user
// judges the situation by (read from the scenario's result), the runs that are tideward's
// configurations and those that are baselines, and the main knobs a claim must survive ±20 % of;
// and the pieces the situations share (situations.ts lists them). Nothing here runs a scenario.
import type { KnobValue, ScenarioResult } from "@tideward/sim";

/** Which way is better for a figure. */
export type Better = "lower" | "higher";

/**
 * A run of the scenario, by the id its figures are stated under, as the scoreboard names it. A
 * `"reference"` is a run no deployment can be (an oracle that knows what a caller cannot): shown
 * in the READMEs' tables, never ranked.
 */
export interface Contender {
  readonly id: string;
  readonly label: string;
  readonly side: "tideward" | "baseline" | "reference";
}

/** A figure users judge a situation by. */
export interface FigureDef {
  /** What it is, in a few words: "seconds until goodput is back at 90 % after the trigger". */
  readonly label: string;
  /** Its unit as printed after a value: "s", "%", "calls/s", "×", "" for a count. */
  readonly unit: string;
  readonly better: Better;
  /** Decimal places it is printed (and compared) to: two runs that print alike tie. */
  readonly digits: number;
  /** Its value for contender `id` in `result`; `null` when there is none to state (a run that never recovered). */
  read(result: ScenarioResult, id: string): number | null;
  /** What a `null` reads as ("never"); a `null` is worse than any value. */
  readonly none?: string;
}

/** A knob a claim must survive ±20 % of. */
export interface Nearby {
  readonly knob: string;
  /** What moving it means, for a setting's label: "load", "trigger length". */
  readonly what: string;
  /** For a knob that ends a stretch (an outage's end), the knob it starts at: the end moves so the stretch's length scales. */
  readonly from?: string;
}

/** One situation of the scoreboard and the READMEs. */
export interface Situation {
  /** Stable, for the data file and the README's markers: "metastable-served". */
  readonly id: string;
  readonly scenario: string;
  /** Parameters fixed for this situation, over the scenario's defaults. */
  readonly params?: Readonly<Record<string, KnobValue>>;
  /** The situation in a few words, for the scoreboard's first column. */
  readonly title: string;
  readonly figure: FigureDef;
  readonly contenders: readonly Contender[];
  readonly nearby: readonly Nearby[];
  /** Whether the first screen's scoreboard shows it (every situation is in the README). */
  readonly scoreboard: boolean;
  /** Whether one side can win: `false` where the figure is a choice, not a score (a limiter's admissions against its bound). @defaultValue true */
  readonly ranked?: boolean;
  /** Why the result is what it is, one line; it names no figure (the figures are measured, the reason is not). */
  readonly reason: string;
}

/** A figure the scenario states by name; a missing one is an error naming it, never a quiet 0. */
export function stated(result: ScenarioResult, name: string): number {
  const v = result.figures[name];
  if (typeof v !== "number") throw new Error(`${result.scenario} states no figure ${JSON.stringify(name)}`);
  return v;
}

/** Seconds until recovery as the scenario states it (`<id>.recoverySeconds`), `null` when it never recovered (`<id>.recovered` 0, or a negative time). */
export function recovery(result: ScenarioResult, id: string): number | null {
  const recovered = result.figures[`${id}.recovered`];
  const seconds = stated(result, `${id}.recoverySeconds`);
  return recovered === 0 || seconds < 0 ? null : seconds;
}

/** The calls offered to each run (the same traffic for every run of a scenario). */
export function offered(result: ScenarioResult): number {
  return result.runs[0]?.summary.calls ?? 0;
}

export const recoveryFigure = (after: string): FigureDef => ({
  label: `seconds until goodput is back at 90 % after ${after}`,
  unit: "s",
  better: "lower",
  digits: 0,
  read: recovery,
  none: "never",
});

export const goodputFigure: FigureDef = {
  label: "goodput: calls answered within the caller's deadline, of those offered",
  unit: "%",
  better: "higher",
  digits: 1,
  read: (r, id) => stated(r, `${id}.goodputRate`) * 100,
};

/** The retrying clients the overload scenarios set side by side. */
export const retriers = (ids: readonly string[]): Contender[] => {
  const all: Record<string, Contender> = {
    guard: { id: "guard", label: "the guard's default (client breaker, budgeted retries)", side: "tideward" },
    client: { id: "client", label: "client breaker alone", side: "tideward" },
    budget: { id: "budget", label: "retry budget alone", side: "tideward" },
    sre: { id: "sre", label: "sre breaker", side: "tideward" },
    shedder: { id: "shedder", label: "shedder", side: "tideward" },
    retries: { id: "retries", label: "retries, no policy", side: "baseline" },
    none: { id: "none", label: "no retries", side: "baseline" },
    classic: { id: "classic", label: "consecutive breaker (cockatiel)", side: "baseline" },
  };
  return ids.map((id) => {
    const c = all[id];
    if (c === undefined) throw new Error(`no retrying client ${id}`);
    return c;
  });
};

export const breakers: readonly Contender[] = [
  { id: "tideward", label: "the guard's default breaker", side: "tideward" },
  { id: "sre", label: "sre preset", side: "tideward" },
  { id: "classic", label: "consecutive (cockatiel)", side: "baseline" },
  { id: "sampling", label: "sampling (cockatiel)", side: "baseline" },
  { id: "opossum", label: "rolling percentage (opossum)", side: "baseline" },
  { id: "none", label: "no breaker", side: "baseline" },
];

/** Another figure of a situation's runs: the same scenario, settings and contenders (so no run of its own), shown in the READMEs only. */
export function alsoOf(
  base: Situation,
  own: Pick<Situation, "id" | "title" | "figure" | "reason"> & Partial<Situation>,
): Situation {
  return { ...base, scoreboard: false, ...own };
}

/** The factors a main knob is moved by: 20 % either way. */
export const FACTORS = [0.8, 1.2] as const;
