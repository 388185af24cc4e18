// The engine's promises at the clock magnitudes users pass (near 0, near performance.now(), near
// Date.now(), fractional): from rest exactly the capacity (or the GCRA burst) back to back;
// retryAfter is 0 exactly when the check passes and enough when it does not, as the caller adds
// it to its clock; a loop advancing a ManualClock by retryAfter ends; resetAfter is enough.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ManualClock } from "@tideward/time";
import { QuotaKey, charge } from "@tideward/quota-engine";
import type { ChargeKind, Decision, QuotaEngine } from "@tideward/quota-engine";
import { STARTS, engineWith, single } from "./traffic";

const KINDS: ChargeKind[] = ["bucket", "window", "gcra"];
const keys = [0, 1, 2].map((i) => new QuotaKey("t", `k${i}`, "r"));

// Rates from a trickle to a flood, with windows that are not whole multiples of anything.
const specArb = fc.record({
  capacity: fc.integer({ min: 1, max: 60 }),
  refill: fc.integer({ min: 1, max: 5_000 }),
  window: fc.oneof(fc.constantFrom(1_000, 60_000), fc.double({ min: 0.0625, max: 10_000, noNaN: true })),
  burst: fc.integer({ min: 1, max: 60 }),
  align: fc.boolean(),
});

const check = (engine: QuotaEngine, kind: ChargeKind, key: QuotaKey, now: number, cost: number): Decision =>
  single(engine, { key, limit: "l", cost, kind }, now);

describe.each(STARTS)("single checks on %s", (_, starts) => {
  it("property: from rest, exactly the capacity (GCRA: the burst) of unit charges pass back to back, remaining counting down", () => {
    fc.assert(
      fc.property(specArb, fc.constantFrom(...KINDS), starts, (s, kind, now) => {
        const engine = engineWith(s);
        const size = kind === "gcra" ? s.burst : s.capacity;
        const answers = Array.from({ length: size + 1 }, () => check(engine, kind, keys[0], now, 1));
        expect(answers.map((d) => d.allowed)).toEqual([...Array<boolean>(size).fill(true), false]);
        expect(answers.map((d) => d.remaining)).toEqual([...Array.from({ length: size }, (_, i) => size - 1 - i), 0]);
        expect(answers[size].reason).toBe("exhausted");
      }),
    );
  });

  it("property: retryAfter is 0 exactly when a check passes, and a check retried at now + retryAfter passes", () => {
    fc.assert(
      fc.property(
        specArb,
        fc.array(
          fc.tuple(
            fc.constantFrom(...KINDS),
            fc.integer({ min: 0, max: 2 }),
            fc.double({ min: 0, max: 300, noNaN: true }),
            fc.integer({ min: 1, max: 4 }),
          ),
          { maxLength: 80 },
        ),
        starts,
        (s, steps, start) => {
          const engine = engineWith(s);
          let now = start;
          for (const [kind, k, dt, cost] of steps) {
            now += dt;
            // What a charge would answer, without charging: the same evaluation as the check.
            const peek = engine.peekAtomic([charge(keys[k], "l", cost, kind)], now);
            const d = check(engine, kind, keys[k], now, cost);
            expect(d.allowed).toBe(peek.allowed);
            expect(d.retryAfter === 0).toBe(d.allowed);
            if (!d.allowed && Number.isFinite(d.retryAfter)) {
              const later = engine.peekAtomic([charge(keys[k], "l", cost, kind)], now + d.retryAfter);
              expect(later.allowed).toBe(true);
            }
          }
        },
      ),
    );
  });

  it("property: a loop that advances a ManualClock by retryAfter ends, one wait after each refusal", () => {
    fc.assert(
      fc.property(
        specArb,
        fc.constantFrom(...KINDS),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 150 }),
        starts,
        (s, kind, cost, calls, start) => {
          const engine = engineWith(s);
          const clock = new ManualClock(start);
          if (cost > (kind === "gcra" ? s.burst : s.capacity))
            return check(engine, kind, keys[0], clock.now(), cost).retryAfter === Infinity;
          for (let i = 0; i < calls; i++) {
            let d = check(engine, kind, keys[0], clock.now(), cost);
            if (d.allowed) continue;
            clock.advance(d.retryAfter);
            d = check(engine, kind, keys[0], clock.now(), cost);
            if (!d.allowed) return false; // one wait must be enough
          }
          return true;
        },
      ),
    );
  });

  it("property: resetAfter is enough: then the key takes its whole capacity (GCRA: burst) again", () => {
    fc.assert(
      fc.property(
        specArb,
        fc.constantFrom(...KINDS),
        fc.array(fc.tuple(fc.double({ min: 0, max: 300, noNaN: true }), fc.integer({ min: 1, max: 4 })), {
          minLength: 1,
          maxLength: 30,
        }),
        starts,
        (s, kind, steps, start) => {
          const engine = engineWith(s);
          let now = start;
          let last: Decision | undefined;
          for (const [dt, cost] of steps) last = check(engine, kind, keys[0], (now += dt), cost);
          const whole = kind === "gcra" ? s.burst : s.capacity;
          return engine.peekAtomic([charge(keys[0], "l", whole, kind)], now + (last?.resetAfter ?? 0)).allowed;
        },
      ),
    );
  });
});
