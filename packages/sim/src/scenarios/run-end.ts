// Where a scenario's runs end on the clock: simulate refuses a run that ends past 2^43 ms, and
// names its own `duration`; a scenario checks first, naming what the user typed instead.
import { CLOCK_LIMIT } from "../clock-range";

/**
 * Checks that a run of `length` ms from `start` (ms) ends within the clock's range, as simulate
 * does, naming the scenario's start and `knobs`, the knobs that set the length (`"duration (s)"`;
 * `""` when none does), with their values in `sum` (`"duration 3600 s"`).
 *
 * @throws RangeError naming them when it does not
 */
export function checkEnd(scenario: string, start: number, length: number, knobs: string, sum: string): void {
  if (Math.abs(start + length) <= CLOCK_LIMIT) return;
  throw new RangeError(
    `scenario ${scenario} start (ms)${knobs === "" ? "" : ` and ${knobs}`} must end the run within ${CLOCK_LIMIT} ms of the epoch (2^43, where the clock still resolves a microsecond): start ${start} + ${sum} is past it`,
  );
}

/** {@link checkEnd} for a run as long as the scenario's `duration` knob, `seconds`. */
export function checkDuration(scenario: string, start: number, seconds: number): void {
  checkEnd(scenario, start, seconds * 1_000, "duration (s)", `duration ${seconds} s`);
}
