// One stage, two sides: the same trace of calls (arrivals with a priority, each lasting a while and
// ending in a success or a failure) through a client guard and through a server admit, each with
// a limiter of its own built alike, decides alike — the same admissions, the same refusals with
// the same reasons, and the limit moving the same way — at clocks near 0 and near Date.now().
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { criticality } from "@tideward/concurrency";
import { admit, guard } from "@tideward/guard";
import type { Verdict } from "@tideward/guard";
import { ManualClock } from "@tideward/time";
import { algorithms, arrival, events, fixed, flush } from "./limit-traces";
import type { Arrival, Build } from "./limit-traces";

/** What one side does with the trace: one line per event (a decision, or an end), with the limit after it. */
type Side = (build: Build, trace: readonly Arrival[], t0: number) => Promise<string[]>;

const client: Side = async (build, trace, t0) => {
  const clock = new ManualClock(t0);
  const limiter = build(t0);
  let refused: string | undefined;
  const ends: ((() => void) | undefined)[] = [];
  // One guard per level, sharing the limiter, as a client gives each kind of call its own.
  const guards = criticality.names.map((priority) =>
    guard(
      (_a, i: number) =>
        new Promise<string>((resolve, reject) => {
          ends[i] = () => (trace[i].fails ? reject(new Error("down")) : resolve("ok"));
        }),
      { limit: limiter, priority, clock: clock.now, onRefuse: (e) => void (refused = e.kind) },
    ),
  );
  const seen: string[] = [];
  for (const e of events(trace, t0)) {
    clock.set(e.at);
    if (e.end) {
      const end = ends[e.i];
      if (end === undefined) continue;
      end();
      await flush();
      seen.push(`end ${e.i} ${limiter.limit} ${limiter.flying}`);
    } else {
      refused = undefined;
      guards[trace[e.i].level](e.i).catch(() => undefined);
      seen.push(`${e.i} ${refused ?? "in"} ${limiter.limit} ${limiter.flying}`);
    }
  }
  return seen;
};

const server: Side = async (build, trace, t0) => {
  const clock = new ManualClock(t0);
  const limiter = build(t0);
  const a = admit({ limit: limiter, clock: clock.now });
  const held: (Verdict | undefined)[] = [];
  const seen: string[] = [];
  for (const e of events(trace, t0)) {
    clock.set(e.at);
    if (e.end) {
      const v = held[e.i];
      if (v === undefined) continue;
      v.release(!trace[e.i].fails);
      await flush();
      seen.push(`end ${e.i} ${limiter.limit} ${limiter.flying}`);
    } else {
      const v = a.check("", 1, criticality.names[trace[e.i].level]) as Verdict;
      if (v.allowed) held[e.i] = v;
      seen.push(`${e.i} ${v.reason ?? "in"} ${limiter.limit} ${limiter.flying}`);
    }
  }
  return seen;
};

describe.each([
  ["near 0", 0],
  ["near Date.now()", 1_700_000_000_000.37],
])("the limit stage decides alike in a guard and in admit, clock %s", (_, t0) => {
  it.each(algorithms)("%s", async (_name, build) => {
    let refusedSome = false;
    let moved = false;
    const alike = async (trace: readonly Arrival[]): Promise<void> => {
      const ours = await client(build, trace, t0);
      expect(await server(build, trace, t0)).toEqual(ours);
      refusedSome ||= ours.some((line) => / (limit|reserved) /.test(line));
      moved ||= new Set(ours.map((line) => line.split(" ").at(-2))).size > 1;
    };
    for (const trace of fixed) await alike(trace);
    // The fixed traces alone put the stage to work: it refused, and its limit moved.
    expect([refusedSome, moved]).toEqual([true, true]);
    await fc.assert(fc.asyncProperty(fc.array(arrival, { minLength: 1, maxLength: 80 }), alike), { numRuns: 40 });
  });
});
