// The plain-JavaScript breakers the breaker benchmark measures against: the same formula over a
// ring of buckets, written the direct way.

/** The formula of the issue, over counts the caller has summed. */
export function drop(total: number, accepts: number, failing: number, size: number): number {
  const w = Math.max(1.5 - ((1.5 - 1.1) * failing) / size, 1.1);
  return (total - 5 - w * accepts) / (total + 1);
}

/** What both rings hold: per-bucket counts of calls, successes and failures, flat. */
class Ring {
  readonly total: Float64Array;
  readonly success: Float64Array;
  readonly failure: Float64Array;
  head = 0;
  last = 0;
  constructor(
    readonly size: number,
    readonly width: number,
  ) {
    this.total = new Float64Array(size);
    this.success = new Float64Array(size);
    this.failure = new Float64Array(size);
  }
}

/** A plain ring of `size` buckets that walks them all on every call, as go-zero does. */
export class WalkedRing extends Ring {
  slot(now: number): number {
    const i = Math.floor(now / this.width);
    if (i > this.head) {
      for (let j = Math.max(this.head + 1, i - this.size + 1); j <= i; j++) {
        const s = j % this.size;
        this.total[s] = this.success[s] = this.failure[s] = 0;
      }
      this.head = i;
    }
    return this.head % this.size;
  }
  allow(now: number, roll: number): boolean {
    const head = this.slot(now);
    let total = 0;
    let accepts = 0;
    let failing = 0;
    let working = 0;
    for (let n = 1; n <= this.size; n++) {
      const s = (head + n) % this.size;
      const ok = this.success[s];
      const bad = this.failure[s];
      total += this.total[s];
      accepts += ok;
      if (ok > 0) failing = 0;
      else if (bad > 0) failing++;
      if (bad > 0) working = 0;
      else if (ok > 0) working++;
    }
    let d = drop(total, accepts, failing, this.size);
    if (d > 0 && now - this.last < 1_000) {
      d *= (this.size - working) / this.size;
      if (roll < d) {
        this.total[head]++;
        return false;
      }
    }
    this.last = now;
    return true;
  }
  pass(now: number): void {
    const s = this.slot(now);
    this.total[s]++;
    this.success[s]++;
  }
}

/**
 * A plain ring with running sums and the runs kept up to date, in flat arrays: what the
 * breaker does, without the permit, the policy, the window abstraction or the guards.
 */
export class SummedRing extends Ring {
  sumTotal = 0;
  sumSuccess = 0;
  withSuccess = 0;
  withFailure = 0;
  failing = 0;
  working = 0;
  slot(now: number): number {
    const i = Math.floor(now / this.width);
    // The move to a new bucket is a method of its own, so that this part is small enough to be
    // inlined into allow and pass (a call out would box `now` on every call).
    if (i > this.head) this.move(i);
    return this.head % this.size;
  }
  move(i: number): void {
    const h = this.head % this.size;
    if (this.success[h] > 0) this.failing = 0;
    else if (this.failure[h] > 0) this.failing++;
    if (this.failure[h] > 0) this.working = 0;
    else if (this.success[h] > 0) this.working++;
    if (i - this.head >= this.size) {
      this.total.fill(0);
      this.success.fill(0);
      this.failure.fill(0);
      this.sumTotal = this.sumSuccess = this.withSuccess = this.withFailure = this.failing = this.working = 0;
    } else {
      for (let j = this.head + 1; j <= i; j++) {
        const s = j % this.size;
        const ok = this.success[s];
        const bad = this.failure[s];
        this.sumTotal -= this.total[s];
        this.sumSuccess -= ok;
        if (ok > 0) this.withSuccess--;
        if (bad > 0) this.withFailure--;
        if (bad === 0) {
          if (ok > 0 && this.withFailure === 0) this.working--;
        } else if (ok === 0 && this.withSuccess === 0) this.failing--;
        this.total[s] = this.success[s] = this.failure[s] = 0;
      }
    }
    this.head = i;
  }
  allow(now: number, roll: number): boolean {
    const h = this.slot(now);
    const ok = this.success[h];
    const bad = this.failure[h];
    const failing = ok > 0 ? 0 : bad > 0 ? this.failing + 1 : this.failing;
    let d = drop(this.sumTotal, this.sumSuccess, failing, this.size);
    if (d > 0 && now - this.last < 1_000) {
      const working = bad > 0 ? 0 : ok > 0 ? this.working + 1 : this.working;
      d *= (this.size - working) / this.size;
      if (roll < d) {
        this.total[h]++;
        this.sumTotal++;
        return false;
      }
    }
    this.last = now;
    return true;
  }
  pass(now: number): void {
    const s = this.slot(now);
    this.total[s]++;
    if (this.success[s]++ === 0) this.withSuccess++;
    this.sumTotal++;
    this.sumSuccess++;
  }
}
