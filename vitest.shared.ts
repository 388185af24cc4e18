// Every package's vitest.config.ts re-exports this. Tests run against sources
// (the "@tideward/source" export condition), so no package has to be built first.
import { defineConfig } from "vitest/config";

export default defineConfig({
  ssr: { resolve: { conditions: ["@tideward/source"] } },
  resolve: { conditions: ["@tideward/source"] },
  test: {
    include: ["test/**/*.test.ts"],
    reporters: ["default", "json"],
    outputFile: { json: ".reports/vitest.json" },
    typecheck: { enabled: false },
    // Tests assert behaviour, never speed (benchmarks do that): on two busy cores a property test
    // that takes 0.3 s alone can take ten times that while turbo runs every suite at once.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
