// The tuned half-open, `halfOpen: { probes, share, inFlight, hold }`: a trial of probes that
// closes at a share of passes, and a bound on the probes out at once. Its defaults decide as
// `halfOpen: true` call for call; tuned, the breaker decides as a reference that walks its whole
// window every call; a flood of concurrent callers gets no more probes out than the bound.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Breaker, client } from "@tideward/breaker";
import type { HalfOpen, Permit, Sre } from "@tideward/breaker";
import { seededRandom } from "@tideward/time";
import { PASS } from "./helpers";
import { SLOW, op, policy, runNaive, runReal, scales } from "./ops";

const halfOpen: fc.Arbitrary<HalfOpen> = fc.record(
  {
    probes: fc.integer({ min: 1, max: 4 }),
    share: fc.oneof(
      fc.constantFrom(1, 0.5, 2 / 3, 0.7, 0.34),
      fc.double({ min: 0.01, max: 1, noNaN: true, minExcluded: true }),
    ),
    inFlight: fc.oneof(fc.integer({ min: 1, max: 3 }), fc.constant(Infinity)),
    hold: fc.oneof(fc.integer({ min: 1, max: 3_000 }), fc.constant(Infinity)),
  },
  { requiredKeys: [] },
);

/** Policies with a tuned half-open, and a finite probe (a half-open breaker with none never closes). */
const tuned: fc.Arbitrary<Partial<Sre>> = fc
  .tuple(policy, halfOpen)
  .map(([p, h]) => ({ ...p, probe: p.probe === Infinity ? 2_000 : p.probe, halfOpen: h }));

describe.each(scales)("a tuned half-open on a clock %s", (_, start) => {
  it(
    "with every field left at its default, decides call for call as halfOpen: true",
    () => {
      const same = fc.constantFrom<HalfOpen>({}, { probes: 1, share: 1, inFlight: Infinity }, { share: 0.4 });
      fc.assert(
        fc.property(policy, same, fc.array(op, { maxLength: 200 }), start, (p, h, ops, origin) => {
          const q = { ...p, probe: p.probe === Infinity ? 2_000 : p.probe };
          expect(runReal({ ...q, halfOpen: h }, ops, origin)).toEqual(runReal({ ...q, halfOpen: true }, ops, origin));
        }),
        { numRuns: 100 },
      );
    },
    SLOW,
  );

  it(
    "makes exactly the decisions of a reference that walks its window and its probes every call",
    () => {
      fc.assert(
        fc.property(tuned, fc.array(op, { maxLength: 250 }), start, (p, ops, origin) => {
          expect(runReal(p, ops, origin)).toEqual(runNaive(p, ops, origin));
        }),
        { numRuns: 250 },
      );
    },
    SLOW,
  );
});

// A minute of history, so failures outlast every trial below, and a probe every 100 ms.
const slow = { k: 2, floor: 1.1, protection: 5, probe: 100, size: 60, window: 60_000 } as const;
const T0 = 1_700_000_000_000.25;

/** A breaker whose window holds twenty failures at T0 and no success: half-open. */
function halfOpenAt(h: HalfOpen | boolean): Breaker {
  const b = new Breaker({ ...slow, halfOpen: h }, T0);
  for (let i = 0; i < 20; i++) b.allow(T0, PASS)?.fail(T0);
  expect(b.ratio(T0)).toBe(1);
  return b;
}

/** Lets the probe due after `t` through (the asks before it refused), settles it, and answers the time. */
function probe(b: Breaker, t: number, ok: boolean): number {
  expect(b.allow(t + 50, PASS)).toBeUndefined();
  const at = t + 100;
  const permit = b.allow(at, PASS);
  expect(permit).toBeDefined();
  if (ok) permit?.pass(at);
  else permit?.fail(at);
  return at;
}

