// Helpers tideward's own packages share, not meant for users: the argument checks every
// constructor runs, the settle-once logic of the breaker's Permit and the shedder's Ticket, and the
// readers of an untrusted snapshot. Not covered by semver: anything here may change in any release.
export * as check from "./check";
export * as read from "./read";
export { above, below, until } from "./grid";
export type { Restoring } from "./read";
export { REPORT_TO, isSettled, settle } from "./settle";
export type { Settleable } from "./settle";
