// What tideward's own packages share with the guard, not meant for users: the guard's reading of
// its options, a guard over options already read, and the stages its pipeline is made of, so that
// `@tideward/otel` builds exactly the guard `guard()` builds (the same presets, the same
// primitives) with its listeners added, and reads each stage's figures as the stage states them.
// Not covered by semver: anything here may change in any release.
export { guardWith } from "./guard";
export { ADMIT_OPTIONS } from "./admit";
export { resolveGuard } from "./options";
export type { Resolved } from "./options";
export { STAGES } from "./stages/index";
export { breakerReadings } from "./stages/breaker";
export { budgetReadings } from "./stages/budget";
export { shedderReadings } from "./stages/shedder";
export { LimitStage, limitReadings } from "./stages/limit";
export type { Ask, Host, Reading, Stage, StageDef } from "./stage";
export { Pipeline } from "./pipeline";
export type { Held } from "./pipeline";
