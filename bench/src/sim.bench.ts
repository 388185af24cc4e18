// @tideward/sim: events and calls a second through the real policies, and the simulator's own
// cost against the policies' (a bare loop that makes the same draws and calls the same policies
// directly, with no event queue, recorder or client).
//
// How it is measured:
// - Traffic is Poisson at 1 000 calls a second into a backend of exponential 20 ms latency: two
//   events a call (its arrival and its answer). A call is one first attempt; nothing retries.
// - Contenders take turns in a rotating order, two simulated minutes (about 120 000 calls) each
//   per round, for 15 rounds after a warm-up; each reports its median ns per call, and the median
//   over rounds of its time divided by the first contender's time in the same round (the machine
//   is shared, and a ratio taken within one round sees the same load on both sides).
// - The backends of load and contention get a round of their own: the capacity model tipped into
//   overload by a dip and dropping abandoned work, behind a network and a client with a timeout,
//   retries and a deadline (about five events a call: arrival, reach, service, answer, timeout);
//   and one optimistically-locked resource under a stream of writers retrying until their
//   deadline. Each against the plain backend in the same round, and in events a second, the
//   figure the sim's speed target (at least 2 million a second) is stated in.
// - Then a whole hour of each, once (after the rounds, so warm), for the "an hour of 1 000 calls a
//   second in under two seconds" claim: wall time, events a second, calls a second.
// - Beside wall time, each figure's CPU time (process.cpuUsage: this process's threads, the
//   garbage collector's included): on a machine shared with other builds, wall time counts the
//   waiting for a core too, and CPU time is what the code itself costs.
import { Breaker } from "@tideward/breaker";
import { Bucket } from "@tideward/limiters";
import { QuotaEngine, QuotaKey, perSecond } from "@tideward/quota-engine";
import { Jitter } from "@tideward/backoff";
import { backends, keys, latency, policy, simulate, traffic } from "@tideward/sim";
import type { PolicySpec, SimulationOptions } from "@tideward/sim";
import { seededRandom } from "@tideward/time";

const RATE = 1_000;
const ROUND = 120_000; // ms of simulated traffic a round
const ROUNDS = 15;
const KEYS = 10_000;
const gc = (globalThis as { gc?: (options?: { type: "major" | "minor" }) => void }).gc;

interface Contender {
  readonly name: string;
  /** Runs `ms` of simulated traffic; returns [calls, events]. */
  readonly run: (ms: number) => readonly [number, number];
}

function sim(
  name: string,
  options: Omit<SimulationOptions, "duration" | "traffic">,
  load: SimulationOptions["traffic"],
): Contender {
  return {
    name,
    run(ms) {
      const r = simulate({ ...options, duration: ms, step: 60_000, traffic: load });
      return [r.summary.calls, r.summary.events];
    },
  };
}

/**
 * The same draws as the simulator makes (a gap and a latency a call; a breaker's roll only while it
 * throttles, as the guard's breaker stage asks for one), and `call` on each, handed the source.
 */
function bare(
  name: string,
  make: () => (now: number, key: number, random: () => number) => void,
  zipfKeys = false,
): Contender {
  const pick = zipfKeys ? keys.zipf({ count: KEYS }).pick : undefined;
  return {
    name,
    run(ms) {
      const call = make();
      const random = seededRandom(1);
      const mean = 1_000 / RATE;
      let t = 0;
      let n = 0;
      let latencies = 0;
      while (t < ms) {
        t -= mean * Math.log(1 - random());
        const key = pick === undefined ? 0 : pick(random);
        // The latency draw the backend makes; the loop settles at once, so it only costs.
        latencies += -20 * Math.log(1 - random());
        call(t, key, random);
        n++;
      }
      if (!(latencies > 0)) throw new Error("no latency drawn");
      return [n, 2 * n];
    },
  };
}

function race(title: string, contenders: readonly Contender[]): void {
  for (const c of contenders) c.run(ROUND); // warm-up
  const times = contenders.map(() => [] as number[]);
  const cpus = contenders.map(() => [] as number[]);
  const ratios = contenders.map(() => [] as number[]);
  const events = contenders.map(() => 0);
  for (let r = 0; r < ROUNDS; r++) {
    const round: number[] = [];
    for (let k = 0; k < contenders.length; k++) {
      const c = (k + r) % contenders.length;
      gc?.({ type: "minor" });
      const start = performance.now();
      const cpu = process.cpuUsage();
      const [calls, ev] = contenders[c].run(ROUND);
      const used = process.cpuUsage(cpu);
      round[c] = ((performance.now() - start) * 1e6) / calls;
      cpus[c].push(((used.user + used.system) * 1e3) / calls);
      events[c] = ev / calls;
    }
    round.forEach((ns, c) => {
      times[c].push(ns);
      ratios[c].push(ns / round[0]);
    });
  }
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1];
  console.log(`\n${title}`);
  console.log(
    `  ${"case".padEnd(86)} ${"ns/call".padEnd(8)} ${"cpu ns".padEnd(7)} ${"calls/s".padEnd(11)} ${"events/s".padEnd(11)} time vs the first`,
  );
  contenders.forEach((c, i) => {
    const t = median(times[i]);
    console.log(
      `  ${c.name.padEnd(86)} ${t.toFixed(0).padEnd(8)} ${median(cpus[i]).toFixed(0).padEnd(7)} ${Math.round(1e9 / t)
        .toLocaleString("en")
        .padEnd(11)} ${Math.round((1e9 / t) * events[i])
        .toLocaleString("en")
        .padEnd(11)} ${i === 0 ? "—" : `${median(ratios[i]).toFixed(2)}×`}`,
    );
  });
}