describe("a half-open trial", () => {
  it.each([
    [1, 1, 1],
    [3, 1, 3],
    [3, 2 / 3, 2],
    [10, 0.7, 7], // 0.7 × 10 is 7.000000000000001 in doubles: still 7 passes
    [4, 0.5, 2],
    [4, 0.51, 3],
    [5, 0.01, 1],
    [5, 1, 5],
  ])("of %d probes at a share of %d closes at pass %d, and not one pass before", (probes, share, need) => {
    const b = halfOpenAt({ probes, share });
    let t = T0;
    for (let i = 1; i < need; i++) {
      t = probe(b, t, true);
      expect(b.ratio(t)).toBe(1); // still half-open: only probes go through
    }
    t = probe(b, t, true);
    expect(b.ratio(t)).toBe(0);
    expect(b.allow(t, 0)).toBeDefined(); // closed: nothing is refused
  });

  it("fails once more of its probes fail than it can spare, and the next success starts another", () => {
    // Three probes, two of which must pass: one failure is spared, a second fails the trial.
    const b = halfOpenAt({ probes: 3, share: 2 / 3 });
    let t = probe(b, T0, true);
    t = probe(b, t, false);
    expect(b.snapshot().trial).toEqual({ passes: 1, failures: 1 });
    t = probe(b, t, false);
    expect(b.snapshot().trial).toEqual({ passes: 0, failures: 0 });
    expect(b.ratio(t)).toBe(1);
    // A failure with no trial under way is the outage's, not a trial's.
    t = probe(b, t, false);
    expect(b.snapshot().trial).toEqual({ passes: 0, failures: 0 });
    t = probe(b, t, true);
    expect(b.ratio(t)).toBe(1);
    t = probe(b, t, true);
    expect(b.ratio(t)).toBe(0);
  });

  it("spares a failure between passes: two of three closes on pass, fail, pass", () => {
    const b = halfOpenAt({ probes: 3, share: 2 / 3 });
    let t = probe(b, T0, true);
    t = probe(b, t, false);
    t = probe(b, t, true);
    expect(b.ratio(t)).toBe(0);
  });

  it("ends when the window has forgotten every call: the next failure starts nothing", () => {
    // Two passes of three: one failure is spared, so only the empty window ends this trial.
    const b = halfOpenAt({ probes: 3, share: 2 / 3 });
    const t = probe(b, T0, true);
    expect(b.snapshot().trial.passes).toBe(1);
    // Two windows later with no call in between: the window is empty, the failure is the first.
    const later = t + 2 * slow.window;
    b.allow(later, PASS)?.fail(later);
    expect(b.snapshot().trial).toEqual({ passes: 0, failures: 0 });
  });
});

describe("probes in flight", () => {
  it("a probe never settled holds its place for `hold` ms, then the next probe goes", () => {
    const b = halfOpenAt({ inFlight: 1, hold: 1_000 });
    const lost = b.allow(T0 + 100, PASS); // a cancelled call: its permit is never settled
    expect(lost).toBeDefined();
    // Probes fall due every 100 ms, and every one is refused while the lost one holds its place.
    for (let t = T0 + 200; t < T0 + 1_100; t += 100) expect(b.allow(t, PASS)).toBeUndefined();
    const next = b.allow(T0 + 1_100, PASS);
    expect(next).toBeDefined();
    next?.pass(T0 + 1_100);
    expect(b.ratio(T0 + 1_100)).toBe(0);
    // The lost permit settling late counts as any late settle does, and frees nothing twice.
    lost?.fail(T0 + 1_200);
    expect(b.allow(T0 + 1_200, 0)).toBeDefined();
  });

  it("a settled probe gives its place back at once: the next goes when due", () => {
    const b = halfOpenAt({ inFlight: 1, hold: Infinity });
    const first = b.allow(T0 + 100, PASS);
    expect(b.allow(T0 + 150, PASS)).toBeUndefined();
    first?.fail(T0 + 160);
    expect(b.allow(T0 + 170, PASS)).toBeUndefined(); // its place is free, but no probe is due yet
    expect(b.allow(T0 + 200, PASS)).toBeDefined(); // 100 ms since the last let through
  });

  it("with hold: Infinity, a probe never settled keeps the breaker half-open: settle every permit", () => {
    const b = halfOpenAt({ inFlight: 1, hold: Infinity });
    expect(b.allow(T0 + 100, PASS)).toBeDefined();
    // Ten windows of a call a second, every one refused: their refusals keep the window full.
    let through = 0;
    for (let t = T0 + 1_000; t < T0 + 10 * slow.window; t += 1_000) if (b.allow(t, PASS) !== undefined) through++;
    expect(through).toBe(0);
  });
});

