// The snapshot format of a limiter's learned state, and the reader that turns an untrusted value
// into state for the limiter's algorithm or throws a SnapshotError naming the first bad field.
import { check, read } from "@tideward/time/internal";
import type { AimdLimit, AimdState } from "./aimd";
import { readAimd } from "./aimd";
import type { FixedLimit, FixedState } from "./fixed";
import { readFixed } from "./fixed";
import type { Gradient2Limit, Gradient2State } from "./gradient2";
import { readGradient2 } from "./gradient2";
import type { VegasLimit, VegasState } from "./vegas";
import { readVegas } from "./vegas";

/** The snapshot format's version. */
export const SNAPSHOT_VERSION = 1;

/**
 * What a limiter has learned, as plain JSON-safe data: what `Limiter.snapshot()` returns and
 * `Limiter.restore()` takes. `JSON.parse(JSON.stringify(s))` restores to the same state.
 */
export interface LimiterSnapshot {
  /** The format's version, {@link SNAPSHOT_VERSION}: a restore refuses any other. */
  readonly version: typeof SNAPSHOT_VERSION;
  /** What took the snapshot: a restore refuses another kind's. */
  readonly kind: "limiter";
  /** The latest clock reading the limiter had seen, in milliseconds on its own clock. */
  readonly clock: number;
  /** Which algorithm learned the state. */
  readonly algorithm: "aimd" | "vegas" | "gradient2" | "fixed";
  /** What it learned: the state of that algorithm. */
  readonly state: AimdState | VegasState | Gradient2State | FixedState;
}

type Algorithm = AimdLimit | VegasLimit | Gradient2Limit | FixedLimit;

/**
 * Reads an untrusted snapshot into state for `algorithm`, checking every field: the version and
 * kind, the shape, that it was taken from the same kind of algorithm, and that every number is in the range
 * `algorithm`'s policy allows.
 *
 * @throws SnapshotError naming the first bad field
 */
export function readSnapshot(value: unknown, algorithm: Algorithm): unknown {
  return read.guarded(() => {
    const root = read.root(value, "limiter", SNAPSHOT_VERSION, ["algorithm", "state"]);
    if (root.algorithm !== algorithm.kind)
      read.fail(
        "snapshot.algorithm",
        `must be ${JSON.stringify(algorithm.kind)} (the algorithm of this limiter), got ${check.describe(root.algorithm)}`,
      );
    const path = "snapshot.state";
    switch (algorithm.kind) {
      case "aimd":
        return readAimd(root.state, path, algorithm.policy);
      case "vegas":
        return readVegas(root.state, path, algorithm.policy);
      case "gradient2":
        return readGradient2(root.state, path, algorithm.policy);
      default:
        return readFixed(root.state, path);
    }
  });
}
