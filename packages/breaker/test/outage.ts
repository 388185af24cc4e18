// A small outage driver for the client preset's test: Poisson calls to a backend with an
// exponential latency that fails every call for a stretch, each call asking a gate first, and the
// three figures the outage targets are stated in. A classic open / half-open breaker is here too,
// as the baseline those targets are measured against. Self-contained: @tideward/sim sits above
// this package and cannot be imported here.
import { Breaker } from "@tideward/breaker";
import type { Permit, Sre } from "@tideward/breaker";
import { seededRandom } from "@tideward/time";
import type { Random } from "@tideward/time";

/** Something every call asks first: a token to settle when the call ends, or `undefined` for a refusal. */
export interface Gate {
  allow(now: number): unknown;
  settle(token: unknown, now: number, ok: boolean): void;
}

/** A {@link Breaker} as a gate, rolling from `roll`. */
export function adaptive(policy: Partial<Sre>, origin: number, roll: Random): Gate {
  const b = new Breaker(policy, origin);
  return {
    allow: (now) => b.allow(now, roll),
    settle: (permit, now, ok) => {
      if (ok) (permit as Permit).pass(now);
      else (permit as Permit).fail(now);
    },
  };
}

const CLOSED = 1;
const PROBE = 2;

/**
 * The breaker most libraries ship: closed until `threshold` failures in a row, then open for
 * `openFor` ms, then half-open for one probe whose success closes it and whose failure opens it
 * again. Outcomes of calls let through before it opened are ignored while it is not closed.
 */
export function classic(threshold = 5, openFor = 5_000): Gate {
  let state: "closed" | "open" | "half-open" = "closed";
  let failures = 0;
  let until = 0;
  let probing = false;
  const open = (now: number): void => {
    state = "open";
    until = now + openFor;
  };
  return {
    allow(now) {
      if (state === "closed") return CLOSED;
      if (state === "open" && now < until) return undefined;
      state = "half-open";
      if (probing) return undefined;
      probing = true;
      return PROBE;
    },
    settle(token, now, ok) {
      if (token === PROBE) {
        probing = false;
        if (ok) {
          state = "closed";
          failures = 0;
        } else open(now);
      } else if (state === "closed") {
        if (ok) failures = 0;
        else if (++failures >= threshold) open(now);
      }
    },
  };
}

/** The run: calls a second, mean latency (ms), when the outage starts (ms after the origin) and how long calls are offered (ms). */
export const RUN = Object.freeze({ rate: 100, latency: 20, from: 40_000, duration: 180_000 });

/** The outage's figures, as the page computes them from one-second buckets. */
export interface Figures {
  /** Calls in the outage's buckets that reached the backend, over calls offered in them (a share). */
  readonly reached: number;
  /** Seconds from the outage's end to the first bucket where 90 % of the calls offered succeeded. */
  readonly recovery: number;
  /** Calls refused outside the outage's buckets. */
  readonly refusedUp: number;
}

/**
 * Offers Poisson calls for {@link RUN}'s duration from `origin`, every call failing from
 * `RUN.from` to `to` ms after it, each asking `gate` (made with the run's own source of rolls).
 */
export function outage(make: (origin: number, roll: Random) => Gate, seed: number, to: number, origin = 0): Figures {
  const gaps = seededRandom(seed * 3 + 1);
  const service = seededRandom(seed * 3 + 2);
  const gate = make(origin, seededRandom(seed * 3 + 3));
  const seconds = Math.ceil(RUN.duration / 1_000);
  const offered = new Float64Array(seconds + 1);
  const admitted = new Float64Array(seconds + 1);
  const refused = new Float64Array(seconds + 1);
  const completed = new Float64Array(seconds + 1);
  // Calls in flight, kept sorted by when they finish (latest first, so the next is popped off
  // the end): a handful at a time.
  const flight: { at: number; token: unknown; ok: boolean }[] = [];
  const finish = (until: number): void => {
    for (let f = flight.at(-1); f !== undefined && f.at <= until; f = flight.at(-1)) {
      flight.pop();
      gate.settle(f.token, origin + f.at, f.ok);
      if (f.ok) completed[Math.min(Math.floor(f.at / 1_000), seconds)]++;
    }
  };
  const mean = 1_000 / RUN.rate;
  for (let t = -mean * Math.log(1 - gaps()); t < RUN.duration; t -= mean * Math.log(1 - gaps())) {
    finish(t);
    const second = Math.floor(t / 1_000);
    offered[second]++;
    const token = gate.allow(origin + t);
    if (token === undefined) {
      refused[second]++;
      continue;
    }
    admitted[second]++;
    const at = t - RUN.latency * Math.log(1 - service());
    const call = { at, token, ok: !(t >= RUN.from && t < to) };
    let i = flight.length;
    while (i > 0 && flight[i - 1].at < at) i--;
    flight.splice(i, 0, call);
  }
  finish(Infinity);
  const first = Math.floor(RUN.from / 1_000);
  const last = Math.ceil(to / 1_000);
  let inOffered = 0;
  let inAdmitted = 0;
  let inRefused = 0;
  let allRefused = 0;
  for (let s = 0; s <= seconds; s++) {
    allRefused += refused[s];
    if (s >= first && s < last) {
      inOffered += offered[s];
      inAdmitted += admitted[s];
      inRefused += refused[s];
    }
  }
  let recovery = (RUN.duration - to) / 1_000;
  for (let s = last; s < seconds; s++) {
    if (offered[s] > 0 && completed[s] >= 0.9 * offered[s]) {
      recovery = s - to / 1_000;
      break;
    }
  }
  return { reached: inAdmitted / inOffered, recovery, refusedUp: allRefused - inRefused };
}
