// The `forget` option: off, the breaker is the plain formula call for call; on, a success into a
// window of failures with no success clears the window, and nothing else changes. Each property
// runs on a clock near 0, near performance.now() and near Date.now(), fractional.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Breaker, sre } from "@tideward/breaker";
import type { Permit, Sre } from "@tideward/breaker";
import { PASS } from "./helpers";
import { SLOW, at, op, policy, runNaive, runReal, scales } from "./ops";
import type { Op } from "./ops";

/** Policies whose healthy case is the formula's: k of 1 or more, so successes alone never throttle. */
const healthy: fc.Arbitrary<Partial<Sre>> = policy.map((p) => ({
  ...p,
  k: Math.max(p.k ?? 1, 1),
  probe: p.probe === Infinity ? 2_000 : p.probe,
}));

/**
 * Runs `ops` on a breaker that forgets and checks, at every ask, the two promises a caller leans
 * on: a call is let through once nothing has been for `probe` ms, and while the window can hold
 * no failure and no refusal (none for a window and two buckets, a margin for the float grid).
 * Returns the asks that broke either promise.
 */
function broken(p: Partial<Sre>, ops: readonly Op[], origin: number): string[] {
  const b = new Breaker({ ...p, forget: true }, origin);
  const { probe, window, size } = b.policy;
  const permits: Permit[] = [];
  const bad: string[] = [];
  let now = origin;
  let latest = origin;
  let last = origin;
  let lastBad = -Infinity;
  const see = (t: number): void => {
    if (t > latest && t < Infinity) latest = t;
  };
  for (const o of ops) {
    const { next, pass } = at(now, o.dt);
    now = next;
    // The breaker's clock moves on an ask and on a settle that counts, never on a reading.
    if (o.kind === "allow" || o.kind === "call") {
      see(pass);
      const probeDue = latest - last >= probe;
      const clean = latest - lastBad > window + (2 * window) / size;
      const permit = b.allow(pass, o.roll);
      if (permit === undefined) {
        if (probeDue) bad.push(`refused at ${latest} with a probe due (last let through ${last})`);
        if (clean) bad.push(`refused at ${latest} with nothing bad since ${lastBad}`);
        lastBad = latest;
        continue;
      }
      last = latest;
      if (o.kind === "allow") permits.push(permit);
      else if (o.ok) permit.pass(pass);
      else {
        permit.fail(pass);
        lastBad = latest;
      }
    } else if (o.kind === "settle") {
      const permit = permits.length > 0 ? permits[o.which % permits.length] : undefined;
      if (permit !== undefined && !permit.settled) {
        see(pass);
        if (!o.ok) lastBad = latest;
      }
      if (o.ok) permit?.pass(pass);
      else permit?.fail(pass);
    } else b.ratio(pass);
  }
  return bad;
}

describe("the forget field", () => {
  it("is left out of the policy when off, so a policy that does not forget is the preset's record", () => {
    expect(new Breaker({ forget: false }).policy).toStrictEqual(new Breaker().policy);
    expect(Object.keys(new Breaker({ forget: false, k: 2 }).policy)).not.toContain("forget");
    expect(new Breaker({ forget: true }).policy).toStrictEqual({ ...sre, forget: true });
  });
});

describe.each(scales)("forget on a clock %s", (_, start) => {
  it(
    "off, decides call for call as the breaker without the field",
    () => {
      fc.assert(
        fc.property(policy, fc.array(op, { maxLength: 200 }), start, (p, ops, origin) => {
          expect(runReal({ ...p, forget: false }, ops, origin)).toEqual(runReal(p, ops, origin));
        }),
        { numRuns: 100 },
      );
    },
    SLOW,
  );

  it(
    "on, makes exactly the decisions of a reference that clears its window on such a success",
    () => {
      fc.assert(
        fc.property(policy, fc.array(op, { maxLength: 200 }), start, (p, ops, origin) => {
          const q = { ...p, forget: true };
          expect(runReal(q, ops, origin)).toEqual(runNaive(q, ops, origin));
        }),
        { numRuns: 200 },
      );
    },
    SLOW,
  );

  it(
    "on, still probes, and never refuses while the window holds neither a failure nor a refusal",
    () => {
      fc.assert(
        fc.property(healthy, fc.array(op, { maxLength: 300 }), start, (p, ops, origin) => {
          expect(broken(p, ops, origin)).toEqual([]);
        }),
        { numRuns: 150 },
      );
    },
    SLOW,
  );

  it(
    "on, ends the throttle at the first success after a window of failures, and at most once a window",
    () => {
      const setup = fc.record({
        k: fc.double({ min: 1, max: 3, noNaN: true }),
        protection: fc.integer({ min: 0, max: 5 }),
        size: fc.integer({ min: 1, max: 40 }),
        window: fc.double({ min: 10, max: 20_000, noNaN: true }),
        // Failures in the outage, past what protection and k excuse, and how much of the window
        // they are spread over.
        failures: fc.integer({ min: 12, max: 60 }),
        into: fc.double({ min: 0, max: 0.9, noNaN: true }),
      });
      fc.assert(
        fc.property(setup, start, ({ failures, into, ...p }, origin) => {
          const on = new Breaker({ ...p, floor: 1, probe: Infinity, forget: true }, origin);
          const off = new Breaker({ ...p, floor: 1, probe: Infinity }, origin);
          const width = p.window / p.size;
          // A success, then failures from a bucket's start after it aged out, over less than the
          // window's span, so that all of them are in the window when the good call comes.
          const down = origin + (p.size + 2) * width;
          const span = into * (p.size - 1) * width;
          for (const b of [on, off]) {
            b.allow(origin, PASS)?.pass(origin);
            for (let i = 0; i < failures; i++) {
              const t = down + (i * span) / failures;
              b.allow(t, PASS)?.fail(t);
            }
          }
          const good = down + span;
          expect(on.ratio(good)).toBeGreaterThan(0);
          on.allow(good, PASS)?.pass(good);
          off.allow(good, PASS)?.pass(good);
          expect(on.ratio(good)).toBe(0);
          expect(on.allow(good, 0)).toBeDefined();
          expect(off.ratio(good)).toBeGreaterThan(0);
          // The success it kept stays in the window: failures and then a success in the next
          // bucket are the plain formula's again, and the throttle stands.
          const next = p.size > 1 ? good + width : good;
          for (let i = 0; i < failures; i++) on.allow(next, PASS)?.fail(next);
          on.allow(next, PASS)?.pass(next);
          expect(on.ratio(next)).toBeGreaterThan(0);
        }),
        { numRuns: 200 },
      );
    },
    SLOW,
  );
});
