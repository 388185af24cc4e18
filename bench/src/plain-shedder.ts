// The plain-JavaScript shedder the shedder benchmark measures against: a counter of calls in
// flight and a ring of per-bucket pass counts and response times, handing back a ticket.

export const SIZE = 50;
export const WIDTH = 100;

export class PlainTicket {
  constructor(
    readonly owner: Plain,
    readonly start: number,
  ) {}
  pass(now: number): void {
    this.owner.land(this.start, now);
  }
}

/** Counter + ring: the baseline. Refuses over a capacity read from the ring when hot; no average, no cooling. */
export class Plain {
  flying = 0;
  head = 0;
  readonly counts = new Float64Array(SIZE);
  readonly sums = new Float64Array(SIZE);
  allow(now: number, cpu: number): PlainTicket | undefined {
    if (cpu >= 900 && this.flying > this.limit()) return undefined;
    this.flying++;
    return new PlainTicket(this, now);
  }
  limit(): number {
    let busiest = 0;
    let fastest = Infinity;
    for (let i = 0; i < SIZE; i++) {
      const n = this.counts[i];
      if (n === 0) continue;
      if (n > busiest) busiest = n;
      const mean = this.sums[i] / n;
      if (mean < fastest) fastest = mean;
    }
    return Math.max(1, (busiest / WIDTH) * (fastest === Infinity ? 1_000 : fastest));
  }
  land(start: number, now: number): void {
    this.flying--;
    const index = Math.floor(now / WIDTH);
    if (index > this.head) {
      const sweep = Math.min(index - this.head, SIZE);
      for (let i = index - sweep + 1; i <= index; i++) {
        this.counts[i % SIZE] = 0;
        this.sums[i % SIZE] = 0;
      }
      this.head = index;
    }
    const slot = index % SIZE;
    this.counts[slot]++;
    this.sums[slot] += now - start;
  }
}
