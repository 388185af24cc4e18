// What a call of the Redis engine, and a change of its limits, takes besides its arguments, read
// once and checked, and the check every key a caller hands it must pass.
import { QuotaKey } from "@tideward/quota-engine";
import { check } from "@tideward/time/internal";

// The request id of a call's options, read once; an unknown option (a misspelt requestId would
// silently charge twice on a retry) is a TypeError naming the closest known one.
export function requestIdOf(options: CallOptions | undefined, what: string): string | undefined {
  if (options === undefined) return undefined;
  return check.options(options, ["requestId"], what).requestId;
}

export const SINGLE = [
  "RedisQuotaEngine.checkTokenBucket",
  "RedisQuotaEngine.checkWindow",
  "RedisQuotaEngine.checkGcra",
];

// A key the QuotaKey constructor made: the class's own and frozen as it leaves the constructor
// (a look-alike made with Object.create is neither, so it cannot stand in for another key). Not
// the in-process engine's brand check: that holds only for keys of its own build of QuotaKey,
// and /internal is built apart from the package's main entry, where users' keys come from.
export function isKey(key: unknown): key is QuotaKey {
  return key instanceof QuotaKey && Object.isFrozen(key);
}

/** Options of one call: a request id makes a repeat of the same charge a no-op. */
export interface CallOptions {
  /**
   * An id for this charge (a request id, an idempotency key): a repeat with the same id within
   * {@link RedisPolicy.requestTtl} answers what the first committed (`replayed: true`, the first
   * call's costs and figures) and charges nothing. Use it to retry an `"indeterminate"` decision
   * safely. A repeat whose charges name other limits than the first's is refused (a RangeError
   * naming the id); one with other costs replays the first answer.
   */
  readonly requestId?: string;
}

/** Options of a limit added to a {@link RedisQuotaEngine}. */
export interface LimitOptions {
  /** Decide and report, never refuse: the decision's `shadow` says what enforcing would have answered. @defaultValue false */
  readonly shadow?: boolean;
  /**
   * The version its keys' state is named by: instances at one version share it. Keep it in the
   * configuration and raise it with each change. @defaultValue 0 (after a removal, one above)
   */
  readonly version?: number;
}

/** Options of {@link RedisQuotaEngine.replaceLimit}. */
export interface ReplaceOptions {
  /** The limit's version from now on, above its version now. @defaultValue its version now + 1 */
  readonly version?: number;
}
