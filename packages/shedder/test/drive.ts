// A tiny discrete-event driver for tests: calls arrive at given instants, the shedder decides,
// admitted calls pass after their duration. Settling comes before arriving at the same instant.
import type { Shedder, Ticket } from "@tideward/shedder";

export interface Arrival {
  /** When the call arrives (ms). */
  readonly at: number;
  /** The CPU reading handed to allow (thousandths). */
  readonly cpu: number;
  /** How long the call takes once admitted (ms); Infinity never finishes. */
  readonly takes: number;
}

export interface Outcome {
  admitted: number;
  refused: number;
  /** Arrival instants of the refused calls. */
  refusedAt: number[];
  /** Admitted calls still running, with the instant each finishes. */
  pending: { end: number; ticket: Ticket }[];
}

/** Drives `arrivals` (in time order) through `shedder`, settling every pass due by `until`. */
export function drive(
  shedder: Shedder,
  arrivals: readonly Arrival[],
  until = -Infinity,
  pending: Outcome["pending"] = [],
): Outcome {
  const out: Outcome = { admitted: 0, refused: 0, refusedAt: [], pending };
  for (const a of arrivals) {
    settleBy(pending, a.at);
    const ticket = shedder.allow(a.at, a.cpu);
    if (ticket === undefined) {
      out.refused++;
      out.refusedAt.push(a.at);
    } else {
      out.admitted++;
      insert(pending, { end: a.at + a.takes, ticket });
    }
  }
  settleBy(pending, until);
  return out;
}

/** Passes, in order of finishing, every pending call that finishes by `by`, each at its end. */
export function settleBy(pending: Outcome["pending"], by: number): void {
  let k = 0;
  while (k < pending.length && pending[k].end <= by) {
    const p = pending[k++];
    p.ticket.pass(p.end);
  }
  pending.splice(0, k);
}

// Keeps `pending` sorted by end, later-admitted after earlier at equal ends.
function insert(pending: Outcome["pending"], item: Outcome["pending"][number]): void {
  let lo = 0;
  let hi = pending.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (pending[mid].end <= item.end) lo = mid + 1;
    else hi = mid;
  }
  pending.splice(lo, 0, item);
}

/** Arrivals every `every` ms from `from` (inclusive) to `to` (exclusive). */
export function steady(from: number, to: number, every: number, cpu: number, takes: number): Arrival[] {
  const out: Arrival[] = [];
  for (let at = from; at < to; at += every) out.push({ at, cpu, takes });
  return out;
}

/** `n` arrivals at the same instant. */
export function burst(at: number, n: number, cpu: number, takes = Infinity): Arrival[] {
  return Array.from({ length: n }, () => ({ at, cpu, takes }));
}
