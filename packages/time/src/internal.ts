// Helpers tideward's own packages share, not meant for users: the argument checks every
// constructor runs. Not covered by semver: anything here may change in any release.
export * as check from "./check";
