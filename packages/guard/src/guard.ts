import { check } from "@tideward/time/internal";
import type { Attempt } from "./attempt";
import { Core } from "./core";
import type { CallScope, Guarded } from "./core";
import { resolveGuard } from "./options";
import type { GuardOptions, Resolved } from "./options";

export type { CallScope, Guarded } from "./core";

/**
 * Wraps `fn` so that every call goes through the guard's policies, in a fixed order: the
 * deadline; for each attempt the bucket (waiting up to `maxWait` for a token), the gate, the
 * shedder and the breaker; the attempt itself under one `AbortSignal` (caller, deadline,
 * per-attempt timeout); then the outcome recorded, and a retry or a hedge where the policy, the
 * retry budget and the deadline allow. Every policy is optional.
 *
 * `fn` gets an {@link Attempt} (`{ attempt, hedge, signal }`) before the caller's arguments.
 * The guard answers with the last attempt's own outcome (its value, or its error), and throws a
 * {@link Refusal} only when no attempt reached the backend: a refused retry or hedge ends the
 * call with the answer the backend last gave.
 *
 * Nothing keeps a timer while idle: a timer exists only while a call that has a deadline, a
 * timeout, a hedge or a wait is in progress.
 *
 * @example
 * // A data: URL stands in for https://api.example, so the example runs offline.
 * const api = (path: string, signal: AbortSignal) => fetch(`data:application/json,{"path":"${path}"}`, { signal });
 * const getUser = guard(
 *   ({ signal }, id: string) => api(`/users/${id}`, signal).then((r) => r.json()),
 *   { breaker: {}, bucket: { rate: 50 }, timeout: 2_000, deadline: 5_000, retry: { attempts: 3 } },
 * );
 * await getUser("42"); // { path: "/users/42" }
 * @param fn - the call: an {@link Attempt}, then the caller's arguments
 * @param options - the policies, see {@link GuardOptions}
 * @throws TypeError/RangeError at once for a bad option, naming it and the value
 */
export function guard<A extends unknown[], R>(
  fn: (attempt: Attempt, ...args: A) => R | PromiseLike<R>,
  options?: GuardOptions<R, NoInfer<A>>,
): Guarded<A, R> {
  if (typeof fn !== "function")
    throw new TypeError(`guard expects a function to guard, got ${typeof fn} ${check.describe(fn)}`);
  return guardWith(fn, resolveGuard(options));
}

/**
 * @internal A guard over options already resolved: `guardFetch` builds two (retrying and not)
 * that share one breaker, bucket, gate, shedder and budget.
 */
export function guardWith<A extends unknown[], R>(
  fn: (attempt: Attempt, ...args: A) => R | PromiseLike<R>,
  o: Resolved<R>,
): Guarded<A, R> {
  const core = new Core<A, R>(fn, o);
  const guarded = ((...args: A) => core.call(undefined, args)) as Guarded<A, R>;
  guarded.run = (scope: CallScope, ...args: A) => core.call(scope, args);
  return guarded;
}
