// A refused snapshot raises the one SnapshotError every tideward package raises (the breaker's,
// the shedder's, the limiters'...), so `instanceof` and `isSnapshotError` answer alike for all.
export { SnapshotError, isSnapshotError } from "@tideward/time";
