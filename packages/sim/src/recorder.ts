import { TraceHash } from "./hash";
import { Histogram, binOf } from "./histogram";
import { BUCKET_BYTES, KEY_BYTES, REASON_BYTES, formatCount, own } from "./memory";
import { byName } from "./by-name";
import type { Budget } from "./memory";
import { PriorityRecord } from "./priority";
import type { KeyTotals, LatencySummary, Series, Summary } from "./result";

/** The levels the recorder averages over time. */
export const IN_FLIGHT = 0;
export const BUSY = 1;
export const QUEUE = 2;
const GAUGES = 3;

/** What an attempt is. */
export const FIRST = 0;
export const RETRY = 1;
export const HEDGE = 2;

// Trace codes folded into the hash.
const H_ADMIT = 1;
const H_SUCCESS = 2;
const H_FAIL = 3;
const H_TIMEOUT = 4;
const H_GAVE_UP = 6;
const H_REFUSE = 16;

const QS = [0.5, 0.95, 0.99] as const;

/**
 * The most distinct refusal reasons a run keeps apart; refusals for any reason past them are
 * counted together under {@link OTHER_REASONS}. A reason costs a counter per bucket, so a policy
 * that puts (say) a key or a timestamp in its reason would otherwise grow the result without end.
 */
export const MAX_REASONS = 256;
/** The reason refusals are counted under once a run has seen {@link MAX_REASONS} distinct ones. */
export const OTHER_REASONS = "(other reasons)";

/**
 * The most series buckets a run may have, whatever its ceiling: the result's series are plain
 * arrays, and V8 holds at most about 134 million elements in one (a latency series grown past
 * that, bucket by bucket, ended the process; a count series' copy threw a raw RangeError).
 */
export const MAX_BUCKETS = 2 ** 26;

/**
 * Counts what a run does into buckets of `step` ms and totals, and folds every decision into
 * the trace hash. Counting is a typed-array increment; a bucket is closed (its latency
 * quantiles read, its levels averaged) when time first passes its end. Events after the series
 * ends (the drain) count in the totals only.
 */
export class Recorder {
  readonly start: number;
  readonly step: number;
  readonly buckets: number;
  readonly hash = new TraceHash();
  readonly #reasons: string[] = [];
  // Reason to index: a refusal's reason is looked up on every change of it, so no scan.
  readonly #reasonIndex = new Map<string, number>();
  readonly #refusedBy: Float64Array[] = [];
  readonly #refusedTotal: number[] = [];

  // One slot past the last bucket takes whatever happens after the series ends.
  readonly offered: Float64Array;
  readonly attempts: Float64Array;
  readonly retries: Float64Array;
  readonly hedges: Float64Array;
  readonly admitted: Float64Array;
  readonly refused: Float64Array;
  readonly succeeded: Float64Array;
  readonly failed: Float64Array;
  readonly timedOut: Float64Array;
  readonly completed: Float64Array;
  readonly gaveUp: Float64Array;
  readonly backendLoad: Float64Array;
  readonly goodput: Float64Array;
  readonly wasted: Float64Array;
  readonly dropped: Float64Array;
  readonly #means: Float64Array[];
  readonly #lat: (number | null)[][] = [[], [], [], []];
  readonly #cpu: Float64Array;
  readonly #bucketLatency = new Histogram();
  readonly latency = new Histogram();

  // Totals, the drain included.
  readonly totals = new Float64Array(15);
  // When the last call ended (ms), or -Infinity before any did.
  #lastDone = -Infinity;
  readonly #budget: Budget;

  readonly #keyOffered: Float64Array | undefined;
  readonly #keyAdmitted: Float64Array | undefined;
  readonly #keyRefused: Float64Array | undefined;
  // Each priority's counts, when the traffic has priorities.
  readonly #byPriority: PriorityRecord | undefined;

  readonly #value = new Float64Array(GAUGES);
  readonly #since = new Float64Array(GAUGES);
  readonly #area = new Float64Array(GAUGES);
  readonly #cpuAt: (now: number) => number;

  /** The bucket being counted into, and when it ends (ms). */
  #b = 0;
  #end: number;

  /** The buckets a run of `duration` ms in steps of `step` ms has. */
  static buckets(duration: number, step: number): number {
    return Math.max(1, Math.ceil(duration / step - 1e-9));
  }