function hour(title: string, options: Omit<SimulationOptions, "duration">): void {
  gc?.();
  const start = performance.now();
  const cpu = process.cpuUsage();
  const r = simulate({ ...options, duration: 3_600_000 });
  const used = process.cpuUsage(cpu);
  const ms = performance.now() - start;
  const cpuMs = (used.user + used.system) / 1_000;
  console.log(
    `  ${title.padEnd(70)} ${(ms / 1_000).toFixed(2)} s (cpu ${(cpuMs / 1_000).toFixed(2)} s), ${Math.round((r.summary.events * 1_000) / ms).toLocaleString("en")} events/s (cpu ${Math.round((r.summary.events * 1_000) / cpuMs).toLocaleString("en")}), ${Math.round((r.summary.calls * 1_000) / ms).toLocaleString("en")} calls/s`,
  );
}

const backend = { latency: latency.exponential(20) };
const poisson = traffic.poisson({ rate: RATE });
const breakerAndBucket: PolicySpec[] = [policy.breaker(), policy.bucket(2 * RATE)];

race(
  `an hour's traffic in two-minute rounds: Poisson ${RATE}/s, exponential 20 ms backend, breaker (sre) + bucket (${2 * RATE}/s)`,
  [
    sim("@tideward/sim: simulate, breaker + bucket", { backend, policies: breakerAndBucket }, poisson),
    sim("@tideward/sim: simulate, no policy (the simulator's own cost)", { backend }, poisson),
    bare("bare loop: the same draws, Breaker.allow + Bucket.take + Permit.pass called directly", () => {
      const b = new Breaker();
      const bucket = new Bucket(2 * RATE);
      return (now, _key, random) => {
        const p = b.allow(now, random);
        if (p !== undefined && bucket.take(now)) p.pass(now);
      };
    }),
    bare("bare loop: the draws alone (no policy)", () => () => {}),
  ],
);

const zipf = traffic.poisson({ rate: RATE, keys: keys.zipf({ count: KEYS }) });
const quota = [policy.quota({ dimensions: [{ limit: perSecond("api", 100) }] })];
race(
  `the quota engine with ${KEYS.toLocaleString("en")} keys: Poisson ${RATE}/s over Zipf-popular keys, a token bucket of 100/s per key`,
  [
    sim("@tideward/sim: simulate, quota engine (checkTokenBucket per key)", { backend, policies: quota }, zipf),
    sim("@tideward/sim: simulate, no policy (the simulator's own cost)", { backend }, zipf),
    bare(
      "bare loop: the same draws, QuotaEngine.checkTokenBucket called directly",
      () => {
        const engine = new QuotaEngine();
        engine.addLimit(perSecond("api", 100));
        const ids = Array.from({ length: KEYS }, (_, i) => new QuotaKey("sim", `key-${i}`, "api"));
        return (now, key) => void engine.checkTokenBucket(ids[key], "api", now);
      },
      true,
    ),
  ],
);

// The metastable backend: 2 000 calls a second of capacity (40 workers of 20 ms), offered 1 000 a
// second, service twice as slow for ten seconds of every two minutes; abandoned work is dropped.
const loaded: Omit<SimulationOptions, "duration" | "traffic"> = {
  backend: backends.metastable({
    capacity: 2 * RATE,
    workers: 40,
    trigger: { from: 60_000, to: 70_000, latency: 2 },
    abandoned: "drop",
  }),
  network: { request: latency.normal({ mean: 1, sd: 0.2 }), response: latency.normal({ mean: 1, sd: 0.2 }) },
  client: {
    timeout: 200,
    deadline: 1_000,
    retry: { attempts: Infinity, backoff: { base: 20, cap: 200, jitter: Jitter.full }, budget: {} },
  },
  policies: [policy.breaker()],
};
// The contention backend: writers arriving at 1 000 a second on one resource, its read→write
// window half a millisecond, each retrying with full jitter until its deadline.
const contended: Omit<SimulationOptions, "duration" | "traffic"> = {
  backend: backends.contention({ window: latency.normal({ mean: 0.5, sd: 0.1 }) }),
  network: { request: latency.normal({ mean: 1, sd: 0.2 }), response: latency.normal({ mean: 1, sd: 0.2 }) },
  client: { deadline: 5_000, retry: { attempts: Infinity, backoff: { base: 1, cap: 100, jitter: Jitter.full } } },
};
race(`the backends of load and contention: Poisson ${RATE}/s, a network of about 1 ms a leg`, [
  sim(
    "@tideward/sim: simulate, metastable backend (dip, drops, timeout, retries to a deadline, budget, breaker)",
    loaded,
    poisson,
  ),
  sim("@tideward/sim: simulate, contention backend (one resource, retries to a deadline)", contended, poisson),
  sim("@tideward/sim: simulate, the plain backend, no policy (the simulator's own cost)", { backend }, poisson),
]);

console.log("\nwhole hours, once each (3.6 million calls, 7.2 million events)");
hour("@tideward/sim: breaker + bucket", { traffic: poisson, backend, policies: breakerAndBucket });
hour(`@tideward/sim: quota engine, ${KEYS.toLocaleString("en")} Zipf keys`, {
  traffic: zipf,
  backend,
  policies: quota,
});
hour("@tideward/sim: metastable backend, network, client with deadline and budget, breaker", {
  traffic: poisson,
  ...loaded,
});
hour("@tideward/sim: contention backend, network, retries to a deadline", { traffic: poisson, ...contended });
hour("@tideward/sim: breaker + bucket, invariants checked at every step", {
  traffic: poisson,
  backend,
  policies: breakerAndBucket,
  invariants: true,
});
