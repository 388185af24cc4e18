import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { check } from "@tideward/time/internal";

/** Reads a file as UTF-8 text, or gives `undefined` when it cannot be read (missing, no access). */
export type ReadText = (path: string) => string | undefined;

/** {@link ReadText} on the real file system. */
export const readText: ReadText = (path) => {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
};

const DIGITS = /^\d+$/;

/**
 * Reads the text of a cgroup v2 `cpu.max` file: `"<quota> <period>"`, both in microseconds,
 * the quota `max` when there is no limit (`"max 100000"`). A period left out is 100000 µs, as
 * when the file is written.
 *
 * @example
 * parseCpuMax("150000 100000\n") // 1.5 (cores)
 * parseCpuMax("max 100000")      // Infinity
 * @param text - the file's contents
 * @returns the cores the quota allows (quota ÷ period; fractions are normal), `Infinity` for
 *   no limit, or `undefined` when the text is not a `cpu.max` line
 */
export function parseCpuMax(text: string): number | undefined {
  if (typeof text !== "string")
    throw new TypeError(`parseCpuMax text must be a string, got ${typeof text} ${check.describe(text)}`);
  const parts = text.trim().split(/\s+/);
  if (parts.length > 2) return undefined;
  const [quota, period = "100000"] = parts;
  if (!DIGITS.test(period) || Number(period) <= 0) return undefined;
  if (quota === "max") return Infinity;
  if (quota === undefined || !DIGITS.test(quota) || Number(quota) <= 0) return undefined;
  return Number(quota) / Number(period);
}

/** The deepest cgroup walk considered; real hierarchies are a handful of levels deep. */
const DEPTH = 32;

/**
 * The least CPU quota, in cores, that cgroup v2 sets on this process: its own cgroup's
 * `cpu.max` or any ancestor's, since a limit anywhere up the tree applies. In a container with
 * its own cgroup namespace the process's cgroup is `/`, so this reads `/sys/fs/cgroup/cpu.max`.
 *
 * @param read - reads a file; the real file system by default, replaceable for tests
 * @param what - how errors name `read`
 * @returns cores (fractions are normal), or `Infinity` when no quota applies, the files are
 *   missing (cgroup v1, not Linux) or unreadable
 * @throws TypeError when `read` is not a function or answers neither text nor `undefined`
 */
export function cgroupCores(read: ReadText = readText, what = "cgroupCores read"): number {
  check.fn(read, what);
  const text = (path: string): string | undefined => {
    const answer: unknown = read(path);
    if (answer !== undefined && typeof answer !== "string")
      throw new TypeError(
        `${what} must answer text or undefined, got ${typeof answer} ${check.describe(answer)} for ${path}`,
      );
    return answer;
  };
  // The v2 line of /proc/self/cgroup is "0::<path>". A path that climbs out of the namespace
  // ("/../..") cannot be followed under /sys/fs/cgroup: only the root's limit is read then.
  const line = text("/proc/self/cgroup")
    ?.split("\n")
    .find((l) => l.startsWith("0::"));
  let dir = line?.slice(3).trim() ?? "/";
  if (!dir.startsWith("/") || dir.split("/").includes("..")) dir = "/";
  let least = Infinity;
  for (let depth = 0; depth < DEPTH; depth++) {
    dir = dir.replace(/\/+$/, "") || "/";
    const max = text(dir === "/" ? "/sys/fs/cgroup/cpu.max" : `/sys/fs/cgroup${dir}/cpu.max`);
    const cores = max === undefined ? undefined : parseCpuMax(max);
    if (cores !== undefined && cores < least) least = cores;
    if (dir === "/") break;
    dir = dir.slice(0, dir.lastIndexOf("/")) || "/";
  }
  return least;
}

/** Options of {@link availableCores}, for tests and unusual hosts. */
export interface CoresOptions {
  /** Reads a file; the real file system by default. */
  readonly read?: ReadText;
  /** How many cores the process may be scheduled on; `os.availableParallelism()` by default. */
  readonly parallelism?: number;
}

/**
 * How many cores' worth of CPU time this process may use: `os.availableParallelism()` (the
 * CPUs it may run on) lowered to the cgroup v2 quota when one applies, as in a container with
 * `--cpus=1.5`.
 *
 * @returns cores, above 0 (fractions are normal under a quota)
 * @throws TypeError when `options` is not an object or names an option there is not, or `read`
 *   is not a function; RangeError when `parallelism` is not above 0
 */
export function availableCores(options?: CoresOptions): number {
  const o = check.options(options, ["read", "parallelism"], "availableCores");
  const parallelism =
    o.parallelism === undefined ? availableParallelism() : check.positive(o.parallelism, "availableCores parallelism");
  return usableCores(parallelism, cgroupCores(o.read));
}

/** The CPUs a process may run on lowered to its quota, both in cores; 1 when neither says. */
export function usableCores(parallelism: number, quota: number): number {
  const cores = Math.min(parallelism, quota);
  return cores > 0 && Number.isFinite(cores) ? cores : 1;
}