  /**
   * Charges `budget` for the record of a run of `duration` ms in steps of `step` ms with `keys`
   * per-key totals (0 for none), before any of it is made; throws naming the option otherwise.
   */
  static reserve(budget: Budget, duration: number, step: number, keys: number): void {
    const buckets = Recorder.buckets(duration, step);
    const what = `simulate duration (ms) ${duration} in steps of ${step} ms (simulate step) makes ${formatCount(buckets)} series buckets`;
    if (buckets > MAX_BUCKETS)
      throw own(new RangeError(`${what}; a run holds at most ${formatCount(MAX_BUCKETS)}, whatever its maxBytes`));
    budget.reserve((buckets + 1) * BUCKET_BYTES, `${what}, which`);
    if (keys > 0) budget.reserve(keys * KEY_BYTES, `simulate perKey over the traffic's ${formatCount(keys)} keys`);
  }

  constructor(
    start: number,
    duration: number,
    step: number,
    keys: number,
    cpu: (now: number) => number,
    budget: Budget,
    priorities?: { readonly keys: number; readonly priority: (i: number) => unknown },
  ) {
    this.start = start;
    this.step = step;
    this.#budget = budget;
    this.buckets = Recorder.buckets(duration, step);
    const n = this.buckets + 1;
    this.offered = new Float64Array(n);
    this.attempts = new Float64Array(n);
    this.retries = new Float64Array(n);
    this.hedges = new Float64Array(n);
    this.admitted = new Float64Array(n);
    this.refused = new Float64Array(n);
    this.succeeded = new Float64Array(n);
    this.failed = new Float64Array(n);
    this.timedOut = new Float64Array(n);
    this.completed = new Float64Array(n);
    this.gaveUp = new Float64Array(n);
    this.backendLoad = new Float64Array(n);
    this.goodput = new Float64Array(n);
    this.wasted = new Float64Array(n);
    this.dropped = new Float64Array(n);
    this.#means = Array.from({ length: GAUGES }, () => new Float64Array(n));
    this.#cpu = new Float64Array(n);
    this.#end = start + step;
    this.#since.fill(start);
    this.#cpuAt = cpu;
    if (keys > 0) {
      this.#keyOffered = new Float64Array(keys);
      this.#keyAdmitted = new Float64Array(keys);
      this.#keyRefused = new Float64Array(keys);
    }
    if (priorities !== undefined)
      this.#byPriority = new PriorityRecord(priorities.priority, priorities.keys, this.buckets, budget);
  }

  /**
   * The index of refusal reason `reason`, registered on first sight (and charged to the budget);
   * past {@link MAX_REASONS} distinct reasons, the index of {@link OTHER_REASONS}.
   */
  reason(reason: string): number {
    const known = this.#reasonIndex.get(reason);
    if (known !== undefined) return known;
    if (this.#reasons.length >= MAX_REASONS) {
      const other = this.#reasonIndex.get(OTHER_REASONS);
      return other !== undefined ? other : this.#register(OTHER_REASONS);
    }
    return this.#register(reason);
  }

