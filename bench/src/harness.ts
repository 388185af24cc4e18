// A side-by-side comparison: every case runs in the same process, and the report gives each
// peer's cost as a ratio of tideward's (the first case), so figures from different machines compare.
import { do_not_optimize, measure } from "mitata";

/**
 * One contender: a name and a body that returns what it computed (so the JIT cannot drop it).
 * A body that returns a promise (an async API such as cockatiel's `execute` or opossum's `fire`)
 * is awaited every call, so its cost includes settling, as a caller would pay it.
 */
export interface Case {
  readonly name: string;
  readonly fn: () => unknown;
}

/** The body mitata measures: awaited when the case answers with a promise. */
async function body(fn: () => unknown): Promise<() => unknown> {
  const first = fn();
  if (!(first instanceof Promise)) return () => do_not_optimize(fn());
  await first;
  return async () => do_not_optimize(await fn());
}

/** What {@link compare} measured for one case, in nanoseconds per call. */
export interface Result {
  readonly name: string;
  readonly ns: number;
  readonly p99: number;
}

function pad(text: string, width: number): string {
  return text.length >= width ? text : text + " ".repeat(width - text.length);
}

/**
 * Measures every case and prints a table: nanoseconds per call, calls per second, and how many
 * times faster the first case (tideward) is than each of the others.
 */
export async function compare(title: string, cases: readonly Case[]): Promise<Result[]> {
  const bodies = await Promise.all(cases.map((c) => body(c.fn)));
  // One short round first, thrown away: whichever case is measured first otherwise pays for
  // warming up (the JIT's tiers, the heap's young generation) and reads several times slower.
  for (const f of bodies) await measure(f, { min_cpu_time: 100e6 });
  const results: Result[] = [];
  for (const [i, c] of cases.entries()) {
    const stats = await measure(bodies[i], { min_cpu_time: 400e6 });
    results.push({ name: c.name, ns: stats.avg, p99: stats.p99 });
  }
  const first = results[0];
  if (first === undefined) return results;
  console.log(`\n${title}`);
  console.log(`  ${pad("case", 46)} ${pad("ns/call", 10)} ${pad("calls/s", 14)} tideward is`);
  for (const r of results) {
    const ratio = r === first ? "—" : `${(r.ns / first.ns).toFixed(2)}× faster`;
    const perSecond = Math.round(1e9 / r.ns).toLocaleString("en");
    console.log(`  ${pad(r.name, 46)} ${pad(r.ns.toFixed(1), 10)} ${pad(perSecond, 14)} ${ratio}`);
  }
  return results;
}
