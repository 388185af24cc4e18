// @tideward/shedder: allow + pass, against a plain-JavaScript baseline doing the least the same
// job needs — a counter of calls in flight and a ring of per-bucket pass counts and response
// times — and handing back a ticket object just the same. Also the bytes each call allocates.
import { Shedder } from "@tideward/shedder";
import type { Ticket } from "@tideward/shedder";
import { compare, fastest } from "./harness";

const SIZE = 50;
const WIDTH = 100;

class PlainTicket {
  constructor(
    readonly owner: Plain,
    readonly start: number,
  ) {}
  pass(now: number): void {
    this.owner.land(this.start, now);
  }
}

/** Counter + ring: the baseline. Refuses over a capacity read from the ring when hot; no average, no cooling. */
class Plain {
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

// The clock moves 0.01 ms a call, so a bucket turns over every 10,000 calls (100k calls/s).
const shedder = new Shedder();
const plain = new Plain();
let t1 = 0;
let t2 = 0;
const cold = [
  (): Ticket | undefined => {
    const t = shedder.allow((t1 += 0.01), 500);
    t?.pass(t1 + 0.005);
    return t;
  },
  (): PlainTicket | undefined => {
    const t = plain.allow((t2 += 0.01), 500);
    t?.pass(t2 + 0.005);
    return t;
  },
] as const;

await compare("allow + pass, one call at a time (cold CPU, 500‰)", [
  { name: "@tideward/shedder Shedder", fn: cold[0] },
  { name: "plain JS counter + ring (+ ticket object)", fn: cold[1] },
]);

// The same, timed as the fastest of many short rounds taken in turn: the steadier figure on a busy machine.
fastest("allow + pass", [
  { name: "@tideward/shedder Shedder", fn: cold[0] },
  { name: "plain JS counter + ring (+ ticket object)", fn: cold[1] },
], { rounds: 40, batch: 200_000 });

// Hot CPU with eight calls always in flight: the shedder must scan its 50 buckets each time
// (the count and the average are over the floor), as the baseline does in `limit`.
const hot = new Shedder();
const hotPlain = new Plain();
const queue: Ticket[] = [];
const plainQueue: PlainTicket[] = [];
let t3 = 0;
let t4 = 0;
for (let i = 0; i < 8; i++) {
  queue.push(hot.allow(0, 0) as Ticket);
  plainQueue.push(hotPlain.allow(0, 0) as PlainTicket);
}
await compare("allow + pass on a hot CPU (950‰) with 8 in flight: a window scan per call", [
  {
    name: "@tideward/shedder Shedder",
    fn: () => {
      const t = hot.allow((t3 += 0.01), 950);
      if (t !== undefined) queue.push(t);
      queue.shift()?.pass(t3);
      return t;
    },
  },
  {
    name: "plain JS counter + ring, scanning (+ ticket)",
    fn: () => {
      const t = hotPlain.allow((t4 += 0.01), 950);
      if (t !== undefined) plainQueue.push(t);
      plainQueue.shift()?.pass(t4);
      return t;
    },
  },
]);

// Bytes allocated by allow and by pass, each on its own: heap growth over calls too few to
// trigger a collection, with the clock readings made beforehand so that they are not counted.
const gc = (globalThis as { gc?: () => void }).gc;
if (gc !== undefined) {
  const n = 50_000;
  const times = Float64Array.from({ length: 3 * n }, (_, i) => i * 0.01);
  const kept: unknown[] = [undefined];
  const bytes = (f: (i: number) => unknown): number => {
    for (let i = 0; i < n; i++) kept[0] = f(i);
    gc();
    const before = process.memoryUsage().heapUsed;
    for (let i = n; i < 2 * n; i++) kept[0] = f(i);
    return (process.memoryUsage().heapUsed - before) / n;
  };
  const s = new Shedder();
  const p = new Plain();
  const tickets: (Ticket | undefined)[] = [];
  const plainTickets: (PlainTicket | undefined)[] = [];
  const allowS = bytes((i) => (tickets[i] = s.allow(times[i], 500)));
  const allowP = bytes((i) => (plainTickets[i] = p.allow(times[i], 500)));
  const passS = bytes((i) => tickets[i]?.pass(times[i] + 0.005));
  const passP = bytes((i) => plainTickets[i]?.pass(times[i] + 0.005));
  console.log("\nbytes allocated per call (the ticket is an object with a number in it)");
  console.log(`  @tideward/shedder  allow ${allowS.toFixed(1)}  pass ${passS.toFixed(1)}`);
  console.log(`  plain JS baseline  allow ${allowP.toFixed(1)}  pass ${passP.toFixed(1)}`);
}
