/**
 * What a shedder reads from a set of priority levels: the `Priorities` of `@tideward/concurrency`
 * (`criticality`, say) is one, so a shedder and a concurrency limiter judge a call alike. The
 * shedder takes it by this shape and imports nothing from that package.
 */
export interface Levels {
  /** The level of a call's priority (0 the most important): a number or a name, or `undefined` for none. */
  level(priority: number | string | undefined): number;
  /** The part of the capacity, from 0 to 1, that calls at `level` may fill. */
  room(level: number): number;
}

/**
 * The part of the capacity a call of `priority` may fill, read from `levels`: 1 without levels,
 * and 1 — the whole capacity, as if there were no levels — when `levels` throws or answers what
 * is not a share, so a broken set of levels never refuses more than a shedder without them.
 */
export function roomOf(levels: Levels | undefined, priority: number | string | undefined): number {
  if (levels === undefined) return 1;
  try {
    const room = levels.room(levels.level(priority));
    return typeof room === "number" && room >= 0 && room < 1 ? room : 1;
  } catch {
    return 1;
  }
}
