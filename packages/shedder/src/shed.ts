import { check } from "@tideward/time/internal";
import type { Span } from "@tideward/time";
import { Window } from "@tideward/window";

/**
 * The constants of adaptive load shedding: a plain readonly record. Build one by laying a few
 * fields over the preset, `{ ...shed, cpu: 800 }`, or hand `new Shedder` just the fields that
 * differ.
 */
export interface Shed {
  /** How many buckets the window of passes and response times has. @defaultValue 50 */
  readonly size: number;
  /** How far back that window reaches, in milliseconds. @defaultValue 5000 */
  readonly window: Span;
  /**
   * CPU use in thousandths (0–1000) at or above which the server counts as hot; under 1000,
   * since capacity is scaled by how far the CPU is from 1000 past it. @defaultValue 900
   */
  readonly cpu: number;
  /**
   * The response time assumed while the window holds no finished pass, in milliseconds: large
   * on purpose, so that a shedder that knows nothing yet does not refuse. @defaultValue 1000
   */
  readonly latency: Span;
  /**
   * Weight of the old value in the moving average of calls in flight, in `[0, 1)`. @defaultValue 0.9
   */
  readonly beta: number;
  /** How long the server stays hot after the CPU falls back, once it has refused, in milliseconds. @defaultValue 1000 */
  readonly cool: Span;
  /** The least share of capacity admitted however high the CPU is, in `[0, 1]`. @defaultValue 0.1 */
  readonly floor: number;
}

/**
 * The preset: five seconds in fifty buckets, hot at 900‰ CPU, a one-second assumed response
 * time, an average weighted 0.9, one second to cool and never less than a tenth of capacity.
 *
 * The memory is short on purpose: a five-second window follows the load it is in rather than
 * averaging a burst away, and the floor keeps a server already at full CPU from being told it
 * can serve nobody.
 */
export const shed: Shed = Object.freeze({
  size: 50,
  window: 5_000,
  cpu: 900,
  latency: 1_000,
  beta: 0.9,
  cool: 1_000,
  floor: 0.1,
});

const KNOWN = ["size", "window", "cpu", "latency", "beta", "cool", "floor"] as const;

/**
 * Lays `policy` over the preset and checks every field, once, at construction. The policy is
 * read once, into a copy, before anything is checked.
 *
 * @throws TypeError when `policy` is not an object, names a field `Shed` does not have (with the
 *   closest it does), or a field is not a number; RangeError when a field is NaN, infinite or
 *   out of its range, naming the field, the value and the bound
 */
export function resolveShed(policy: Partial<Shed> | undefined): Shed {
  if (policy === undefined) return shed;
  // A misspelt field would otherwise silently leave the preset's value in place.
  const given = check.options(policy, KNOWN, "Shedder", "policy");
  const p = { ...shed, ...given };
  const cpu = check.finite(p.cpu, "Shed cpu (thousandths)");
  if (cpu < 0 || cpu >= 1000)
    throw check.rangeError("Shed cpu (thousandths)", `must be 0 or more and under 1000, got ${cpu}`, cpu);
  const beta = check.finite(p.beta, "Shed beta");
  if (beta < 0 || beta >= 1) throw check.rangeError("Shed beta", `must be 0 or more and under 1, got ${beta}`, beta);
  const size = check.integer(p.size, "Shed size", 1);
  if (size > Window.maxSize)
    throw check.rangeError("Shed size", `must be at most ${Window.maxSize} buckets, got ${size}`, size);
  const window = check.positive(p.window, "Shed window (ms)");
  const least = Window.shortest(size);
  if (!(window >= least))
    throw check.rangeError(
      "Shed window (ms)",
      `must be at least ${least} for ${size} ${size === 1 ? "bucket" : "buckets"} (${Window.minWidth} ms a bucket), got ${window}`,
      window,
    );
  return Object.freeze({
    size,
    window,
    cpu,
    latency: check.nonNegative(p.latency, "Shed latency (ms)"),
    beta,
    cool: check.nonNegative(p.cool, "Shed cool (ms)"),
    floor: check.between(p.floor, 0, 1, "Shed floor"),
  });
}
