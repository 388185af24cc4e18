import { check } from "@tideward/time/internal";

/** How a {@link QuotaEngine} bounds its memory. */
export interface EnginePolicy {
  /**
   * The most keys with state at once, across every limit and algorithm. A check or charge set
   * that would add a key past it first sweeps a bounded number of slots for idle keys, and if
   * that frees no room it is refused with `"key_limit"` (fail closed; nothing is charged).
   * Keys that already have state are never refused for it. @defaultValue Infinity
   */
  readonly maxKeys: number;
  /**
   * Slots examined for idleness each time a new key gets state: the bounded, incremental sweep
   * that keeps memory proportional to the keys in use without a stop-the-world pass. 0 turns it
   * off (call {@link QuotaEngine.sweep} yourself). @defaultValue 2
   */
  readonly sweepStep: number;
}

/** The preset {@link EnginePolicy}: no key ceiling, two slots examined per new key. */
export const enginePolicy: EnginePolicy = Object.freeze({ maxKeys: Infinity, sweepStep: 2 });

/**
 * `policy` laid over the preset, read once and checked.
 *
 * @throws RangeError or TypeError naming the field when `maxKeys` is not a whole number of at
 *   least 1 (or Infinity), or `sweepStep` is not a whole number of at least 0; TypeError when
 *   `policy` is not an object or names an unknown field (with the closest known one)
 */
export function resolvePolicy(policy?: Partial<EnginePolicy>): EnginePolicy {
  const merged = { ...enginePolicy, ...check.options(policy, ["maxKeys", "sweepStep"], "QuotaEngine", "policy") };
  const maxKeys = merged.maxKeys;
  if (maxKeys !== Infinity) check.integer(maxKeys, "QuotaEngine maxKeys", 1);
  check.integer(merged.sweepStep, "QuotaEngine sweepStep", 0);
  return Object.freeze({ maxKeys, sweepStep: merged.sweepStep });
}
