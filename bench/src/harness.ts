// A side-by-side comparison: every case runs in the same process, and the report gives each
// peer's cost as a ratio of tideward's (the first case), so figures from different machines compare.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
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
type MakeLoop = (fn: () => unknown, sink: (v: unknown) => void) => (n: number) => void;

/** A loop of `n` calls to one case's body, compiled for that case alone (see {@link body}). */
function loop(fn: () => unknown): (n: number) => void {
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- a fresh function per case is the point
  const make = new Function(
    "fn",
    "sink",
    "return function loop(n) { for (let i = 0; i < n; i++) sink(fn()); };",
  ) as MakeLoop;
  return make(fn, do_not_optimize);
}

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
  const source = isAsync
    ? "return async function measured() { sink(await fn()); };"
    : "return function measured() { sink(fn()); };";
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

/** Options of {@link fastest}. */
export interface FastestOptions {
  /** How many rounds each case gets. @defaultValue 40 */
  readonly rounds?: number;
  /** Calls per round. @defaultValue 100 000 */
  readonly batch?: number;
}

/**
 * Times each case as the fastest of many short rounds taken in turn (the order alternating, so no
 * case always follows the same neighbour) and prints nanoseconds per call and each case's cost as
 * a ratio of the first's. On a busy machine the quietest round of each is the fairest figure.
 */
export function fastest(title: string, cases: readonly Case[], options: FastestOptions = {}): Result[] {
  const rounds = options.rounds ?? 40;
  const batch = options.batch ?? 100_000;
  const loops = cases.map((c) => loop(c.fn));
  const best = cases.map(() => Infinity);
  const order = cases.map((_, i) => i);
  for (let r = 0; r < rounds; r++) {
    for (const i of r % 2 === 0 ? order : [...order].reverse()) {
      const start = process.hrtime.bigint();
      loops[i](batch);
      const ns = Number(process.hrtime.bigint() - start) / batch;
      if (ns < best[i]) best[i] = ns;
    }
  }
  const results = cases.map((c, i) => ({ name: c.name, ns: best[i], p99: best[i] }));
  console.log(`\n${title} — fastest of ${rounds} rounds of ${batch.toLocaleString("en")} calls, taken in turn`);
  for (const r of results) {
    const ratio = r === results[0] ? "—" : `${(r.ns / results[0].ns).toFixed(2)}× the first`;
    console.log(`  ${pad(r.name, 46)} ${r.ns.toFixed(2).padStart(8)} ns   ${ratio}`);
  }
  return results;
}

/**
 * Bytes allocated per call by one case of `allocation.ts` (or of another program in bench/src
 * written the same way), as V8 itself accounts them: the case runs in a child process with
 * `--trace-gc-nvp`, and the `allocated=` of every young-generation collection after its warm-up
 * are summed and divided by the calls made. Exact to about one byte a call (what sits uncollected
 * at either end of the run is at most one young generation).
 */
export function allocation(name: string, program = "allocation.ts"): number {
  const file = join(import.meta.dirname, program);
  const run = spawnSync(
    process.execPath,
    ["--conditions=@tideward/source", "--import", "tsx", "--trace-gc-nvp", file, name],
    { encoding: "utf8", maxBuffer: 64 << 20 },
  );
  if (run.status !== 0) throw new Error(`allocation ${name} failed: ${run.stderr}`);
  const after = run.stdout.slice(run.stdout.indexOf("MARK"));
  const calls = Number(/CALLS (\d+)/.exec(after)?.[1]);
  let bytes = 0;
  for (const m of after.matchAll(/allocated=(\d+)/g)) bytes += Number(m[1]);
  return bytes / calls;
}

/** The upper median of `xs` (the middle value, or the higher of the two middle ones); NaN when empty. */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
}
