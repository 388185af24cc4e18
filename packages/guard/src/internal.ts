// What tideward's own packages share with the guard, not meant for users: the guard's reading of
// its options and a guard over options already read, so that `@tideward/otel` builds exactly the
// guard `guard()` builds (the same presets, the same primitives) with its listeners added. Not
// covered by semver: anything here may change in any release.
export { guardWith } from "./guard";
export { resolveGuard } from "./options";
export type { Resolved } from "./options";
