// The shared settings, as three projects: the example programs' tests (`test:examples`), the
// page's model (`test/web`), and the page in Chromium (`test/web/page`), whose files share one
// build of the page, served for them all by a global setup that runs only when one of them runs.
// The examples (which time real servers) and the model's tests run a process a file, as before.
// The page's files keep no state in a module (each launches its Chromium and opens its own
// pages), so a worker evaluates what they import once, not once a file.
import { defineConfig } from "vitest/config";
import type { TestProjectInlineConfiguration } from "vitest/config";
import shared from "../../vitest.shared.ts";

const { test = {}, ...vite } = shared;
// What a run reports, and where, is the run's, not a project's.
const { reporters: _reporters, outputFile: _outputFile, ...perProject } = test;
const project = (options: NonNullable<TestProjectInlineConfiguration["test"]>): TestProjectInlineConfiguration => ({
  ...vite,
  test: { ...perProject, ...options },
});

export default defineConfig({
  ...shared,
  test: {
    ...test,
    projects: [
      project({ name: "examples", exclude: ["test/web/**"], isolate: true }),
      project({ name: "web", include: ["test/web/*.test.ts"], isolate: true }),
      project({
        name: "page",
        include: ["test/web/page/*.test.ts"],
        globalSetup: ["test/web/page/setup.ts"],
        isolate: false,
      }),
    ],
  },
});
