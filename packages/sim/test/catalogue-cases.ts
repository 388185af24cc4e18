// Every catalogue scenario at its defaults and one step up, at a start near 0 and one at
// Date.now() scale, each fingerprinted: a change meant to keep every run bit for bit keeps
// these, and one meant to change a figure changes only the cases and parts it names.
// `catalogue-hashes.test.ts` checks them against `fixtures/catalogue-hashes.json`;
// `tsx --conditions @tideward/source test/catalogue-cases.ts --write` records them anew.
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { catalogue } from "@tideward/sim";
import type { KnobValue, Scenario, ScenarioResult } from "@tideward/sim";

/** Where the recorded fingerprints live. */
export const FIXTURE = new URL("./fixtures/catalogue-hashes.json", import.meta.url);

/** The two starts (ms): 0, and a fractional `Date.now()`-scale reading. */
export const CASE_STARTS = [0, 1_700_000_000_000.375] as const;

/** One case: a scenario, its parameters ("defaults" or "step up") and its start. */
export interface Case {
  readonly id: string;
  readonly scenario: Scenario;
  readonly params: Readonly<Record<string, KnobValue>>;
  readonly start: number;
}

/**
 * Every knob one step up from its default (held at its maximum), a select's next option and a
 * boolean flipped: one set of parameters that moves every knob at once.
 */
export function stepUp(s: Scenario): Record<string, KnobValue> {
  const out: Record<string, KnobValue> = {};
  for (const k of s.knobs) {
    if (k.kind === "boolean") out[k.name] = !k.default;
    else if (k.kind !== "select") out[k.name] = Math.min(k.max, k.default + k.step);
    else {
      const i = k.options.findIndex((o) => o.value === k.default);
      out[k.name] = k.options[(i + 1) % k.options.length].value;
    }
  }
  return out;
}

/** Every case, in a fixed order. */
export function cases(): Case[] {
  return catalogue.flatMap((s) =>
    (["defaults", "step up"] as const).flatMap((which) =>
      CASE_STARTS.map((start) => ({
        id: `${s.name} ${which} @${start}`,
        scenario: s,
        params: which === "defaults" ? s.defaults : stepUp(s),
        start,
      })),
    ),
  );
}

/** A case's fingerprint: the whole result's, its parts' (to say what moved), and its figures. */
export interface Fingerprint {
  readonly hash: string;
  readonly runs: readonly string[];
  readonly tables: string;
  readonly report: string;
  readonly figures: Readonly<Record<string, number>>;
}

function sha(value: unknown): string {
  return createHash("sha256").update(JSON.stringify(value)).digest("hex").slice(0, 16);
}

/** The fingerprint of one scenario result. */
export function fingerprint(r: ScenarioResult): Fingerprint {
  return {
    hash: sha(r),
    runs: r.runs.map((run) => `${run.summary.hash} ${sha(run)}`),
    tables: sha(r.tables),
    report: sha(r.report),
    figures: r.figures,
  };
}

/** Runs one case. */
export function runCase(c: Case): ScenarioResult {
  return c.scenario.run(c.params, { start: c.start });
}

if (process.argv.includes("--write")) {
  const out: Record<string, Fingerprint> = {};
  for (const c of cases()) out[c.id] = fingerprint(runCase(c));
  // Formatted as the repository's format check wants it.
  const prettier = await import("prettier");
  const options = await prettier.resolveConfig(FIXTURE);
  writeFileSync(FIXTURE, await prettier.format(JSON.stringify(out), { ...options, parser: "json" }));
  console.log(`wrote ${Object.keys(out).length} cases to ${FIXTURE.pathname}`);
}
