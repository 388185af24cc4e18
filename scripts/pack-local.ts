// `pnpm pack:local [@tideward/NAME ...]`: builds every package and packs each into packs/ (as
// `pnpm publish` would pack it), then prints the one npm command that installs the named packages
// (every package when none is named) from those tarballs, with exactly the @tideward packages
// they depend on and no registry.
import { spawnSync } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { closure, pnpm, publicPackages, root, shellWord, tarballName } from "./packages.ts";

const packages = publicPackages();
const wanted = process.argv.slice(2).filter((a) => a !== "--");
const unknown = wanted.filter((name) => !packages.has(name));
if (unknown.length > 0) {
  console.error(
    `pack:local: no package ${unknown.map((n) => JSON.stringify(n)).join(", ")}; the packages are ${[...packages.keys()].join(", ")}`,
  );
  process.exit(2);
}

const packs = join(root, "packs");
const { command, args } = pnpm();
const step = (what: string, rest: string[], show: boolean) => {
  const r = spawnSync(command, [...args, ...rest], {
    cwd: root,
    stdio: show ? "inherit" : ["ignore", "pipe", "pipe"],
    encoding: "utf8",
  });
  if (r.status !== 0) {
    console.error(
      `pack:local: ${what} failed (${r.error?.message ?? `exit ${r.status}`})\n${r.stdout ?? ""}${r.stderr ?? ""}`,
    );
    process.exit(1);
  }
};
step("the build", ["run", "build", "--output-logs=errors-only"], true);
// A tarball left from an earlier version must not be mistaken for the current one.
rmSync(packs, { recursive: true, force: true });
step("pnpm pack", ["-r", "--filter", "./packages/*", "pack", "--pack-destination", packs], false);

const names = closure(wanted.length === 0 ? [...packages.keys()] : wanted, packages);
const files = names.map((name) => {
  const { manifest } = packages.get(name) ?? { manifest: undefined };
  if (manifest === undefined) throw new Error(`${name} is a dependency but not a package under packages/`);
  const file = join(packs, tarballName(manifest));
  if (!existsSync(file)) throw new Error(`pnpm pack wrote no ${file}`);
  return file;
});
const extra = names.filter((n) => !wanted.includes(n));
console.log(
  [
    "",
    `Packed ${packages.size} packages into ${packs}.`,
    wanted.length === 0
      ? "In a project of yours, install all of them from their tarballs (no registry needed):"
      : `In a project of yours, install ${wanted.join(" and ")}${extra.length > 0 ? ` with the ${extra.length} @tideward package${extra.length === 1 ? "" : "s"} ${wanted.length === 1 ? "it depends" : "they depend"} on` : ""}, from their tarballs (no registry needed):`,
    "",
    // --offline: npm would otherwise ask a registry about each sibling the tarballs already hold.
    ["npm", "install", "--offline", ...files].map(shellWord).join(" "),
  ].join("\n"),
);
