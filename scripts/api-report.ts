// The public API of every package as API Extractor reads it from the built declarations, one
// report per entry point in packages/<name>/api/<name>[-<subpath>].api.md. The reports are
// reviewed like code: the consumer test (tests/consumer) fails when the built API differs from
// its report, and `pnpm api:update` (build, then this script with --update) rewrites them after a
// deliberate change, so the diff shows in review. Entry points under ./internal are not covered
// by semver and have no report.
//
//   tsx scripts/api-report.ts            check every report, print what differs
//   tsx scripts/api-report.ts --update   rewrite every report from the built declarations
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import { Extractor, ExtractorConfig, ExtractorLogLevel } from "@microsoft/api-extractor";
import type { ExtractorMessage, IConfigFile } from "@microsoft/api-extractor";

export const root = join(import.meta.dirname, "..");

export interface ApiEntry {
  /** `@tideward/shedder/node` */
  readonly specifier: string;
  /** The package's folder. */
  readonly dir: string;
  /** The built declarations of the entry point (its `types`). */
  readonly dts: string;
  /** The report's base name, without `.api.md`: `shedder-node`. */
  readonly name: string;
  /** The report file. */
  readonly report: string;
}

interface Manifest {
  name: string;
  private?: boolean;
  exports?: Record<string, string | { types?: string; import?: { types?: string } | string }>;
}

/** Whether an entry point is outside the semver promise (and so has no report). */
export const isInternal = (subpath: string) => /^\.\/internal(\/|$)/.test(subpath);

/** Every reported entry point of every published package under packages/. */
export function apiEntries(): ApiEntry[] {
  const out: ApiEntry[] = [];
  for (const folder of readdirSync(join(root, "packages")).sort()) {
    const dir = join(root, "packages", folder);
    const file = join(dir, "package.json");
    if (!existsSync(file)) continue;
    const manifest = JSON.parse(readFileSync(file, "utf8")) as Manifest;
    if (manifest.private === true) continue;
    const unscoped = manifest.name.replace(/^@[^/]+\//, "");
    for (const [subpath, target] of Object.entries(manifest.exports ?? {})) {
      if (subpath === "./package.json" || subpath.includes("*") || isInternal(subpath)) continue;
      // `{ types, default }` (ES modules only), or an older `{ import: { types, default } }`.
      const types =
        typeof target !== "object"
          ? undefined
          : (target.types ?? (typeof target.import === "object" ? target.import.types : undefined));
      if (types === undefined) throw new Error(`${manifest.name} exports ${subpath} without types`);
      const name = subpath === "." ? unscoped : `${unscoped}-${subpath.slice(2).replaceAll("/", "-")}`;
      out.push({
        specifier: subpath === "." ? manifest.name : `${manifest.name}/${subpath.slice(2)}`,
        dir,
        dts: join(dir, types),
        name,
        report: join(dir, "api", `${name}.api.md`),
      });
    }
  }
  return out;
}

export interface ApiResult {
  readonly entry: ApiEntry;
  /** The report as the built declarations give it now. */
  readonly actual: string;
  /** The committed report, or undefined when there is none. */
  readonly committed: string | undefined;
  /** Compiler and extractor errors (a report cannot be trusted when there are any). */
  readonly errors: readonly string[];
}

/**
 * A report without the places in dist/ its notes point at (`// dist/store-Ct9xE23Q.d.ts:70:5 -`):
 * line numbers move with every comment, and chunk names with every build.
 */
const normalize = (report: string) => report.replace(/^\/\/ dist\/\S+:\d+:\d+ - /gm, "// ");

/** Reads one entry point's API; with `update`, writes its report too. */
export function extract(entry: ApiEntry, update: boolean): ApiResult {
  if (!existsSync(entry.dts)) throw new Error(`${relative(root, entry.dts)} is missing: build first (pnpm build)`);
  const temp = mkdtempSync(join(tmpdir(), "tideward-api-"));
  try {
    mkdirSync(join(entry.dir, "api"), { recursive: true });
    const configObject: IConfigFile = {
      projectFolder: entry.dir,
      mainEntryPointFilePath: entry.dts,
      bundledPackages: [],
      newlineKind: "lf",
      compiler: {
        // The declarations as a Node.js user's compiler reads them.
        overrideTsconfig: {
          compilerOptions: {
            target: "es2022",
            lib: ["es2023"],
            module: "nodenext",
            moduleResolution: "nodenext",
            types: ["node"],
            strict: true,
            skipLibCheck: true,
          },
          files: [entry.dts],
        },
      },
      apiReport: {
        enabled: true,
        reportFileName: entry.name,
        reportFolder: join(entry.dir, "api"),
        reportTempFolder: temp,
        includeForgottenExports: false,
      },
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      messages: {
        compilerMessageReporting: { default: { logLevel: ExtractorLogLevel.Error } },
        extractorMessageReporting: {
          default: { logLevel: ExtractorLogLevel.Warning, addToApiReportFile: true },
          // Nothing here uses release tags (@public, @beta): everything exported is public.
          "ae-missing-release-tag": { logLevel: ExtractorLogLevel.None, addToApiReportFile: false },
          // Documentation is not API, and these notes carry line numbers in dist/: a comment
          // edit would read as an API change.
          "ae-undocumented": { logLevel: ExtractorLogLevel.None, addToApiReportFile: false },
        },
        // TSDoc style is not this check's business.
        tsdocMessageReporting: { default: { logLevel: ExtractorLogLevel.None } },
      },
    };
    const config = ExtractorConfig.prepare({
      configObject,
      configObjectFullPath: undefined,
      packageJsonFullPath: join(entry.dir, "package.json"),
    });
    const errors: string[] = [];
    const before = existsSync(entry.report) ? readFileSync(entry.report, "utf8") : undefined;
    Extractor.invoke(config, {
      localBuild: update,
      showVerboseMessages: false,
      messageCallback: (message: ExtractorMessage) => {
        message.handled = true;
        if (message.logLevel === ExtractorLogLevel.Error) errors.push(message.formatMessageWithLocation(entry.dir));
      },
    });
    const written = join(temp, `${entry.name}.api.md`);
    const actual = normalize(readFileSync(existsSync(written) ? written : entry.report, "utf8"));
    if (update) writeFileSync(entry.report, actual);
    return { entry, actual, committed: before, errors };
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
}

/** A short line diff of two reports: the lines only one of them has, marked - and +. */
export function difference(committed: string, actual: string): string {
  const a = committed.split("\n");
  const b = actual.split("\n");
  const inA = new Set(a);
  const inB = new Set(b);
  return [
    ...a.filter((l) => !inB.has(l)).map((l) => `- ${l}`),
    ...b.filter((l) => !inA.has(l)).map((l) => `+ ${l}`),
  ].join("\n");
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const update = process.argv.includes("--update");
  let failed = false;
  for (const entry of apiEntries()) {
    const r = extract(entry, update);
    const where = relative(root, entry.report);
    if (r.errors.length > 0) {
      failed = true;
      console.error(`${entry.specifier}: ${r.errors.join("\n")}`);
    } else if (r.committed === r.actual) {
      console.log(`${where}: unchanged`);
    } else if (update) {
      console.log(`${where}: ${r.committed === undefined ? "written" : "updated"}`);
    } else {
      failed = true;
      console.error(
        `${where}: ${r.committed === undefined ? "missing" : `differs\n${difference(r.committed, r.actual)}`}`,
      );
    }
  }
  if (failed && !update)
    console.error("\nIf the change is meant, run `pnpm api:update` and commit the reports for review.");
  process.exit(failed ? 1 : 0);
}
