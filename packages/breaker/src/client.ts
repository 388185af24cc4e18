import type { Sre } from "./sre";

/**
 * The preset for a client of one backend, and the guard's default breaker: ten buckets over
 * 750 ms, k 2, go-zero's floor (1.1) and protection (5), a probe every 400 ms, and
 * {@link Sre.halfOpen} on. Chosen by a sweep over a full outage; the package README has the
 * figures, and where a classic breaker does better.
 *
 * - **window 750 ms**: the window's successes excuse about one window of failures at an outage's
 *   start; shorter, a quiet client of a flaky backend was refused more often.
 * - **k 2**: a backend is left alone until half its calls fail.
 * - **probe 400 ms**: a dead backend gets 2.5 calls a second; a recovered one waits at most 400 ms.
 * - **protection 5**: keeps a quiet client of a flaky backend from being refused after one failure.
 */
export const client: Sre = Object.freeze({
  k: 2,
  floor: 1.1,
  protection: 5,
  probe: 400,
  size: 10,
  window: 750,
  halfOpen: true,
});