/**
 * A discrete-event loop: callers `wait` on simulated time, and `run` wakes them in time order,
 * letting each instant's callers run to their next wait before the clock moves on.
 */
class Loop {
  now: number;
  readonly #due = new Map<number, (() => void)[]>();
  constructor(start: number) {
    this.now = start;
  }
  wait(ms: number): Promise<void> {
    const at = this.now + ms;
    return new Promise((resolve) => {
      const list = this.#due.get(at);
      if (list === undefined) this.#due.set(at, [resolve]);
      else list.push(resolve);
    });
  }
  async run(until: number): Promise<void> {
    // Let every caller reach its first wait.
    await new Promise((r) => setImmediate(r));
    while (this.#due.size > 0) {
      const at = Math.min(...this.#due.keys());
      if (at > until) break;
      const wake = this.#due.get(at) ?? [];
      this.#due.delete(at);
      this.now = at;
      for (const w of wake) w();
      await new Promise((r) => setImmediate(r));
    }
  }
}

interface Flood {
  /** The most calls out at once. */
  readonly most: number;
  /** When each call was let through (ms after the flood started). */
  readonly starts: number[];
}

/**
 * 200 callers against a dead backend whose calls hang for 2 s and then fail, each asking again
 * 10 ms after a refusal, for 6 s, on a client breaker that is half-open from the start.
 */
async function flood(h: HalfOpen | boolean): Promise<Flood> {
  const loop = new Loop(T0);
  const b = new Breaker({ ...client, halfOpen: h }, T0);
  for (let i = 0; i < 20; i++) b.allow(T0, PASS)?.fail(T0);
  expect(b.ratio(T0)).toBe(1);
  const random = seededRandom(7);
  const end = T0 + 6_000;
  let out = 0;
  let most = 0;
  const starts: number[] = [];
  const caller = async (): Promise<void> => {
    while (loop.now < end) {
      const permit: Permit | undefined = b.allow(loop.now, random);
      if (permit === undefined) {
        await loop.wait(10);
        continue;
      }
      starts.push(loop.now - T0);
      most = Math.max(most, ++out);
      await loop.wait(2_000);
      out--;
      permit.fail(loop.now);
    }
  };
  const callers = Array.from({ length: 200 }, () => caller());
  await loop.run(end + 2_000);
  await Promise.all(callers);
  return { most, starts };
}

describe("a probe flood: 200 concurrent callers, a backend whose calls hang 2 s", () => {
  it("inFlight: 1 with a hold past the hang lets one probe out at a time, one as each settles", async () => {
    const { most, starts } = await flood({ inFlight: 1, hold: 5_000 });
    expect(most).toBe(1);
    // Due 400 ms after the breaker was made, then as each probe fails, 2 s later.
    expect(starts).toEqual([400, 2_400, 4_400]);
  });

  it("inFlight: 2 lets two out at most", async () => {
    const { most, starts } = await flood({ inFlight: 2, hold: 5_000 });
    expect(most).toBe(2);
    expect(starts).toEqual([400, 800, 2_400, 2_800, 4_400, 4_800]);
  });

  it("with the hold left at the window (750 ms), a probe out longer stops counting: three out at most", async () => {
    const { most } = await flood({ inFlight: 1 });
    expect(most).toBe(3);
  });

  it("halfOpen: true bounds only the pace: one probe every 400 ms, five out at once", async () => {
    const { most, starts } = await flood(true);
    expect(most).toBe(5);
    for (let i = 1; i < starts.length; i++) expect((starts[i] ?? 0) - (starts[i - 1] ?? 0)).toBeGreaterThanOrEqual(400);
  });
});
