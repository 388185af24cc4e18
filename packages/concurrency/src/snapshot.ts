// The snapshot format of a limiter's learned state, and the reader that turns an untrusted value
// into state for the limiter's algorithm or throws a SnapshotError naming the first bad field.
import { check } from "@tideward/time/internal";
import type { AimdLimit, AimdState } from "./aimd";
import { readAimd } from "./aimd";
import { SnapshotError } from "./errors";
import type { FixedLimit, FixedState } from "./fixed";
import { readFixed } from "./fixed";
import type { Gradient2Limit, Gradient2State } from "./gradient2";
import { readGradient2 } from "./gradient2";
import { fail, record } from "./read";
import type { VegasLimit, VegasState } from "./vegas";
import { readVegas } from "./vegas";

/** The snapshot format's version. */
export const SNAPSHOT_VERSION = 1;

/**
 * What a limiter has learned, as plain JSON-safe data: what `Limiter.snapshot()` returns and
 * `Limiter.restore()` takes. `JSON.parse(JSON.stringify(s))` restores to the same state.
 */
export interface LimiterSnapshot {
  readonly version: typeof SNAPSHOT_VERSION;
  /** The latest clock reading the limiter had seen, in milliseconds on its own clock. */
  readonly clock: number;
  /** Which algorithm learned the state. */
  readonly algorithm: "aimd" | "vegas" | "gradient2" | "fixed";
  /** What it learned: the state of that algorithm. */
  readonly state: AimdState | VegasState | Gradient2State | FixedState;
}

type Algorithm = AimdLimit | VegasLimit | Gradient2Limit | FixedLimit;

/**
 * Reads an untrusted snapshot into state for `algorithm`, checking every field: the version, the
 * shape, that it was taken from the same kind of algorithm, and that every number is in the range
 * `algorithm`'s policy allows.
 *
 * @throws SnapshotError naming the first bad field
 */
export function readSnapshot(value: unknown, algorithm: Algorithm): unknown {
  // A Proxy (a revoked one included) can throw from any reflection on it: what reading it throws
  // is the snapshot's fault, so it is refused as such, never passed on.
  try {
    return read(value, algorithm);
  } catch (e) {
    if (e instanceof SnapshotError) throw e;
    fail("snapshot", `could not be read: ${e instanceof Error ? e.message : check.describe(e)}`);
  }
}

function read(value: unknown, algorithm: Algorithm): unknown {
  const root = record(value, "snapshot", ["version", "clock", "algorithm", "state"]);
  if (root.version !== SNAPSHOT_VERSION)
    fail("snapshot.version", `must be ${SNAPSHOT_VERSION}, got ${check.describe(root.version)}`);
  if (typeof root.clock !== "number" || !Number.isFinite(root.clock))
    fail("snapshot.clock", `must be a finite number of milliseconds, got ${check.describe(root.clock)}`);
  if (root.algorithm !== algorithm.kind)
    fail(
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
}
