import { check } from "@tideward/time/internal";
import type { Span } from "@tideward/time";

/**
 * Waits `span` milliseconds, or less if `signal` fires: the shape of sleep `retry` takes, so a
 * test can hand it `ManualClock.sleep` and run a whole schedule without waiting.
 *
 * @param span - how long to wait, in milliseconds
 * @param signal - when it fires, the wait stops at once and rejects with the signal's reason
 */
export type Sleep = (span: Span, signal?: AbortSignal) => Promise<void>;

/** An AbortSignal as far as it is used here: its state, and a listener added and taken off. */
export function isSignal(value: unknown): boolean {
  if (typeof value !== "object" || value === null) return false;
  const s = value as Partial<AbortSignal>;
  return (
    typeof s.aborted === "boolean" &&
    typeof s.addEventListener === "function" &&
    typeof s.removeEventListener === "function"
  );
}

// setTimeout holds its delay in 32 bits: anything longer fires after 1 ms (with a warning).
const LONGEST = 2_147_483_647;

/**
 * The real sleep: a timer that an `AbortSignal` cancels at once, rejecting with the signal's
 * reason (an already aborted signal rejects before any timer is set). Waits longer than
 * setTimeout's 24.8-day limit are made of several timers rather than firing early; an infinite
 * one never ends unless aborted. A NaN or negative span waits for one timer turn only. A span
 * that is not a number, or a signal that is not an `AbortSignal`, rejects with a `TypeError`.
 */
export const sleep: Sleep = (span, signal) =>
  new Promise<void>((resolve, reject) => {
    if (typeof span !== "number")
      throw new TypeError(`sleep span must be a number of milliseconds, got ${typeof span} ${check.describe(span)}`);
    if (signal !== undefined && !isSignal(signal)) {
      throw new TypeError(
        `sleep signal must be an AbortSignal, got ${signal === null ? "null" : `${typeof signal} ${check.describe(signal)}`}`,
      );
    }
    if (signal?.aborted) {
      reject(signal.reason as Error);
      return;
    }
    let left = span > 0 ? span : 0;
    let timer: ReturnType<typeof setTimeout>;
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    const arm = (): void => {
      const step = left > LONGEST ? LONGEST : left;
      left -= step;
      timer = setTimeout(tick, step);
    };
    const tick = (): void => {
      if (left > 0) return arm();
      signal?.removeEventListener("abort", onAbort);
      resolve();
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    arm();
  });
