// The public API of every package, read by API Extractor from the built declarations, must be
// the reviewed report in packages/<name>/api/. A deliberate change: `pnpm api:update`, and the
// report's diff goes through review with the code.
import { relative } from "node:path";
import { describe, expect, it } from "vitest";
import { apiEntries, difference, extract, root } from "../../../scripts/api-report.ts";
import { entryPoints, publicPackages } from "./workspace";

describe("the public API", () => {
  const entries = apiEntries();

  it("has a report for every public entry point (./internal is not covered by semver)", () => {
    const expected = [...publicPackages().values()]
      .flatMap(({ manifest }) => entryPoints(manifest))
      .filter((e) => !/\/internal(\/|$)/.test(e));
    expect(entries.map((e) => e.specifier).sort()).toEqual(expected.sort());
  });

  it.each(entries.map((e) => [e.specifier, e] as const))(
    "of %s matches its report",
    { timeout: 60_000 },
    (_, entry) => {
      const r = extract(entry, false);
      expect(r.errors).toEqual([]);
      const where = relative(root, entry.report);
      expect(r.committed, `${where} is missing: run pnpm api:update`).toBeDefined();
      if (r.committed !== r.actual) {
        expect.fail(
          `${where} differs from the built API (run \`pnpm api:update\` if the change is meant):\n${difference(r.committed ?? "", r.actual)}`,
        );
      }
    },
  );
});
