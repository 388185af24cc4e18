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
    // Type tests (test/*.test-d.ts): tsc checks the inference users rely on, and every
    // `@ts-expect-error` must still be an error. Each package's tsconfig.types.json holds only
    // them (and what they import): the package's typecheck task checks the rest once already.
    typecheck: { enabled: true, include: ["test/**/*.test-d.ts"], tsconfig: "./tsconfig.types.json" },
    // Tests assert behaviour, never speed (benchmarks do that): on two busy cores a property test
    // that takes 0.3 s alone can take ten times that while turbo runs every suite at once.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // A worker runs its files one after another in one module graph: what they import (the
    // packages' sources, fast-check, the OpenTelemetry SDK, Express) is evaluated once a worker,
    // not once a file. On two cores that was a third to over half of a suite's CPU time (otel
    // 31 s -> 21 s, guard 77 s -> 38 s, redis 86 s -> 32 s), and under load a fork per file could
    // fail to start.
    // No file leaves state in a shared module for the next to find.
    isolate: false,
  },
});
