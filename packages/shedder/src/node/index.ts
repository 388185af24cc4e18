export { LoadSampler, nodeSystem } from "./sampler";
export type { LoadSamplerOptions, SamplerSystem } from "./sampler";
export { availableCores, cgroupCores, parseCpuMax, readText } from "./cores";
export type { CoresOptions, ReadText } from "./cores";
