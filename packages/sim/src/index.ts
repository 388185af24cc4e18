export { Simulator } from "./simulator";
export type { SimulatorOptions } from "./simulator";
export { EventQueue } from "./queue";
export type { Fire } from "./queue";
export { stream } from "./streams";
export { simulate } from "./simulate";
export type { ClientOptions, HedgeOptions, NetworkOptions, RetryOptions, SimulationOptions } from "./simulate";
export * as traffic from "./traffic-models";
export type { Arrivals, KeyTable, Process, StreamOptions, Traffic, TrafficContext } from "./traffic";
export type { Priority, PrioritySeries, PrioritySummary } from "./priority";
export type { DailyOptions, RampOptions, RateOptions, ShapedOptions } from "./rates";
export type { BurstOptions, HerdOptions } from "./bursts";
export type { ReplayOptions, TraceRecord } from "./replay";
export * as keys from "./keys";
export type { KeyModel, ManyKeysOptions, ZipfOptions } from "./keys";
export * as latency from "./latency";
export type { BimodalOptions, Distribution, LogNormalOptions, NormalOptions } from "./distribution";
export * as failures from "./failures";
export { FailureSchedule } from "./failures";
export type { FailureWindow, OutageOptions } from "./failures";
export type { BackendOptions, ContentionOptions, OverloadOptions } from "./backend";
export * as backends from "./backends";
export type { ContentionBackendOptions, MetastableOptions } from "./backends";
export type { Dip } from "./dips";
export * as policy from "./policies/index";
export type {
  AdmissionOptions,
  ClassicOptions,
  GatePolicyOptions,
  LimiterOptions,
  NameOptions,
  OpossumOptions,
  PeriodPolicyOptions,
  QuotaDimension,
  QuotaPolicyOptions,
  RateLimiterOptions,
  SamplingOptions,
  ShedderPolicyOptions,
} from "./policies/index";
export type { LostStretch, SlowStretch, StoreFaults, Stretch } from "./store-faults";
export type {
  Adapter,
  ConcurrencyEnvelope,
  Envelope,
  PolicyContext,
  PolicySpec,
  RateEnvelope,
  WindowEnvelope,
} from "./policy";
export { InvariantError, isInvariantError } from "./invariant-error";
export { CallbackError, isCallbackError } from "./callback-error";
export type { KeyTotals, LatencySummary, PolicyReport, RunResult, Series, Summary } from "./result";
export { defineScenario, MAX_CALLS, seedKnob } from "./scenario";
export { sweep } from "./sweep";
export type { SweepOptions, SweepResult } from "./sweep";
export type { Progress } from "./watch";
export { RECOVERED_SHARE, recovery } from "./recovery";
export type { Recovery, RecoveryOptions } from "./recovery";
export type { GuardOptionSets } from "./guard-options";
export type {
  BooleanKnob,
  GuardOption,
  Knob,
  KnobValue,
  NumberKnob,
  Outcome,
  Params,
  RunOptions,
  Scenario,
  ScenarioDefinition,
  ScenarioResult,
  SelectKnob,
  Work,
  Table,
} from "./scenario";
export type { Plot, PlotMark } from "./plot";
export { catalogue, scenario } from "./catalogue";
export { breakerOutage } from "./scenarios/breaker-outage";
export type { BreakerOutageParams } from "./scenarios/breaker-outage";
export { slowBackend } from "./scenarios/slow-backend";
export type { SlowBackendParams } from "./scenarios/slow-backend";
export { breakerBrownout } from "./scenarios/breaker-brownout";
export type { BreakerBrownoutParams } from "./scenarios/breaker-brownout";
export { metastableOverload } from "./scenarios/metastable-overload";
export { contentionBackoff } from "./scenarios/contention-backoff";
export type { ContentionBackoffParams } from "./scenarios/contention-backoff";
export type { MetastableOverloadParams } from "./scenarios/metastable-overload";
export { knobArbitrary } from "./arbitrary";
export type { FastCheckLike, KnobRecord } from "./arbitrary";
export { toCsv, toJson } from "./export";
export { shedderRamp } from "./scenarios/shedder-ramp";
export type { ShedderRampParams } from "./scenarios/shedder-ramp";
export { quotaBursts } from "./scenarios/quota-bursts";
export type { QuotaBurstsParams } from "./scenarios/quota-bursts";
export { retryAmplification } from "./scenarios/retry-amplification";
export type { RetryAmplificationParams } from "./scenarios/retry-amplification";
export { herdBackoff } from "./scenarios/herd-backoff";
export type { HerdBackoffParams } from "./scenarios/herd-backoff";
export { quotaAtomic } from "./scenarios/quota-atomic";
export type { QuotaAtomicParams } from "./scenarios/quota-atomic";
export { herdRecovery } from "./scenarios/herd-recovery";
export type { HerdRecoveryParams } from "./scenarios/herd-recovery";
export { prefetchSpike } from "./scenarios/prefetch-spike";
export type { PrefetchSpikeParams } from "./scenarios/prefetch-spike";
export { capacityShift } from "./scenarios/capacity-shift";
export type { CapacityShiftParams } from "./scenarios/capacity-shift";
export { tokenBudget } from "./scenarios/token-budget";
export type { TokenBudgetParams } from "./scenarios/token-budget";
