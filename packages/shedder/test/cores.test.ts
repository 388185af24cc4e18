import { availableParallelism } from "node:os";
import { describe, expect, it } from "vitest";
import { availableCores, cgroupCores, parseCpuMax, readText } from "@tideward/shedder/internal";

/** A file system of a few files, recording what was read. */
function files(map: Record<string, string>): { read: (path: string) => string | undefined; reads: string[] } {
  const reads: string[] = [];
  return { read: (path) => (reads.push(path), map[path]), reads };
}

describe("parseCpuMax", () => {
  it.each<[string, number | undefined]>([
    ["max 100000", Infinity],
    ["max 100000\n", Infinity],
    ["max", Infinity],
    ["150000 100000\n", 1.5],
    ["50000 100000", 0.5],
    ["200000 50000", 4],
    ["100000", 1], // period left out: 100000 µs
    ["", undefined],
    ["0 100000", undefined],
    ["-1 100000", undefined],
    ["1.5 100000", undefined],
    ["1e5 100000", undefined],
    ["100000 0", undefined],
    ["100000 max", undefined],
    ["100000 100000 7", undefined],
    ["lots 100000", undefined],
  ])("%j is %s cores", (text, cores) => {
    expect(parseCpuMax(text)).toBe(cores);
  });
});

describe("cgroupCores", () => {
  it("reads the root cpu.max in a container with its own cgroup namespace", () => {
    const fs = files({ "/proc/self/cgroup": "0::/\n", "/sys/fs/cgroup/cpu.max": "150000 100000\n" });
    expect(cgroupCores(fs.read)).toBe(1.5);
    expect(fs.reads).toEqual(["/proc/self/cgroup", "/sys/fs/cgroup/cpu.max"]);
  });

  it("takes the least quota on the way from the process's cgroup up to the root", () => {
    const fs = files({
      "/proc/self/cgroup": "0::/kubepods.slice/pod1/app\n",
      "/sys/fs/cgroup/kubepods.slice/pod1/app/cpu.max": "max 100000",
      "/sys/fs/cgroup/kubepods.slice/pod1/cpu.max": "25000 100000",
      "/sys/fs/cgroup/kubepods.slice/cpu.max": "400000 100000",
    });
    expect(cgroupCores(fs.read)).toBe(0.25);
    expect(fs.reads.slice(1)).toEqual([
      "/sys/fs/cgroup/kubepods.slice/pod1/app/cpu.max",
      "/sys/fs/cgroup/kubepods.slice/pod1/cpu.max",
      "/sys/fs/cgroup/kubepods.slice/cpu.max",
      "/sys/fs/cgroup/cpu.max",
    ]);
  });

  it("finds no limit on a host without cgroup v2 files, or with only `max`", () => {
    expect(cgroupCores(files({}).read)).toBe(Infinity);
    // A hybrid (v1 + v2) host like this one: the v2 line says "/" but there is no cpu.max.
    expect(cgroupCores(files({ "/proc/self/cgroup": "4:memory:/x\n1:cpu:/\n0::/\n" }).read)).toBe(Infinity);
    expect(cgroupCores(files({ "/proc/self/cgroup": "0::/a\n", "/sys/fs/cgroup/a/cpu.max": "max 100000" }).read)).toBe(
      Infinity,
    );
  });

  it("ignores a malformed cpu.max and never walks out of /sys/fs/cgroup", () => {
    const fs = files({ "/proc/self/cgroup": "0::/../../elsewhere\n", "/sys/fs/cgroup/cpu.max": "garbage" });
    expect(cgroupCores(fs.read)).toBe(Infinity);
    expect(fs.reads).toEqual(["/proc/self/cgroup", "/sys/fs/cgroup/cpu.max"]);
  });

  it("reads the real files without throwing", () => {
    expect(cgroupCores()).toBeGreaterThan(0);
    expect(readText("/definitely/not/here")).toBeUndefined();
  });
});

describe("availableCores", () => {
  it("is the parallelism lowered to the quota", () => {
    const quota = files({ "/proc/self/cgroup": "0::/\n", "/sys/fs/cgroup/cpu.max": "150000 100000" }).read;
    expect(availableCores({ read: quota, parallelism: 8 })).toBe(1.5);
    expect(availableCores({ read: quota, parallelism: 1 })).toBe(1);
    expect(availableCores({ read: files({}).read, parallelism: 4 })).toBe(4);
    expect(availableCores({ read: files({}).read })).toBe(availableParallelism());
    expect(availableCores()).toBeLessThanOrEqual(availableParallelism());
  });
});
