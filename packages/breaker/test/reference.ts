// The breaker as the issue states it, written the slow and obvious way: every decision walks the
// whole window. The property tests check the real Breaker against this one call for call.
import { Tally, Window } from "@tideward/window";
import { sre } from "@tideward/breaker";
import type { Sre } from "@tideward/breaker";

export interface Reading {
  total: number;
  accepts: number;
  failing: number;
  working: number;
}

/** Walks the window at `now`, oldest to newest, the current bucket included. */
export function read(win: Window<Tally>, now: number): Reading {
  const r: Reading = { total: 0, accepts: 0, failing: 0, working: 0 };
  win.each(now, (b) => {
    r.total += b.total;
    r.accepts += b.success;
    // Any success resets failing, only failures extend it; any failure resets working, only
    // successes extend it; an empty or drop-only bucket leaves both alone.
    if (b.success > 0) r.failing = 0;
    else if (b.failure > 0) r.failing += 1;
    if (b.failure > 0) r.working = 0;
    else if (b.success > 0) r.working += 1;
  });
  return r;
}

/** The drop fraction before the working scale: `(total − protection − w·accepts) / (total + 1)`. */
export function rawDrop(p: Sre, r: Reading): number {
  const w = Math.max(p.k - ((p.k - p.floor) * r.failing) / p.size, p.floor);
  return (r.total - p.protection - w * r.accepts) / (r.total + 1);
}

/** A probe let through while half-open under a bound on probes in flight. */
export interface Probe {
  readonly at: number;
  out: boolean;
}

export class NaiveBreaker {
  readonly p: Sre;
  readonly win: Window<Tally>;
  latest: number;
  last: number;
  /** Half-open at all, and the trial's terms: passes to close, failures it survives, probes out at once. */
  readonly halfOpen: boolean;
  readonly need: number;
  readonly spare: number;
  readonly inFlight: number;
  readonly hold: number;
  passes = 0;
  fails = 0;
  /** Every probe let through under the bound, and the one the latest allow let through (if any). */
  readonly probes: Probe[] = [];
  probed: Probe | undefined;

  constructor(policy: Partial<Sre> = {}, now = 0) {
    this.p = { ...sre, ...policy };
    this.win = new Window(() => new Tally(), { size: this.p.size, window: this.p.window, now });
    this.latest = this.last = now;
    const h = this.p.halfOpen;
    this.halfOpen = h !== undefined && h !== false;
    const probes = typeof h === "object" ? (h.probes ?? 1) : 1;
    const share = typeof h === "object" ? (h.share ?? 1) : 1;
    // The least count of passes whose share of the probes reaches `share`, counted up from 1.
    let need = 1;
    while (need < probes && need / probes < share) need++;
    this.need = need;
    this.spare = probes - need;
    this.inFlight = typeof h === "object" ? (h.inFlight ?? Infinity) : Infinity;
    this.hold = typeof h === "object" ? (h.hold ?? this.p.window) : this.p.window;
  }

  #see(now: number): void {
    if (now > this.latest && now < Infinity) this.latest = now;
  }

  /** true: let through; false: refused. */
  allow(now: number, roll: number): boolean {
    this.#see(now);
    this.probed = undefined;
    const r = read(this.win, this.latest);
    let drop = rawDrop(this.p, r);
    if (drop > 0) {
      const probeDue = this.latest - this.last >= this.p.probe;
      if (probeDue && this.halfOpen && r.accepts === 0 && this.inFlight < Infinity) {
        // Half-open under a bound: the probe goes only while fewer than that many are out, a
        // probe being out until it settles or for `hold` ms.
        const out = this.probes.filter((q) => q.out && this.latest - q.at < this.hold).length;
        if (out >= this.inFlight) {
          this.win.slot(this.latest).add("drop");
          return false;
        }
        this.probed = { at: this.latest, out: true };
        this.probes.push(this.probed);
      }
      if (!probeDue && this.halfOpen && r.accepts === 0) {
        // Half-open: throttling with no success in the window, nothing but the probe goes through.
        this.win.slot(this.latest).add("drop");
        return false;
      }
      if (!probeDue) {
        drop *= (this.p.size - r.working) / this.p.size;
        const x = Number.isNaN(roll) || roll < 0 ? 0 : roll;
        if (x < drop) {
          this.win.slot(this.latest).add("drop");
          return false;
        }
      }
    }
    this.last = this.latest;
    return true;
  }

  settle(now: number, ok: boolean): void {
    this.#see(now);
    const head = this.win.slot(this.latest);
    const r = read(this.win, this.latest);
    if (ok && this.halfOpen && r.accepts === 0 && r.total > 0) {
      // A success into a window that holds calls and no success is a pass of the trial: kept
      // out of the window until the trial has enough, which clears the window first.
      if (++this.passes < this.need) return;
      this.win.clear();
      this.passes = this.fails = 0;
    } else if (ok) this.passes = this.fails = 0;
    // A failure fails the trial past its spare, and ends it when the window has forgotten all.
    else if (this.passes > 0 && (r.total === 0 || ++this.fails > this.spare)) this.passes = this.fails = 0;
    head.add(ok ? "success" : "failure");
  }

  ratio(now: number): number {
    const at = now > this.latest && now < Infinity ? now : this.latest;
    const r = read(this.win, at);
    const drop = rawDrop(this.p, r);
    if (!(drop > 0)) return 0;
    if (this.halfOpen && r.accepts === 0) return 1;
    return drop * ((this.p.size - r.working) / this.p.size);
  }
}
