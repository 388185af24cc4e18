// @tideward/shedder: allow + pass, against a plain-JavaScript baseline doing the least the same
// job needs — a counter of calls in flight and a ring of per-bucket pass counts and response
// times — and handing back a ticket object just the same. Also the bytes each call allocates.
import { Shedder } from "@tideward/shedder";
import type { Ticket } from "@tideward/shedder";
import { allocation, compare, fastest } from "./harness";
import { Plain } from "./plain-shedder";
import type { PlainTicket } from "./plain-shedder";

// Each case's clock lives in a typed array: a module-level `let` holding a fraction would box a
// new number on every step, an allocation of the measuring that every case would pay.
const clock = new Float64Array(8);

// The clock moves 0.01 ms a call, so a bucket turns over every 10,000 calls (100k calls/s).
const shedder = new Shedder();
const plain = new Plain();
// The same at Date.now() magnitudes (a float step of 2^-12 ms), from an origin of 0 as a caller
// who never passes one would have it.
const epoch = new Shedder();
clock[5] = 1_700_000_000_000.1;
const cold = [
  (): Ticket | undefined => {
    const t = shedder.allow((clock[1] += 0.01), 500);
    t?.pass(clock[1] + 0.005);
    return t;
  },
  (): PlainTicket | undefined => {
    const t = plain.allow((clock[2] += 0.01), 500);
    t?.pass(clock[2] + 0.005);
    return t;
  },
] as const;

await compare("allow + pass, one call at a time (cold CPU, 500‰)", [
  { name: "@tideward/shedder Shedder", fn: cold[0] },
  { name: "plain JS counter + ring (+ ticket object)", fn: cold[1] },
  {
    name: "@tideward/shedder on a Date.now() clock",
    fn: (): Ticket | undefined => {
      const t = epoch.allow((clock[5] += 0.01), 500);
      t?.pass(clock[5] + 0.005);
      return t;
    },
  },
]);

// The same, timed as the fastest of many short rounds taken in turn: the steadier figure on a busy machine.
fastest(
  "allow + pass",
  [
    { name: "@tideward/shedder Shedder", fn: cold[0] },
    { name: "plain JS counter + ring (+ ticket object)", fn: cold[1] },
  ],
  { rounds: 40, batch: 200_000 },
);

// Hot CPU with eight calls always in flight: the shedder must scan its 50 buckets each time
// (the count and the average are over the floor), as the baseline does in `limit`.
const hot = new Shedder();
const hotPlain = new Plain();
const queue: Ticket[] = [];
const plainQueue: PlainTicket[] = [];
for (let i = 0; i < 8; i++) {
  queue.push(hot.allow(0, 0) as Ticket);
  plainQueue.push(hotPlain.allow(0, 0) as PlainTicket);
}
await compare("allow + pass on a hot CPU (950‰) with 8 in flight: a window scan per call", [
  {
    name: "@tideward/shedder Shedder",
    fn: () => {
      const t = hot.allow((clock[3] += 0.01), 950);
      if (t !== undefined) queue.push(t);
      queue.shift()?.pass(clock[3]);
      return t;
    },
  },
  {
    name: "plain JS counter + ring, scanning (+ ticket)",
    fn: () => {
      const t = hotPlain.allow((clock[4] += 0.01), 950);
      if (t !== undefined) plainQueue.push(t);
      plainQueue.shift()?.pass(clock[4]);
      return t;
    },
  },
]);

// Bytes allocated per allow + pass, read from V8's own account of what each collection found
// allocated (--trace-gc-nvp), each case in a child process of its own: see allocation.ts.
console.log("\nbytes allocated per allow + pass (a ticket is an object holding a number)");
for (const [name, label] of [
  ["shedder", "@tideward/shedder"],
  ["shedder-plain", "plain JS counter + ring (+ ticket object)"],
] as const) {
  console.log(`  ${label.padEnd(48)} ${allocation(name).toFixed(1)}`);
}
