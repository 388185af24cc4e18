#!/usr/bin/env node
// The `tideward-sim` command. It imports the package's own CLI subpath by name, so it runs
// the built files when installed (and the sources under the "@tideward/source" condition).
import { main } from "@tideward/sim/cli";

process.exitCode = await main(process.argv.slice(2));