  #register(reason: string): number {
    this.#budget.reserve(
      (this.buckets + 1) * REASON_BYTES,
      `simulate: refusal reason ${JSON.stringify(reason.length > 80 ? `${reason.slice(0, 80)}…` : reason)} (the run's ${formatCount(this.#reasons.length + 1)}th) over ${formatCount(this.buckets)} buckets`,
    );
    const i = this.#reasons.length;
    this.#reasons.push(reason);
    this.#reasonIndex.set(reason, i);
    this.#refusedBy.push(new Float64Array(this.buckets + 1));
    this.#refusedTotal.push(0);
    return i;
  }

  /** The bucket `t` (ms) falls in, closing the ones time has passed. */
  #at(t: number): number {
    if (t >= this.#end) this.#roll(t);
    return this.#b;
  }

  /** The bucket `t` (ms) fell in, at or before bucket `b`: bounds computed as the rolling computes them. */
  #before(b: number, t: number): number {
    while (b > 0 && t < this.start + b * this.step) b--;
    return b;
  }

  #roll(t: number): void {
    while (t >= this.#end && this.#b < this.buckets) this.#close();
    if (this.#b >= this.buckets) this.#end = Infinity;
  }

  #close(): void {
    const b = this.#b;
    const end = this.#end;
    for (let g = 0; g < GAUGES; g++) {
      this.#area[g] += this.#value[g] * (end - this.#since[g]);
      this.#means[g][b] = this.#area[g] / this.step;
      this.#area[g] = 0;
      this.#since[g] = end;
    }
    const h = this.#bucketLatency;
    const out: (number | null)[] = [null, null, null];
    h.quantiles(QS, out);
    this.#lat[0][b] = h.count > 0 ? h.sum / h.count : null;
    this.#lat[1][b] = out[0];
    this.#lat[2][b] = out[1];
    this.#lat[3][b] = out[2];
    h.clear();
    this.#cpu[b] = this.#cpuAt(end);
    this.#b = b + 1;
    this.#end = this.start + (b + 2) * this.step;
  }

  /** Sets level `g` to `v` at `t` (ms). */
  gauge(g: number, v: number, t: number): void {
    const b = this.#at(t);
    if (b < this.buckets) this.#area[g] += this.#value[g] * (t - this.#since[g]);
    this.#since[g] = t;
    this.#value[g] = v;
  }

  /** Sets the backend's busy workers and queue to `busy` and `queued` at `t` (ms): both gauges in one step. */
  backend(busy: number, queued: number, t: number): void {
    const b = this.#at(t);
    const area = this.#area;
    const since = this.#since;
    const value = this.#value;
    if (b < this.buckets) {
      area[BUSY] += value[BUSY] * (t - since[BUSY]);
      area[QUEUE] += value[QUEUE] * (t - since[QUEUE]);
    }
    since[BUSY] = t;
    value[BUSY] = busy;
    since[QUEUE] = t;
    value[QUEUE] = queued;
  }

  offer(t: number, key: number): void {
    const b = this.#at(t);
    this.offered[b]++;
    this.totals[0]++;
    if (this.#keyOffered !== undefined) this.#keyOffered[key]++;
    if (this.#byPriority !== undefined) this.#byPriority.offer(b, key);
  }

  attempt(t: number, kind: number): void {
    const b = this.#at(t);
    this.attempts[b]++;
    this.totals[1]++;
    if (kind === RETRY) {
      this.retries[b]++;
      this.totals[2]++;
    } else if (kind === HEDGE) {
      this.hedges[b]++;
      this.totals[3]++;
    }
  }

  admit(t: number, key: number): void {
    this.admitted[this.#at(t)]++;
    this.totals[4]++;
    if (this.#keyAdmitted !== undefined) this.#keyAdmitted[key]++;
    this.hash.add(t, H_ADMIT, key);
  }

  refuse(t: number, key: number, reason: number): void {
    const b = this.#at(t);
    this.refused[b]++;
    this.#refusedBy[reason][b]++;
    this.#refusedTotal[reason]++;
    this.totals[5]++;
    if (this.#keyRefused !== undefined) this.#keyRefused[key]++;
    if (this.#byPriority !== undefined) this.#byPriority.refuse(b, key);
    this.hash.add(t, H_REFUSE + reason, key);
  }

  /** An attempt reached the backend. */
  arrive(t: number): void {
    this.backendLoad[this.#at(t)]++;
    this.totals[11]++;
  }

  /** The client saw an attempt succeed after `latency` ms. */
  success(t: number, key: number, latency: number): void {
    const b = this.#at(t);
    this.succeeded[b]++;
    this.totals[6]++;
    const bin = binOf(latency);
    if (b < this.buckets) this.#bucketLatency.addTo(bin, latency);
    this.latency.addTo(bin, latency);
    this.hash.add(t, H_SUCCESS, key);
  }

  /** The client saw an attempt fail (`timedOut`: it stopped waiting). */
  failure(t: number, key: number, timedOut: boolean): void {
    const b = this.#at(t);
    this.failed[b]++;
    this.totals[7]++;
    if (timedOut) {
      this.timedOut[b]++;
      this.totals[8]++;
    }
    this.hash.add(t, timedOut ? H_TIMEOUT : H_FAIL, key);
  }

  /** A call that arrived at `arrival` ended at `t`, in a success or not; `inTime`: within its caller's deadline. */
  done(t: number, key: number, ok: boolean, inTime: boolean, arrival = t): void {
    const b = this.#at(t);
    this.#lastDone = t;
    if (ok) {
      this.completed[b]++;
      this.totals[9]++;
      if (inTime) {
        this.goodput[b]++;
        this.totals[12]++;
      }
      // Per priority, in the bucket the call arrived in: a share of the same calls.
      if (this.#byPriority !== undefined) this.#byPriority.done(this.#before(b, arrival), key, inTime);
    } else {
      this.gaveUp[b]++;
      this.totals[10]++;
      // Giving up is folded in; a success already was, as the attempt's.
      this.hash.add(t, H_GAVE_UP, key);
    }
  }

  /** The backend finished serving an attempt whose caller had stopped waiting for it. */
  waste(t: number): void {
    this.wasted[this.#at(t)]++;
    this.totals[13]++;
  }

  /** The backend dropped an attempt unserved, its caller having stopped waiting. */
  drop(t: number): void {
    this.dropped[this.#at(t)]++;
    this.totals[14]++;
  }

  /** Closes every bucket left (the series' end is `start + buckets · step`). */
  finish(): void {
    this.#roll(this.start + this.buckets * this.step);
  }

  series(): Series {
    const n = this.buckets;
    const list = (a: Float64Array): number[] => Array.from(a.subarray(0, n));
    const refusedBy = byName<number[]>();
    this.#reasons.forEach((r, i) => (refusedBy[r] = list(this.#refusedBy[i])));
    const lat = (i: number): (number | null)[] => Array.from({ length: n }, (_, b) => this.#lat[i][b] ?? null);
    return {
      t: Array.from({ length: n }, (_, b) => b * this.step),
      offered: list(this.offered),
      attempts: list(this.attempts),
      retries: list(this.retries),
      hedges: list(this.hedges),
      admitted: list(this.admitted),
      refused: list(this.refused),
      refusedBy,
      succeeded: list(this.succeeded),
      failed: list(this.failed),
      timedOut: list(this.timedOut),
      completed: list(this.completed),
      gaveUp: list(this.gaveUp),
      goodput: list(this.goodput),
      inFlight: list(this.#means[IN_FLIGHT]),
      latencyMean: lat(0),
      p50: lat(1),
      p95: lat(2),
      p99: lat(3),
      backendLoad: list(this.backendLoad),
      backendBusy: list(this.#means[BUSY]),
      backendQueue: list(this.#means[QUEUE]),
      backendCpu: list(this.#cpu),
      wasted: list(this.wasted),
      dropped: list(this.dropped),
      amplification: Array.from({ length: n }, (_, b) =>
        this.offered[b] > 0 ? this.backendLoad[b] / this.offered[b] : null,
      ),
      ...(this.#byPriority === undefined ? {} : { byPriority: this.#byPriority.series() }),
    };
  }

  summary(events: number, unfinished: number): Summary {
    const s = this.totals;
    const refusedBy = byName<number>();
    this.#reasons.forEach((r, i) => (refusedBy[r] = this.#refusedTotal[i]));
    let peak = 0;
    for (let b = 0; b < this.buckets; b++) if (this.backendLoad[b] > peak) peak = this.backendLoad[b];
    const h = this.latency;
    const q: (number | null)[] = [null, null, null];
    h.quantiles(QS, q);
    const latency: LatencySummary = {
      mean: h.count > 0 ? h.sum / h.count : null,
      p50: q[0],
      p95: q[1],
      p99: q[2],
      max: h.count > 0 ? h.max : null,
    };
    return {
      calls: s[0],
      attempts: s[1],
      retries: s[2],
      hedges: s[3],
      admitted: s[4],
      refused: s[5],
      refusedBy,
      succeeded: s[6],
      failed: s[7],
      timedOut: s[8],
      completed: s[9],
      gaveUp: s[10],
      goodput: s[12],
      unfinished,
      successRate: s[0] > 0 ? s[9] / s[0] : null,
      goodputRate: s[0] > 0 ? s[12] / s[0] : null,
      refusalRate: s[1] > 0 ? s[5] / s[1] : null,
      backendLoad: s[11],
      peakBackendLoad: (peak * 1_000) / this.step,
      amplification: s[0] > 0 ? s[11] / s[0] : null,
      wasted: s[13],
      dropped: s[14],
      completionTime: unfinished === 0 && this.#lastDone > -Infinity ? this.#lastDone - this.start : null,
      latency,
      events,
      hash: this.hash.digest(),
      ...(this.#byPriority === undefined ? {} : { byPriority: this.#byPriority.summary() }),
    };
  }

  keys(name: (i: number) => string): KeyTotals | undefined {
    if (this.#keyOffered === undefined || this.#keyAdmitted === undefined || this.#keyRefused === undefined)
      return undefined;
    const n = this.#keyOffered.length;
    return {
      names: Array.from({ length: n }, (_, i) => name(i)),
      offered: Array.from(this.#keyOffered),
      admitted: Array.from(this.#keyAdmitted),
      refused: Array.from(this.#keyRefused),
    };
  }
}
