// The shedder on simulated time: a one-core server that needs 4 ms of CPU a call (250 calls/s
// at most) is offered 150 calls/s, then 400 calls/s for six seconds, then 150 again. Without a
// shedder the queue grows by 150 calls every second of overload and takes nine more to drain;
// with one, the excess is refused at the door and the calls let in are served at once.
// Fifteen seconds of traffic, one millisecond a step, in a few milliseconds of real time.
import { Shedder } from "@tideward/shedder";

const SERVICE = 4; // ms of CPU a call needs
const SECONDS = 15;

/** Offered calls per second at second `s`. */
export function offered(s: number): number {
  return s >= 4 && s < 10 ? 400 : 150;
}

/** What one second of the run looked like. */
export interface Second {
  readonly offered: number;
  readonly served: number;
  readonly refused: number;
  /** 99th percentile of the response times (ms) of calls finished in that second. */
  readonly p99: number;
  /** Smoothed CPU at the end of the second, in thousandths. */
  readonly cpu: number;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/**
 * Runs the fifteen seconds (or `length` seconds of `load`, calls a second at each second), with a
 * shedder or without, and sums up each second.
 */
export function simulate(
  shedder: Shedder | undefined,
  load: (s: number) => number = offered,
  length = SECONDS,
): Second[] {
  const queue: { arrived: number; pass?: (now: number) => void }[] = [];
  let serving: { arrived: number; pass?: (now: number) => void; end: number } | undefined;
  let cpu = 0; // smoothed share of the last 250 ms the CPU was busy, in thousandths
  let busy = 0;
  let owed = 0; // fractional arrivals carried to the next millisecond
  const seconds: Second[] = [];
  let second = { offered: 0, served: 0, refused: 0, times: [] as number[] };
  for (let t = 0; t < length * 1_000; t++) {
    if (serving !== undefined && serving.end <= t) {
      serving.pass?.(t);
      second.served++;
      second.times.push(t - serving.arrived);
      serving = undefined;
    }
    const next = serving === undefined ? queue.shift() : undefined;
    if (next !== undefined) serving = { ...next, end: t + SERVICE };
    if (serving !== undefined) busy++;
    // A CPU reading every 250 ms, smoothed as a LoadSampler({ beta: 0.5 }) would.
    if (t % 250 === 249) {
      cpu = cpu * 0.5 + (busy / 250) * 1_000 * 0.5;
      busy = 0;
    }
    owed += load(Math.floor(t / 1_000)) / 1_000;
    for (; owed >= 1; owed--) {
      second.offered++;
      const ticket = shedder?.allow(t, cpu);
      if (shedder !== undefined && ticket === undefined) second.refused++;
      else queue.push({ arrived: t, pass: ticket && ((now) => ticket.pass(now)) });
    }
    if (t % 1_000 === 999) {
      const times = second.times.sort((a, b) => a - b);
      seconds.push({
        offered: second.offered,
        served: second.served,
        refused: second.refused,
        p99: percentile(times, 99),
        cpu: Math.round(cpu),
      });
      second = { offered: 0, served: 0, refused: 0, times: [] };
    }
  }
  return seconds;
}

/** Returns the lines this example prints, so a test can check them. */
export function main(): string[] {
  const without = simulate(undefined);
  const withShedder = simulate(new Shedder({}, 0));
  const lines = ["second  offered │ no shedder: served  p99 ms  cpu‰ │ shedder: served  refused  p99 ms  cpu‰"];
  for (let s = 0; s < SECONDS; s++) {
    const a = without[s];
    const b = withShedder[s];
    lines.push(
      `${String(s).padStart(6)}  ${String(a.offered).padStart(7)} │ ${String(a.served).padStart(18)}  ${String(a.p99).padStart(6)}  ${String(a.cpu).padStart(4)} │ ${String(b.served).padStart(15)}  ${String(b.refused).padStart(7)}  ${String(b.p99).padStart(6)}  ${String(b.cpu).padStart(4)}`,
    );
  }
  return lines;
}
