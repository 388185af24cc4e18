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

/** What {@link compare} measured for one case, in nanoseconds per call. */
export interface Result {
  readonly name: string;
  readonly ns: number;
  readonly p99: number;
}

type Make = (fn: () => unknown, sink: (v: unknown) => void) => () => unknown;

/**
 * The body mitata measures, compiled for this case alone. One shared `() => sink(fn())` would
 * see every case's body at its call site, go megamorphic, stop inlining and add ~10 ns to each
 * case, compressing the ratios of nanosecond-scale operations. Awaited when the case answers
 * with a promise.
 */
async function body(fn: () => unknown): Promise<() => unknown> {
  const first = fn();
  const isAsync = first instanceof Promise;
  if (isAsync) await first;
  const source = isAsync ? "return async function measured() { sink(await fn()); };" : "return function measured() { sink(fn()); };";
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- a fresh function per case is the point
  const make = new Function("fn", "sink", source) as Make;
  return make(fn, do_not_optimize);
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
    const x = r.ns / first.ns;
    const ratio = r === first ? "—" : x >= 1 ? `${x.toFixed(2)}× faster` : `${(1 / x).toFixed(2)}× slower`;
    const perSecond = Math.round(1e9 / r.ns).toLocaleString("en");
    console.log(`  ${pad(r.name, 46)} ${pad(r.ns.toFixed(1), 10)} ${pad(perSecond, 14)} ${ratio}`);
  }
  return results;
}
