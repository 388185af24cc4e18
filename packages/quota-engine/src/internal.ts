// What tideward's Redis engine shares with the in-process one, not meant for users: a limit's
// derived numbers, the three algorithm steps on a key's two numbers, the hierarchy's fold and the
// argument checks, so that each exists once. Not covered by semver: anything here may change in
// any release.
export { adjust, decide, freshAmount, freshInstant, rebase } from "./algorithms";
export { costError, isCost, isInstant, keyError, kindError, limitError, nowError, readInputs, readKind } from "./args";
export { foldChain } from "./hierarchy";
export type { MakeDecision } from "./hierarchy";
export { parseLimit } from "./limit-book";
export { BUCKET, GCRA, KIND_NAMES, WINDOW, kindOf } from "./kinds";
export type { Kind } from "./kinds";
export { EXHAUSTED, KEY_LIMIT, NOT_COMMITTED, OK, TOO_LARGE, UNKNOWN_LIMIT, step } from "./outcome";
export type { Code } from "./outcome";
export { Rule } from "./rule";
export { refused } from "./result";
export { checkTtl } from "./policy";
export type { TopUp } from "./policy";
export { checkReserveId, checkReserveOptions, checkReserveTtl, replayed, unreserved } from "./reserve";
export { MAX_RESERVATION_ID } from "./reservation";
export { IdMaker } from "./reservation-id";
export type { Reserved } from "./reservation";
export { actualsOf, alreadyClosed, checkId, readActual, unknownDimension, unknownReservation } from "./settle";
