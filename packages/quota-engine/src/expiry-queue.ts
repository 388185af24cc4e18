// The instants reservations expire at, in the order they come due: a queue of those that arrive in
// order (a service's reservations mostly share one time to live, so most do), and a heap of the
// others. Each entry is a reservation's sequence number and its instant.

/** The queue's first length, and its least after a rebuild. */
const FIRST = 64;

export class ExpiryQueue {
  // A ring of two typed arrays, a power of two long.
  #queueSeq = new Float64Array(0);
  #queueAt = new Float64Array(0);
  #qHead = 0;
  #qLen = 0;
  #heapSeq: number[] = [];
  #heapAt: number[] = [];

  /** Entries waiting. */
  get size(): number {
    return this.#qLen + this.#heapAt.length;
  }

  /** Whether an entry due at or before `t` waits. */
  due(t: number): boolean {
    return (this.#qLen > 0 && this.#queueAt[this.#qHead] <= t) || (this.#heapAt.length > 0 && this.#heapAt[0] <= t);
  }

  /** Queues `seq` to expire at `at`: in the queue if it comes in order, else in the heap. */
  push(seq: number, at: number): void {
    const mask = this.#queueAt.length - 1;
    if (this.#qLen === 0 || this.#queueAt[(this.#qHead + this.#qLen - 1) & mask] <= at) {
      if (this.#qLen === this.#queueAt.length) this.#regrow(Math.max(FIRST, 2 * this.#qLen));
      const tail = (this.#qHead + this.#qLen) & (this.#queueAt.length - 1);
      this.#queueSeq[tail] = seq;
      this.#queueAt[tail] = at;
      this.#qLen++;
      return;
    }
    const hs = this.#heapSeq;
    const ha = this.#heapAt;
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

  /** The earliest entry due at or before `t`, taken out (the queue's first on a tie); -1 when none is due. */
  take(t: number): number {
    const inQueue = this.#qLen > 0;
    const inHeap = this.#heapAt.length > 0;
    if (inQueue && this.#queueAt[this.#qHead] <= t && (!inHeap || this.#queueAt[this.#qHead] <= this.#heapAt[0]))
      return this.#shift();
    if (inHeap && this.#heapAt[0] <= t) return this.#pop();
    return -1;
  }

  /** Drops every entry. */
  clear(): void {
    this.#qHead = 0;
    this.#qLen = 0;
    this.#heapSeq = [];
    this.#heapAt = [];
  }

  /** Every entry anew: `seqs[i]` due at `ats[i]`, already in the order they come due (the heap emptied). */
  fill(seqs: readonly number[], ats: readonly number[]): void {
    let length = FIRST;
    while (length < seqs.length) length *= 2;
    this.#queueSeq = new Float64Array(length);
    this.#queueAt = new Float64Array(length);
    this.#queueSeq.set(seqs);
    this.#queueAt.set(ats);
    this.#qHead = 0;
    this.#qLen = seqs.length;
    this.#heapSeq = [];
    this.#heapAt = [];
  }

  // The queue at `length`, its entries in order from 0.
  #regrow(length: number): void {
    const seqs = new Float64Array(length);
    const ats = new Float64Array(length);
    const mask = this.#queueAt.length - 1;
    for (let i = 0; i < this.#qLen; i++) {
      seqs[i] = this.#queueSeq[(this.#qHead + i) & mask];
      ats[i] = this.#queueAt[(this.#qHead + i) & mask];
    }
    this.#queueSeq = seqs;
    this.#queueAt = ats;
    this.#qHead = 0;
  }

  // The queue's first entry, taken out.
  #shift(): number {
    const seq = this.#queueSeq[this.#qHead];
    this.#qHead = (this.#qHead + 1) & (this.#queueAt.length - 1);
    this.#qLen--;
    return seq;
  }

  // The heap's first entry, taken out.
  #pop(): number {
    const hs = this.#heapSeq;
    const ha = this.#heapAt;
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
}
