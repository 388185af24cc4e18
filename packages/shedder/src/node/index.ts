export { LoadSampler, nodeSystem } from "./sampler";
export type { LoadSamplerOptions, SamplerSystem } from "./sampler";
export type { ReadText } from "./cores";
