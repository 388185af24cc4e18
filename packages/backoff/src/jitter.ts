import { check } from "@tideward/time/internal";

/** Every wait is exactly the ceiling. Reproducible, and it keeps clients that failed together in step. */
export interface Rigid {
  readonly kind: "rigid";
}

/** Uniform over `[0, ceiling]`: the jitter that spreads clients furthest apart. */
export interface Full {
  readonly kind: "full";
}

/** Half the ceiling plus uniform over `[0, ceiling / 2]`: spread, with a floor under the wait. */
export interface Equal {
  readonly kind: "equal";
}

/**
 * Uniform over `[base, previous × 3]`, held to the cap: grows from where the last wait landed
 * rather than from the retry number (the "decorrelated jitter" of the AWS Architecture Blog).
 */
export interface Decorrelated {
  readonly kind: "decorrelated";
}

/**
 * Uniform over `[ceiling × (1 − fraction), ceiling × (1 + fraction)]`: the schedule, give or
 * take a fraction of it. The wait can pass the cap by that fraction.
 */
export interface Spread {
  readonly kind: "spread";
  /** How far either way of the ceiling a wait may land, as a fraction of it in `[0, 1]`. */
  readonly fraction: number;
}

/**
 * How much randomness goes into a delay: one of the five shapes, told apart by `kind`.
 *
 * A retry with no jitter makes every client that failed together try again together, which is
 * how one outage becomes a second one. Full, Equal and Decorrelated are the three shapes the
 * literature names and measures; Spread keeps the wait within a fraction of the ceiling, the
 * easier one to reason about when the schedule is fixed by something else.
 *
 * | kind           | a wait is uniform over                    |
 * | -------------- | ----------------------------------------- |
 * | `rigid`        | exactly the ceiling                       |
 * | `full`         | `[0, ceiling]`                            |
 * | `equal`        | `[ceiling / 2, ceiling]`                  |
 * | `decorrelated` | `[base, previous × 3]`, held to the cap   |
 * | `spread`       | `[ceiling × (1 − f), ceiling × (1 + f)]`  |
 *
 * Build one with the constants and the constructor of the same name:
 * `Jitter.rigid`, `Jitter.full`, `Jitter.equal`, `Jitter.decorrelated`, `Jitter.spread(0.2)`.
 */
export type Jitter = Rigid | Full | Equal | Decorrelated | Spread;

/**
 * A spread by `fraction` of the ceiling either way.
 *
 * @param fraction - in `[0, 1]`; outside it is held to the nearest end
 *   (so `spread(2)` is `spread(1)`): a wait below zero or a bound that flips is never meant
 * @throws RangeError when `fraction` is NaN or infinite, TypeError when it is not a number
 */
function spread(fraction: number): Spread {
  const f = check.finite(fraction, "Jitter spread fraction");
  return Object.freeze({ kind: "spread", fraction: f < 0 ? 0 : f > 1 ? 1 : f });
}

/** The jitters by name: four constants and the one constructor that takes a fraction. */
export const Jitter = Object.freeze({
  /** Exactly the ceiling. */
  rigid: Object.freeze<Rigid>({ kind: "rigid" }),
  /** Uniform over `[0, ceiling]`. */
  full: Object.freeze<Full>({ kind: "full" }),
  /** Uniform over `[ceiling / 2, ceiling]`. */
  equal: Object.freeze<Equal>({ kind: "equal" }),
  /** Uniform over `[base, previous × 3]`, held to the cap. */
  decorrelated: Object.freeze<Decorrelated>({ kind: "decorrelated" }),
  /** Uniform over `[ceiling × (1 − fraction), ceiling × (1 + fraction)]`, the fraction held to `[0, 1]`. */
  spread,
});

/**
 * Checks a jitter given as data (a literal, or one read from configuration) and returns it in
 * the canonical frozen form, its spread fraction held to `[0, 1]`.
 *
 * @param jitter - the value to check
 * @param what - how an error message names it, such as `"Backoff jitter"`
 * @throws TypeError when it is not one of the five kinds; RangeError for a NaN or infinite fraction
 */
export function toJitter(jitter: unknown, what: string): Jitter {
  const kind = typeof jitter === "object" && jitter !== null ? (jitter as { kind?: unknown }).kind : undefined;
  switch (kind) {
    case "rigid":
      return Jitter.rigid;
    case "full":
      return Jitter.full;
    case "equal":
      return Jitter.equal;
    case "decorrelated":
      return Jitter.decorrelated;
    case "spread":
      return spread(check.finite((jitter as { fraction?: unknown }).fraction, `${what} spread fraction`));
    default:
      throw new TypeError(
        `${what} must be one of Jitter.rigid, Jitter.full, Jitter.equal, Jitter.decorrelated or Jitter.spread(f), got ${check.describe(kind ?? jitter)}`,
      );
  }
}
