import type { AtomicReport, BatchReport, ChargeKind, EvaluationInput, QuotaCharge } from "./charge";
import type { Decision } from "./decision";
import type { LinkCode, QuotaLink } from "./hierarchy";
import type { QuotaKey } from "./key";
import type { LimitSpec, OverrideFields } from "./limit";
import type { ReserveReport } from "./reservation";
import type { ReserveOptions } from "./reserve";
import type { Result } from "./result";
import type { ActualCost, SettleResult } from "./settle";

/** A value now, or a promise of one. */
export type Awaitable<T> = T | PromiseLike<T>;

/**
 * What a quota engine does, wherever its state lives: the seam between the synchronous
 * in-process {@link QuotaEngine} and engines over a shared store (such as `@tideward/redis`),
 * whose methods return promises of the same answers.
 *
 * The in-process engine implements it with plain return values and must stay synchronous (an
 * `await` costs more than a whole decision); code written against `QuotaStore` awaits every
 * result, which accepts both. The conformance suite (`@tideward/quota-engine/conformance`)
 * pins the shared behaviour: same scenario, same decisions.
 *
 * Fair share, sweeping, health and snapshots are left out: they belong to one process.
 */
export interface QuotaStore {
  /** Adds a limit, or says why not (`duplicate_limit`, `invalid_limit`). */
  addLimit(spec: LimitSpec): Awaitable<Result<"duplicate_limit" | "invalid_limit">>;
  /** The limit named `name` as the store enforces it, or undefined; answered at once, from the store's own registry. */
  limit(name: string): LimitSpec | undefined;
  /** Links a child key to a parent for one limit, or says why not. */
  addLink(link: QuotaLink): Awaitable<Result<LinkCode>>;
  /** A token-bucket check of `cost` units at `now` (ms). */
  checkTokenBucket(key: QuotaKey, limit: string, now: number, cost?: number): Awaitable<Decision>;
  /** A fixed-window check of `cost` units at `now` (ms). */
  checkWindow(key: QuotaKey, limit: string, now: number, cost?: number): Awaitable<Decision>;
  /** A GCRA check of `cost` units at `now` (ms). */
  checkGcra(key: QuotaKey, limit: string, now: number, cost?: number): Awaitable<Decision>;
  /** Charges every charge at `now` (ms), or none. */
  checkAtomic(charges: readonly QuotaCharge[], now: number): Awaitable<AtomicReport>;
  /** What `checkAtomic` would answer at `now` (ms), charging nothing. */
  peekAtomic(charges: readonly QuotaCharge[], now: number): Awaitable<AtomicReport>;
  /** Charges `key` and its linked ancestors for `limit` as one atomic set. */
  checkHierarchy(key: QuotaKey, limit: string, now: number, cost?: number, kind?: ChargeKind): Awaitable<Decision>;
  /** Checks inputs in order against one limit, with totals. */
  checkMany(limit: string, inputs: readonly EvaluationInput[], kind?: ChargeKind): Awaitable<BatchReport>;
}

/**
 * A {@link QuotaStore} that reserves charge sets and settles them when the work is done: what the
 * reservation conformance suite (`reservationConformance`) holds an engine to, in process or on a
 * shared store.
 */
export interface ReservationStore extends QuotaStore {
  /** Charges every charge at `now` (ms), or none, and keeps a record to settle by its id. */
  reserve(charges: readonly QuotaCharge[], now: number, options?: ReserveOptions): Awaitable<ReserveReport>;
  /** Settles reservation `id` at its actual cost per limit, refunding or topping up the difference. */
  settle(id: string, actual: ActualCost, now: number): Awaitable<SettleResult>;
  /** Gives back everything reservation `id` charged. */
  cancel(id: string, now: number): Awaitable<SettleResult>;
}

/**
 * A {@link QuotaStore} whose limits change while it runs: replaced or removed, and overridden for
 * one key. What the runtime-limit conformance suite (`runtimeLimitConformance`) holds an engine to.
 */
export interface RuntimeLimitStore extends QuotaStore {
  /** Replaces a limit at `now` (ms), every key's state re-based onto it, or says why not. */
  replaceLimit(spec: LimitSpec, now: number): Awaitable<Result<"unknown_limit" | "invalid_limit">>;
  /** Removes a limit, its state, overrides and links, or says why not. */
  removeLimit(name: string): Awaitable<Result<"unknown_limit">>;
  /** Gives `key` a limit of its own under the name `limit` at `now` (ms), or says why not. */
  setOverride(
    key: QuotaKey,
    limit: string,
    fields: OverrideFields,
    now: number,
  ): Awaitable<Result<"unknown_limit" | "invalid_override" | "override_limit">>;
  /** Takes `key`'s override of `limit` away at `now` (ms), or says why not. */
  removeOverride(key: QuotaKey, limit: string, now: number): Awaitable<Result<"unknown_limit" | "unknown_override">>;
}
