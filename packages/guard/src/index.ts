export { guard } from "./guard";
export type { CallScope, Guarded } from "./guard";
export type { Attempt } from "./attempt";
export type { BucketFields, GuardOptions, Hedge } from "./options";
export type { HedgeEvent, Outcome, OutcomeEvent, RefuseEvent, RetryEvent } from "./events";
export { Refusal, TimeoutError, isRefusal, isTimeoutError, refusalKinds } from "./refusal";
export type { RefusalKind, TimeoutScope } from "./refusal";
export { realTimers } from "./timers";
export type { Timers } from "./timers";
