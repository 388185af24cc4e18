// The `halfOpen` option: off, the breaker is the plain formula call for call; on, a window of
// failures with no success lets only the probe through past protection, and a success into it
// clears the window; a window with any success is the formula's. Each property runs on a clock
// near 0, near performance.now() and near Date.now(), fractional.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Breaker, client, sre } from "@tideward/breaker";
import type { Permit, Sre } from "@tideward/breaker";
import { PASS } from "./helpers";
import { SLOW, at, op, policy, roll, runNaive, runReal, scales } from "./ops";
import type { Op } from "./ops";

/** Policies whose healthy case is the formula's: k of 1 or more, so successes alone never throttle. */
const healthy: fc.Arbitrary<Partial<Sre>> = policy.map((p) => ({
  ...p,
  k: Math.max(p.k ?? 1, 1),
  probe: p.probe === Infinity ? 2_000 : p.probe,
}));

/** Policies a half-open breaker accepts: a finite probe (half-open with none never closes). */
const probing: fc.Arbitrary<Partial<Sre>> = policy.map((p) => ({
  ...p,
  probe: p.probe === Infinity ? 2_000 : p.probe,
}));

/**
 * Runs `ops` on a breaker that can be half-open and checks, at every ask, the two promises a caller leans
 * on: a call is let through once nothing has been for `probe` ms, and while the window can hold
 * no failure and no refusal (none for a window and two buckets, a margin for the float grid).
 * Returns the asks that broke either promise.
 */
function broken(p: Partial<Sre>, ops: readonly Op[], origin: number): string[] {
  const b = new Breaker({ ...p, halfOpen: true }, origin);
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

describe("the halfOpen field", () => {
  it("is stated in every policy, false in the sre preset, so fields laid over another preset give sre", () => {
    expect(sre.halfOpen).toBe(false);
    expect(new Breaker({ halfOpen: false }).policy).toStrictEqual(new Breaker().policy);
    expect(new Breaker({ k: 2 }).policy).toStrictEqual({ ...sre, k: 2, halfOpen: false });
    expect(new Breaker({ ...client, ...sre }).policy).toStrictEqual(sre);
    expect(new Breaker({ halfOpen: true }).policy).toStrictEqual({ ...sre, halfOpen: true });
  });
});

describe.each(scales)("halfOpen on a clock %s", (_, start) => {
  it(
    "off, decides call for call as the breaker without the field",
    () => {
      fc.assert(
        fc.property(policy, fc.array(op, { maxLength: 200 }), start, (p, ops, origin) => {
          expect(runReal({ ...p, halfOpen: false }, ops, origin)).toEqual(runReal(p, ops, origin));
        }),
        { numRuns: 100 },
      );
    },
    SLOW,
  );

  it(
    "on, makes exactly the decisions of a reference that walks its window every call",
    () => {
      fc.assert(
        fc.property(probing, fc.array(op, { maxLength: 200 }), start, (p, ops, origin) => {
          const q = { ...p, halfOpen: true };
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
    "on, refuses all but the probe in a window of failures, closes at the first success, at most once a window",
    () => {
      const setup = fc.record({
        k: fc.double({ min: 1, max: 3, noNaN: true }),
        protection: fc.integer({ min: 0, max: 5 }),
        size: fc.integer({ min: 3, max: 40 }),
        window: fc.double({ min: 10, max: 20_000, noNaN: true }),
        // How much of the window the outage's asks are spread over, and the probe as a share of that.
        into: fc.double({ min: 0.3, max: 0.9, noNaN: true }),
        probe: fc.double({ min: 0.05, max: 0.45, noNaN: true }),
        rolls: fc.array(roll, { minLength: 30, maxLength: 120 }),
      });
      fc.assert(
        fc.property(setup, start, ({ into, probe, rolls, ...p }, origin) => {
          const width = p.window / p.size;
          const span = into * (p.size - 1) * width;
          const b = new Breaker({ ...p, floor: 1, probe: probe * span, halfOpen: true }, origin);
          const wait = b.policy.probe;
          // A success, then failures from a bucket's start after it aged out, spread over less
          // than the window, so all of them stay in it: protection + 1 get through, then only
          // the probes, whatever the roll.
          b.allow(origin, PASS)?.pass(origin);
          const down = origin + (p.size + 2) * width;
          let last = origin;
          let through = 0;
          const wrong: string[] = [];
          rolls.forEach((r, i) => {
            const t = down + (i * span) / rolls.length;
            const due = t - last >= wait;
            const permit = b.allow(t, r);
            if (permit !== undefined) {
              if (through > p.protection && !due) wrong.push(`let through at ${t} with no probe due`);
              through++;
              last = t;
              permit.fail(t);
            } else if (due) wrong.push(`refused the probe at ${t}`);
            if (through > p.protection && b.ratio(t) !== 1) wrong.push(`ratio ${b.ratio(t)} at ${t}`);
          });
          expect(wrong).toEqual([]);
          // The next probe succeeds: the window closes, and nothing is refused. (`last + wait`
          // can round a float step short of the wait: the probe falls due at the next step.)
          let good = last + wait;
          while (good - last < wait) good += Math.abs(good) * Number.EPSILON;
          b.allow(good, 0)?.pass(good);
          expect(b.ratio(good)).toBe(0);
          expect(b.allow(good, 0)).toBeDefined();
          // The success it kept stays in the window: failures and then a success in the next
          // bucket are the plain formula's again, and the throttle stands.
          const next = good + width;
          for (let i = 0; i < 12; i++) b.allow(next, PASS)?.fail(next);
          b.allow(next, PASS)?.pass(next);
          expect(b.ratio(next)).toBeGreaterThan(0);
          expect(b.ratio(next)).toBeLessThan(1);
        }),
        { numRuns: 200 },
      );
    },
    SLOW,
  );
});
