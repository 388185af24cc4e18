export { QuotaEngine } from "./engine";
export { enginePolicy } from "./policy";
export type { EnginePolicy, TopUp } from "./policy";
export { MAX_RESERVATION_ID } from "./reservation";
export type { ReserveCode, ReserveReport } from "./reservation";
export type { ReserveOptions } from "./reserve";
export type { ActualCost, SettleCode, SettledCharge, SettleResult, Settlement } from "./settle";
export type { SweepReport } from "./key-space";
export { QuotaKey, MAX_KEY_PART } from "./key";
export { limitSpec, perSecond, perMinute, MAX_LIMIT_NAME } from "./limit";
export type { LimitSpec, LimitFields, OverrideFields } from "./limit";
export { reasons } from "./decision";
export type { Decision, Reason } from "./decision";
export { charge } from "./charge";
export type { AtomicReport, BatchReport, ChargeKind, EvaluationInput, QuotaCharge } from "./charge";
export type { LinkCode, QuotaLink } from "./hierarchy";
export type { FairShareItem } from "./fair";
export { MAX_SUBJECT } from "./fair";
export type { EngineSummary, IssueCode, QuotaStats, ValidationIssue } from "./health";
export type { Result } from "./result";
export { SnapshotError, isSnapshotError } from "./errors";
export { SNAPSHOT_VERSION } from "./snapshot";
export type {
  BucketEntry,
  FullAtEntry,
  GcraEntry,
  KeyParts,
  LinkEntry,
  OverrideEntry,
  QuotaSnapshot,
  SubjectEntry,
  WindowEntry,
} from "./snapshot";
export type { Awaitable, QuotaStore, ReservationStore, RuntimeLimitStore } from "./store";
