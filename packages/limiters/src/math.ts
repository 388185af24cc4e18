/**
 * The pure math behind `@tideward/limiters`, for `@tideward/quota-engine` and other tideward
 * packages that keep limiter state of their own (flat arrays, a store): the token bucket, GCRA and
 * fixed-window formulas, the float-grid helpers every wait is computed with, and the bounds.
 *
 * **Internal: not covered by semver.** Names and signatures here may change in any release; use
 * the limiter classes from `@tideward/limiters` instead.
 *
 * @packageDocumentation
 */
export {
  SLACK,
  MAX_SLACK,
  slackOf,
  bucketLevel,
  bucketFits,
  bucketWhole,
  bucketReady,
  bucketFull,
  gcraLead,
  gcraFits,
  gcraWhole,
  gcraReady,
  gcraRest,
  windowCount,
  windowEnd,
  windowFits,
  slidingFallenOut,
} from "./formulas";
export { MAX_INSTANT, MAX_SPAN, MIN_SPAN, above, below, firstAfter, until } from "./grid";
export { badInstant, spanProblem, MAX_COUNT } from "./args";
