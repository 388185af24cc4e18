// Every catalogue scenario's full result, at its defaults and one step up, at a start near 0 and
// one at Date.now() scale, is the one recorded in fixtures/catalogue-hashes.json: a refactor
// keeps every run bit for bit, and a change of a figure is recorded on purpose (with
// `tsx --conditions @tideward/source test/catalogue-cases.ts --write`) and explained in its commit.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { FIXTURE, cases, fingerprint, runCase } from "./catalogue-cases";
import type { Fingerprint } from "./catalogue-cases";

const recorded = JSON.parse(readFileSync(FIXTURE, "utf8")) as Record<string, Fingerprint>;
const all = cases();

describe("the catalogue, bit for bit", () => {
  it("records every case, and no other", () => {
    expect(Object.keys(recorded).sort()).toEqual(all.map((c) => c.id).sort());
  });

  it.each(all.map((c) => [c.id, c] as const))("%s", (id, c) => {
    const now = fingerprint(runCase(c));
    // Parts first, so a failure says what moved: a run (by label order), the tables, a figure.
    expect(now.runs).toEqual(recorded[id].runs);
    expect(now.figures).toEqual(recorded[id].figures);
    expect(now.tables).toBe(recorded[id].tables);
    expect(now.report).toBe(recorded[id].report);
    expect(now.hash).toBe(recorded[id].hash);
  });
});
