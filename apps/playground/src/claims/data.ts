// What `pnpm claims` measured, as plain data: the file claims.json the scoreboard and the READMEs
// are drawn from. Every figure is one run's, kept per setting and per seed, so a range, a best
// configuration and a count of wins are worked out from it the same way everywhere (stats.ts).
import type { KnobValue } from "@tideward/sim";
import type { Better } from "./situations.ts";

/** One setting of the knobs: the scenario's defaults, or one main knob moved by 20 %. */
export interface SettingData {
  /** "the defaults", "load −20 %". */
  readonly label: string;
  /** The parameters laid over the scenario's defaults (the situation's own included). */
  readonly params: Readonly<Record<string, KnobValue>>;
}

/** One run of the scenario, and its figure in each setting on each seed (`values[setting][seed]`; `null` where there is none to state). */
export interface ContenderData {
  readonly id: string;
  readonly label: string;
  readonly side: "tideward" | "baseline" | "reference";
  readonly values: readonly (readonly (number | null)[])[];
}

/** What was measured of one situation. */
export interface SituationData {
  readonly id: string;
  readonly scenario: string;
  readonly title: string;
  readonly reason: string;
  readonly scoreboard: boolean;
  readonly ranked: boolean;
  readonly figure: {
    readonly label: string;
    readonly unit: string;
    readonly better: Better;
    readonly digits: number;
    readonly none?: string;
  };
  /** The main knobs moved, by what they mean ("load", "trigger length"). */
  readonly moved: readonly string[];
  /** `[0]` is the defaults. */
  readonly settings: readonly SettingData[];
  readonly contenders: readonly ContenderData[];
}

/** The whole file. */
export interface ClaimsData {
  /** The day it was computed (YYYY-MM-DD). */
  readonly computed: string;
  /** The seeds every setting ran on. */
  readonly seeds: readonly number[];
  /** The factors each main knob was moved by. */
  readonly factors: readonly number[];
  readonly situations: readonly SituationData[];
}
