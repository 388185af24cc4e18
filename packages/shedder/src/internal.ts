// Helpers not meant for users: how the Node.js sampler reads a cgroup v2 `cpu.max` and counts the
// cores it may use. Node.js only. Not covered by semver: anything here may change in any release.
export { availableCores, cgroupCores, parseCpuMax, readText, usableCores } from "./node/cores";
export type { CoresOptions, ReadText } from "./node/cores";
