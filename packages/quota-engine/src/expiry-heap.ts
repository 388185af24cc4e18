// The instants the reservations made out of order expire at (those that expire before one made
// earlier; most share a time to live and are walked in the order made instead), as a binary heap
// of each one's sequence number and instant, the earliest first.

export class ExpiryHeap {
  #seqs: number[] = [];
  #ats: number[] = [];

  /** Entries waiting. */
  get size(): number {
    return this.#ats.length;
  }

  /** The earliest instant waiting (ms); only while one waits (`size` above 0). */
  first(): number {
    return this.#ats[0];
  }

  /** Adds `seq`, due at `at` (ms). */
  push(seq: number, at: number): void {
    const hs = this.#seqs;
    const ha = this.#ats;
    let i = ha.length;
    hs.push(seq);
    ha.push(at);
    while (i > 0) {
      const up = (i - 1) >> 1;
      if (ha[up] <= at) break;
      hs[i] = hs[up];
      ha[i] = ha[up];
      i = up;
    }
    hs[i] = seq;
    ha[i] = at;
  }

  /** The earliest entry's sequence number, taken out; -1 when none waits. */
  pop(): number {
    const hs = this.#seqs;
    const ha = this.#ats;
    if (ha.length === 0) return -1;
    const top = hs[0];
    const lastSeq = hs.pop() as number;
    const lastAt = ha.pop() as number;
    const n = ha.length;
    if (n > 0) {
      let i = 0;
      for (;;) {
        let child = 2 * i + 1;
        if (child >= n) break;
        if (child + 1 < n && ha[child + 1] < ha[child]) child++;
        if (ha[child] >= lastAt) break;
        hs[i] = hs[child];
        ha[i] = ha[child];
        i = child;
      }
      hs[i] = lastSeq;
      ha[i] = lastAt;
    }
    return top;
  }

  /** Every entry anew: `seqs[i]` due at `ats[i]`, already in the order they come due (a sorted array is a heap). */
  fill(seqs: number[], ats: number[]): void {
    this.#seqs = seqs;
    this.#ats = ats;
  }

  /** Drops every entry. */
  clear(): void {
    this.#seqs = [];
    this.#ats = [];
  }
}
