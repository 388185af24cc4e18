// Arbitrary traffic for the property tests, and two ways to run it: on the real breaker and on
// the reference that walks its whole window every call. Clocks that jump and step back, odd
// rolls, permits settled late, twice or never, every policy knob.
import fc from "fast-check";
import { Breaker } from "@tideward/breaker";
import type { Permit, Sre } from "@tideward/breaker";
import { NaiveBreaker } from "./reference";
import type { Probe } from "./reference";

export type Op =
  | { readonly kind: "allow"; readonly dt: number; readonly roll: number }
  | { readonly kind: "call"; readonly dt: number; readonly roll: number; readonly ok: boolean }
  | { readonly kind: "settle"; readonly dt: number; readonly which: number; readonly ok: boolean }
  | { readonly kind: "ratio"; readonly dt: number };

// Mostly small steps inside one bucket or the next, some long gaps, some steps back, a few
// readings that make no sense.
export const dt = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0, max: 40 }) },
  { weight: 2, arbitrary: fc.integer({ min: 40, max: 600 }) },
  { weight: 1, arbitrary: fc.integer({ min: 600, max: 5_000 }) },
  { weight: 1, arbitrary: fc.integer({ min: -300, max: -1 }) },
  { weight: 1, arbitrary: fc.constantFrom(Number.NaN, Infinity, -Infinity, 0.5, 1e-7) },
  { weight: 1, arbitrary: fc.double({ min: 0, max: 50, noNaN: true }) },
);
// Uniform in [0, 1): fc.double spreads over the doubles themselves, which crowd near zero.
export const roll = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 0, max: 2 ** 32 - 1 }).map((x) => x / 2 ** 32) },
  { weight: 1, arbitrary: fc.constantFrom(0, -0.5, 1, 1.5, Number.NaN) },
);
export const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("allow" as const), dt, roll }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("call" as const), dt, roll, ok: fc.boolean() }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("settle" as const), dt, which: fc.nat(), ok: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("ratio" as const), dt }) },
);
export const policy: fc.Arbitrary<Partial<Sre>> = fc
  .record({
    floor: fc.double({ min: 0.05, max: 2, noNaN: true }),
    extra: fc.double({ min: 0, max: 2, noNaN: true }),
    protection: fc.integer({ min: 0, max: 8 }),
    probe: fc.oneof(fc.integer({ min: 1, max: 3_000 }), fc.constant(Infinity)),
    size: fc.integer({ min: 1, max: 8 }),
    window: fc.oneof(fc.integer({ min: 1, max: 2_000 }), fc.double({ min: 0.08, max: 2_000, noNaN: true })),
  })
  .map(({ floor, extra, ...rest }) => ({ ...rest, floor, k: floor + extra }));

/** Applies `t` to `now`, keeping the odd readings odd: NaN and ±Infinity are passed as they are. */
export function at(now: number, t: number): { next: number; pass: number } {
  if (!Number.isFinite(t)) return { next: now, pass: t };
  const next = now + t;
  return { next, pass: next };
}

/** What `runReal` saw of a source of draws handed to `allow` in place of each roll. */
export interface Draws {
  /** Draws the breaker asked for. */
  taken: number;
  /** Draws asked for at a reading where `ratio` was 0 and no probe was due: draws that decided nothing. */
  needless: number;
}

/**
 * Runs the ops on the real breaker: what each op answered (a decision, a ratio, null for a settle).
 * With `draws`, each roll is handed as a source that answers it, and its draws are counted.
 */
export function runReal(p: Partial<Sre>, ops: readonly Op[], origin = 0, draws?: Draws): (boolean | number | null)[] {
  const b = new Breaker(p, origin);
  const permits: Permit[] = [];
  const out: (boolean | number | null)[] = [];
  let now = origin;
  const rollOf = (o: { readonly roll: number }, t: number): number | (() => number) => {
    if (draws === undefined) return o.roll;
    const idle = b.ratio(t) === 0; // reading changes nothing
    return () => {
      draws.taken++;
      if (idle) draws.needless++;
      return o.roll;
    };
  };
  for (const o of ops) {
    const { next, pass } = at(now, o.dt);
    now = next;
    if (o.kind === "allow") {
      const permit = b.allow(pass, rollOf(o, pass));
      if (permit !== undefined) permits.push(permit);
      out.push(permit !== undefined);
    } else if (o.kind === "call") {
      // A call that finishes at once, settled at the same reading.
      const permit = b.allow(pass, rollOf(o, pass));
      if (o.ok) permit?.pass(pass);
      else permit?.fail(pass);
      out.push(permit !== undefined, b.ratio(pass));
    } else if (o.kind === "settle") {
      const permit = permits.length > 0 ? permits[o.which % permits.length] : undefined;
      if (o.ok) permit?.pass(pass);
      else permit?.fail(pass);
      out.push(null);
    } else out.push(b.ratio(pass));
  }
  return out;
}

/** The same ops on the reference that walks the whole window every call. */
export function runNaive(p: Partial<Sre>, ops: readonly Op[], origin = 0): (boolean | number | null)[] {
  const b = new NaiveBreaker(p, origin);
  const permits: { settled: boolean; probe: Probe | undefined }[] = [];
  const out: (boolean | number | null)[] = [];
  let now = origin;
  for (const o of ops) {
    const { next, pass } = at(now, o.dt);
    now = next;
    if (o.kind === "allow") {
      const ok = b.allow(pass, o.roll);
      if (ok) permits.push({ settled: false, probe: b.probed });
      out.push(ok);
    } else if (o.kind === "call") {
      const ok = b.allow(pass, o.roll);
      if (ok) {
        if (b.probed !== undefined) b.probed.out = false;
        b.settle(pass, o.ok);
      }
      out.push(ok, b.ratio(pass));
    } else if (o.kind === "settle") {
      const permit = permits.length > 0 ? permits[o.which % permits.length] : undefined;
      if (permit !== undefined && !permit.settled) {
        permit.settled = true;
        if (permit.probe !== undefined) permit.probe.out = false;
        b.settle(pass, o.ok);
      }
      out.push(null);
    } else out.push(b.ratio(pass));
  }
  return out;
}

// Well under a second each on an idle machine; the margin is for a loaded one, where they have
// run twenty times slower.
export const SLOW = 20_000;

export const scales = [
  ["near 0", fc.constant(0)],
  ["near performance.now()", fc.double({ min: 1e3, max: 1e7, noNaN: true })],
  ["near Date.now()", fc.double({ min: 1e12, max: 1e13, noNaN: true })],
] as const;
