import { describe, expect, it } from "vitest";
import { contentionBackoff } from "@tideward/sim";
import { STARTS } from "./helpers";

// Fewer clients and seeds than the page's, so the suite stays quick; the ordering is the study's.
const SMALL = { clients: 30, seeds: 3 };

describe.each(STARTS)("backoff under contention (start %s)", (start) => {
  const r = contentionBackoff.run(SMALL, { start });
  const f = r.figures;
  const jittered = ["full", "equal", "decorrelated"];

  it("runs the guard's default first, then no backoff, no jitter and the three jitters; every client gets its write in", () => {
    expect(r.runs.map((x) => x.label)).toEqual([
      "exponential, spread by a fifth (the guard's default)",
      "no backoff",
      "exponential, no jitter",
      "full jitter",
      "equal jitter",
      "decorrelated jitter",
    ]);
    for (const id of ["spread", "nobackoff", "rigid", ...jittered]) {
      expect(f[`${id}.goodputRate`]).toBe(1);
      // At least one call a client; every call past that was a conflict.
      expect(f[`${id}.calls`]).toBeGreaterThanOrEqual(SMALL.clients);
      expect(f[`${id}.wasted`]).toBeCloseTo(f[`${id}.calls`] - SMALL.clients, 9);
    }
  });

  it("no jitter is far worse than any jitter, in calls and in time; full jitter is among the fewest calls", () => {
    for (const id of jittered) {
      expect(f["rigid.calls"]).toBeGreaterThan(1.3 * f[`${id}.calls`]);
      expect(f["rigid.completionTime"]).toBeGreaterThan(4 * f[`${id}.completionTime`]);
    }
    const fewest = Math.min(...jittered.map((id) => f[`${id}.calls`]));
    expect(f["full.calls"]).toBeLessThanOrEqual(1.1 * fewest);
  });

  it("prints its times in seconds, as the runs' summaries do, and its sentences quote the table's cells", () => {
    const done = r.tables[0].rows.map((row) => String(row[row.length - 1]));
    for (const cell of done) expect(cell).toMatch(/^\d+\.\d\d s$/);
    expect(done[0]).toBe(`${(f["spread.completionTime"] / 1_000).toFixed(2)} s`);
    for (const cell of done.slice(2)) expect(r.report).toContain(cell);
    expect(r.report).not.toMatch(/(and|in) \d+ ms\b/);
  });

  it("no backoff at all ends soonest and costs the most calls", () => {
    for (const id of ["spread", "rigid", ...jittered]) {
      expect(f["nobackoff.completionTime"]).toBeLessThan(f[`${id}.completionTime`]);
      expect(f["nobackoff.calls"]).toBeGreaterThan(f[`${id}.calls`]);
    }
  });
});

describe("backoff under contention: knobs", () => {
  it("one client never conflicts, whatever the strategy", () => {
    const f = contentionBackoff.run({ clients: 1, seeds: 1 }).figures;
    for (const id of ["spread", "nobackoff", "rigid", "full", "equal", "decorrelated"])
      expect(f[`${id}.calls`]).toBe(1);
  });

  it("more clients cost more calls each", () => {
    const few = contentionBackoff.run({ clients: 10, seeds: 2 }).figures;
    const many = contentionBackoff.run({ clients: 40, seeds: 2 }).figures;
    expect(many["full.callsPerClient"]).toBeGreaterThan(few["full.callsPerClient"]);
    expect(many["rigid.callsPerClient"]).toBeGreaterThan(few["rigid.callsPerClient"]);
  });
});
