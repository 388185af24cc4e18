// Plain models of the three algorithms, written line for line from their formulas as Netflix's
// concurrency-limits states them (AIMDLimit, VegasLimit, Gradient2Limit), with the package's
// documented departures: Vegas's probe jitter comes from a seed, a round trip that is not above
// 0 is no sample for Vegas and Gradient2, and Gradient2's warm-up mean is a running mean. The
// property tests compare the package against these, sample by sample.

export interface Sample {
  readonly rtt: number;
  readonly inflight: number;
  readonly dropped: boolean;
}

export interface Model {
  readonly limit: number;
  sample(s: Sample): void;
}

export function aimdModel(p: { initial: number; min: number; max: number; backoff: number; timeout: number }): Model {
  let limit = p.initial;
  return {
    get limit() {
      return limit;
    },
    sample({ rtt, inflight, dropped }) {
      let next = limit;
      const known = rtt >= 0;
      if (dropped || (known && rtt > p.timeout)) next = Math.trunc(limit * p.backoff);
      else if (known && inflight * 2 >= limit) next = limit + 1;
      limit = Math.min(p.max, Math.max(p.min, next));
    },
  };
}

const log10 = (n: number): number => Math.max(1, Math.trunc(Math.log10(Math.trunc(n)) + 1e-12));

export function vegasModel(p: {
  initial: number;
  min: number;
  max: number;
  smoothing: number;
  alpha: number;
  beta: number;
  threshold: number;
  probe: number;
  seed: number;
}): Model {
  let estimate = p.initial;
  let noLoad = 0;
  let count = 0;
  let probes = 0;
  const jitterOf = (k: number) => {
    const x = p.seed + k * ((Math.sqrt(5) - 1) / 2);
    return 0.5 + 0.5 * (x - Math.floor(x));
  };
  let jitter = jitterOf(0);
  const update = (rtt: number, inflight: number, dropped: boolean) => {
    let next: number;
    const s = log10(estimate);
    if (dropped) next = estimate - s;
    else if (inflight * 2 < estimate) return;
    else {
      const queue = Math.ceil(estimate * (1 - noLoad / rtt));
      if (queue <= p.threshold * s) next = estimate + p.beta * s;
      else if (queue < p.alpha * s) next = estimate + s;
      else if (queue > p.beta * s) next = estimate - s;
      else return;
    }
    next = Math.max(p.min, Math.min(p.max, next));
    estimate = Math.max(p.min, Math.min(p.max, (1 - p.smoothing) * estimate + p.smoothing * next));
  };
  return {
    get limit() {
      return Math.floor(estimate);
    },
    sample({ rtt, inflight, dropped }) {
      if (!(rtt > 0 && rtt < Infinity)) {
        if (dropped) update(Number.NaN, 0, true);
        return;
      }
      count++;
      if (jitter * p.probe * estimate <= count) {
        probes++;
        jitter = jitterOf(probes);
        count = 0;
        noLoad = rtt;
        return;
      }
      if (noLoad === 0 || rtt < noLoad) {
        noLoad = rtt;
        return;
      }
      update(rtt, inflight, dropped);
    },
  };
}

export function gradient2Model(p: {
  initial: number;
  min: number;
  max: number;
  smoothing: number;
  queue: number;
  long: number;
  tolerance: number;
}): Model {
  let estimate = p.initial;
  let long = 0;
  let count = 0;
  return {
    get limit() {
      return Math.floor(estimate);
    },
    sample({ rtt, inflight }) {
      if (!(rtt > 0 && rtt < Infinity)) return;
      if (count < 10) {
        count++;
        long += (rtt - long) / count;
      } else {
        const factor = 2 / (p.long + 1);
        long = long * (1 - factor) + rtt * factor;
      }
      const longRtt = long;
      if (longRtt / rtt > 2) long = longRtt * 0.95;
      if (inflight < estimate / 2) return;
      const gradient = Math.max(0.5, Math.min(1, (p.tolerance * longRtt) / rtt));
      let next = estimate * gradient + p.queue;
      next = estimate * (1 - p.smoothing) + next * p.smoothing;
      estimate = Math.max(p.min, Math.min(p.max, next));
    },
  };
}
