// The README's worked traces are what the package computes (test/traces.ts), not numbers typed
// by hand: a change to an algorithm that moves a trace fails here until the README is rewritten.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { readmePath, rewrite, traces } from "./traces";

describe("README traces", () => {
  const readme = readFileSync(readmePath, "utf8");
  it.each(Object.keys(traces()))("%s is the trace the package computes", (name) => {
    const block = new RegExp(`<!-- trace:${name} -->\\n([\\s\\S]*?)\\n<!-- /trace:${name} -->`).exec(readme);
    expect(block?.[1]).toBe(traces()[name]);
  });
  it("has nothing else out of date", () => {
    expect(rewrite(readme)).toBe(readme);
  });
});
