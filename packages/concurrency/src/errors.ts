// A refused snapshot raises the SnapshotError every tideward package shares (one class, one brand).
export { SnapshotError, isSnapshotError } from "@tideward/time";
