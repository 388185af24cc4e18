// The settle-once logic of every handle that reports how one call went (the breaker's Permit, the
// shedder's Ticket): one function, over one property. Not a base class: V8 builds an instance of a
// derived class through its slower generic path, about 8 ns more per handle, and a handle is made
// on every call let through.

/** The property a {@link Settleable} handle keeps where it reports, until it is settled. */
export const REPORT_TO: unique symbol = Symbol("tideward.reportTo");

/**
 * A handle that settles once: it holds where to report under {@link REPORT_TO} until the first
 * {@link settle} claims it.
 *
 * @typeParam To - what the handle reports to, such as the breaker that issued it
 */
export interface Settleable<To extends object> {
  [REPORT_TO]: To | undefined;
}

/**
 * Where `handle` reports, the first time it is asked; `undefined` every time after. So a call
 * settled twice (a retry path and a `finally`, say) is counted once, and a handle never settled
 * is never counted.
 */
export function settle<To extends object>(handle: Settleable<To>): To | undefined {
  const to = handle[REPORT_TO];
  handle[REPORT_TO] = undefined;
  return to;
}

/** Whether `handle` has been settled. */
export function isSettled(handle: Settleable<object>): boolean {
  return handle[REPORT_TO] === undefined;
}
