#!/usr/bin/env node
// The `tideward-sim` command. It imports the package's own CLI subpath by name, so it runs
// the built files when installed (and the sources under the "@tideward/source" condition).
import { main } from "@tideward/sim/cli";

// A reader that stops early (`| head`) closes the pipe: the rest of the report has nowhere to
// go, which is no error of ours.
process.stdout.on("error", (e) => {
  if (e.code === "EPIPE") process.exit(process.exitCode ?? 0);
  throw e;
});
process.exitCode = await main(process.argv.slice(2));
