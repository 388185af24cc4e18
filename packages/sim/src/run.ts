import type { RetryBudget } from "@tideward/backoff";
import { check } from "@tideward/time/internal";
import type { Random } from "@tideward/time";
import { DROPPED, FULL, duration } from "./backend";
import type { Host, Server } from "./backend";
import { Attempts, CLIENT_DONE, Calls, SERVER_DONE } from "./calls";
import { CLIENT_SIDE, Chain, SERVER_SIDE } from "./chain";
import { QueueServer } from "./capacity";
import { ContentionServer } from "./contention";
import type { Distribution } from "./distribution";
import { EVENT_LIMIT, pastClock, pastRequest } from "./clock-range";
import { Feed } from "./feed";
import { InvariantError } from "./invariant-error";
import { Budget, formatCount } from "./memory";
import { BACKEND, BACKOFF, KEYS, NETWORK, POLICY, RUN, TRAFFIC, passOn } from "./phase";
import { readOptions } from "./options";
import { RetryRule } from "./retry-rule";
import type { RunSpec, SimulationOptions } from "./options";
import type { PolicyContext } from "./policy";
import type { Fire } from "./queue";
import { FIRST, HEDGE, IN_FLIGHT, RETRY, Recorder } from "./recorder";
import type { RunResult } from "./result";
import { Simulator, watchEvents } from "./simulator";
import { Timers } from "./timers";
import { checkTraffic } from "./traffic";
import type { Traffic } from "./traffic";
import { currentWatch } from "./watch";

// How an answer the client hears went.
const OK = 0;
const FAILED = 1;
const REFUSED = 2;

/**
 * One run: traffic → client → client-side policies → network → server-side policies → backend
 * and back, on a simulator's clock, into a recorder. Built from checked options; `result` runs it.
 */
export class Run {
  readonly sim: Simulator;
  readonly #spec: RunSpec;
  readonly #label: string;
  readonly #start: number;
  readonly #end: number;
  readonly #traffic: Traffic;
  readonly #feed: Feed;
  readonly #server: Server;
  readonly #limited: boolean;
  readonly #rec: Recorder;
  readonly #chain: Chain;
  readonly #calls: Calls;
  readonly #attempts: Attempts;

  readonly #timers: Timers;
  readonly #retry: RetryRule;
  readonly #budget: RetryBudget | undefined;
  readonly #request: Distribution | undefined;
  readonly #response: Distribution | undefined;
  readonly #network: Random;

  #inFlight = 0;
  #phase = RUN;
  // The policy being made, before the chain exists.
  #making = 0;

  constructor(options: SimulationOptions) {
    const spec = readOptions(options);
    this.#spec = spec;
    const start = spec.start;
    this.#start = start;
    this.#end = start + spec.duration;
    this.sim = new Simulator({ seed: spec.seed, start });
    this.#request = spec.request;
    this.#response = spec.response;
    this.#retry = new RetryRule(spec, this.sim.random("client"));
    this.#budget = this.#retry.budget;
    this.#network = this.sim.random("network");
    const budget = new Budget(spec.maxBytes, "simulate maxBytes");
    // A timer stays queued until it is due, even after its call or attempt has ended: long
    // timeouts and deadlines at a high rate pile up there, so the queue is charged as it grows.
    watchEvents(this.sim, (bytes, events) =>
      budget.reserve(
        bytes,
        `simulate: ${formatCount(events)} events waiting at once (timeouts, deadlines and hedges wait until they are due, even after their calls end: long ones at a high rate pile up)`,
      ),
    );
    try {
      this.#phase = TRAFFIC;
      const traffic = spec.traffic;
      this.#traffic = traffic;
      const keys = traffic.keys;
      const count = checkTraffic(traffic);
      this.#label =
        spec.label ?? (spec.policies.length === 0 ? "no policy" : spec.policies.map((p) => p.name).join(" + "));
      this.#phase = RUN;

      // What the record needs is known now: checked before any of it is allocated.
      Recorder.reserve(budget, spec.duration, spec.step, spec.perKey ? count : 0);

      const host: Host = {
        serve: (time, slot) => this.sim.at(time, this.#onService, slot),
        wake: (time, edge) => this.sim.at(time, this.#onWake, edge),
        waiting: (slot) => (this.#attempts.flags[slot] & CLIENT_DONE) === 0,
        drop: (slot, now) => this.#drop(slot, now, true),
      };
      this.#phase = BACKEND;
      const random = this.sim.random("backend");
      this.#server =
        spec.backend.window === undefined
          ? new QueueServer(spec.backend, random, start, host)
          : new ContentionServer(spec.backend, random, start, host);
      this.#limited = this.#server.limited;
      const cpu = (now: number): number => this.#server.cpu(now);
      const priority = keys.priority;
      this.#rec = new Recorder(
        start,
        spec.duration,
        spec.step,
        spec.perKey ? count : 0,
        cpu,
        budget,
        priority === undefined ? undefined : { keys: count, priority: (i) => priority.call(keys, i) },
      );

      this.#phase = POLICY;
      const context = (i: number, p: { name: string }): PolicyContext => ({
        start,
        random: this.sim.random(`policy ${i} ${p.name}`),
        keys: count,
        keyName: (k: number) => keys.name(k),
        cpu,
        reserve: (bytes: number, what: string) => budget.reserve(bytes, what),
      });
      // The tables first: the attempts' row is charged with a token for every policy.
      this.#calls = new Calls(budget);
      this.#attempts = new Attempts(budget, 8 * spec.policies.length, (n) => this.#chain.grow(n));
      this.#timers = new Timers(
        spec,
        this.sim,
        this.#calls,
        this.#attempts,
        this.#budget,
        (a, now) => this.#clientDone(a, now, false, true),
        (c, now) => this.#attempt(c, now, HEDGE),
      );
      const adapters = Chain.adapters(spec.policies, context, (i) => (this.#making = i), spec.invariants);
      this.#chain = new Chain(
        adapters,
        spec.invariants,
        this.#rec,
        (i, invariant, detail, now) => this.#violation(i, invariant, detail, now),
        this.#keyName,
        priority === undefined ? undefined : (i) => priority.call(keys, i),
      );

      this.#phase = TRAFFIC;
      // The running scenario's watch, if any, hears of the calls offered.
      const watch = currentWatch();
      this.#feed = new Feed(traffic, { start, end: this.#end, random: this.sim.random("traffic") }, count, watch);
      const first = this.#feed.first;
      if (first < this.#end) this.sim.lane(first, this.#onArrival);
    } catch (e) {
      throw this.#wrap(e, NaN);
    }
  }

  result(): RunResult {
    const sim = this.sim;
    const chain = this.#chain;
    const spec = this.#spec;
    let policies;
    let keys;
    try {
      const each =
        spec.invariants && chain.holders.length > 0
          ? (now: number) => {
              this.#phase = POLICY;
              chain.checkHeld(now, false);
            }
          : undefined;
      this.#drive(this.#end + spec.drain, each);
      this.#feed.finish();
      this.#rec.finish();
      this.#phase = POLICY;
      // Only once nothing is left anywhere: a call can end (its client gave up) while its attempt is still on the server.
      if (spec.invariants && this.#calls.live === 0 && this.#attempts.live === 0) chain.checkHeld(sim.now(), true);
      policies = chain.reports();
      this.#phase = KEYS;
      keys = this.#rec.keys(this.#keyName);
    } catch (e) {
      throw this.#wrap(e, sim.now());
    }
    return {
      label: this.#label,
      seed: sim.seed,
      start: this.#start,
      duration: spec.duration,
      step: this.#rec.step,
      traffic: this.#traffic.label,
      backend: spec.backend.label,
      policies,
      series: this.#rec.series(),
      summary: this.#rec.summary(sim.events, this.#calls.pending),
      ...(keys === undefined ? {} : { keys }),
    };
  }

  /** `e` as the run passes it on (see {@link passOn}), thrown at `time` (ms). */
  #wrap(e: unknown, time: number): unknown {
    const chain = this.#chain as Chain | undefined;
    return passOn(e, {
      phase: this.#phase,
      // Before the chain exists, the policy being made is the one that threw.
      policy: () =>
        chain === undefined ? `policy ${this.#spec.policies[this.#making].name} create` : chain.describe(chain.doing),
      time,
      start: this.#start,
      seed: this.#spec.seed,
    });
  }

  /** Key `i`'s text, as the results and the stages kept per key read it. */
  readonly #keyName = (i: number): string => {
    const name = this.#traffic.keys.name(i);
    if (typeof name !== "string") throw new TypeError(`key ${i}'s name must be text, got ${check.describe(name)}`);
    return name;
  };

  #violation(i: number, invariant: string, detail: string, now: number): never {
    throw new InvariantError(this.#chain.adapters[i].name, invariant, detail, now, now - this.#start, this.sim.seed);
  }

  /**
   * Fires the run's events up to `until` (ms), as `Simulator.run` does. Every event is one of the
   * run's own, so each is told apart by its handler and its work called directly: a call V8 can
   * see the target of, not a call of whichever function the queue holds.
   */
  #drive(until: number, each: ((now: number) => void) | undefined): void {
    const sim = this.sim;
    const reach = this.#onReach;
    const service = this.#onService;
    const heardOk = this.#onHeardOk;
    const heardFailed = this.#onHeardFailed;
    const timers = this.#timers;
    const timeout = timers.onTimeout;
    const deadline = timers.onDeadline;
    const arrival = this.#onArrival;
    const retry = this.#onRetry;
    for (;;) {
      const fire = sim.take(until);
      if (fire === undefined) break;
      const now = sim.now();
      const arg = sim.arg;
      if (fire === reach) this.#reach(now, arg);
      else if (fire === service) this.#service(now, arg);
      else if (fire === heardOk) this.#heard(this.#attempts.of(arg), now, OK);
      else if (fire === heardFailed) this.#heard(this.#attempts.of(arg), now, FAILED);
      else if (fire === timeout) timers.timeoutDue(now, arg);
      else if (fire === deadline) timers.deadlineDue(now, arg);
      else if (fire === arrival) this.#arrival(now);
      else if (fire === retry) this.#retryDue(now, arg);
      else fire(now, arg);
      if (each !== undefined) each(now);
    }
    // Nothing is left before `until`: this fires nothing, and leaves the clock where `run` would.
    sim.run(until);
  }

  // ---- arrivals and calls -------------------------------------------------------------------

  readonly #onArrival: Fire = (now) => this.#arrival(now);

  #arrival(now: number): void {
    this.#phase = TRAFFIC;
    const feed = this.#feed;
    const next = feed.take(now);
    if (next < this.#end) this.sim.lane(next, this.#onArrival);
    const key = feed.key;
    const cost = feed.cost;
    this.#rec.offer(now, key);
    const c = this.#calls.open(key, cost, now);
    this.#timers.call(c, now);
    this.#budget?.recordAttempt(now);
    this.#attempt(c, now, FIRST);
  }

  readonly #onRetry: Fire = (now, ref) => this.#retryDue(now, ref);

  #retryDue(now: number, ref: number): void {
    const c = this.#calls.of(ref);
    if (c >= 0) this.#attempt(c, now, RETRY);
  }

  /** The client has heard how one of call `c`'s attempts (sent at `sent`) went, or stopped waiting for it. */
  #resolve(c: number, now: number, ok: boolean, refused: boolean, sent: number): void {
    const calls = this.#calls;
    const out = --calls.out[c];
    if (calls.done[c] === 1) {
      if (out === 0) calls.close(c);
      return;
    }
    const key = calls.key[c];
    if (ok) {
      calls.end(c);
      this.#rec.done(now, key, true, now <= calls.start[c] + this.#timers.deadline, calls.start[c]);
      if (out === 0) calls.close(c);
      return;
    }
    // A hedged copy is still out: wait for it.
    if (out > 0) return;
    this.#phase = BACKOFF;
    const delay = this.#retry.next(calls, c, now, refused, sent);
    if (delay >= 0) {
      if (now + delay > EVENT_LIMIT) throw pastClock("client retry backoff", "wait", delay, now + delay, this.#start);
      this.sim.at(now + delay, this.#onRetry, calls.ref(c));
      return;
    }
    calls.end(c);
    this.#rec.done(now, key, false, false);
    calls.close(c);
  }

  // ---- attempts: the client's side ----------------------------------------------------------

  #attempt(c: number, now: number, kind: number): void {
    const rec = this.#rec;
    const calls = this.#calls;
    rec.attempt(now, kind);
    if (kind !== HEDGE) calls.made[c]++;
    calls.out[c]++;
    const key = calls.key[c];
    const cost = calls.cost[c];
    const a = this.#attempts.open(c, key, cost, now);
    const chain = this.#chain;
    this.#phase = POLICY;
    if (chain.clients > 0 && !chain.admit(CLIENT_SIDE, a, now, key, cost)) {
      rec.refuse(now, key, chain.reason);
      this.#attempts.close(a);
      this.#resolve(c, now, false, true, now);
      return;
    }
    const delay = chain.clients > 0 ? chain.delay : 0;
    if (this.#request === undefined && delay === 0) {
      // Nothing between the client and the server: the server-side policies answer at once.
      if (chain.servers > 0 && !chain.admit(SERVER_SIDE, a, now, key, cost)) {
        if (chain.clients > 0) chain.release(CLIENT_SIDE, a, now, key);
        rec.refuse(now, key, chain.reason);
        this.#attempts.close(a);
        this.#resolve(c, now, false, true, now);
        return;
      }
      rec.admit(now, key);
      rec.gauge(IN_FLIGHT, ++this.#inFlight, now);
      this.#timers.attempt(a, c, now, kind);
      this.#dispatch(a, now);
      return;
    }
    if (chain.servers === 0) rec.admit(now, key);
    rec.gauge(IN_FLIGHT, ++this.#inFlight, now);
    this.#timers.attempt(a, c, now, kind);
    const leg = this.#request === undefined ? 0 : this.#leg(this.#request, "simulate network request");
    const at = now + delay + leg;
    if (at > EVENT_LIMIT) throw pastRequest(delay, leg, at, this.#start);
    this.sim.at(at, this.#onReach, this.#attempts.ref(a));
  }

  #leg(d: Distribution, what: string): number {
    this.#phase = NETWORK;
    return duration(d, this.#network, what);
  }

  /** The client has heard attempt `a`'s answer at `now` (or stopped waiting: `timedOut`). */
  #clientDone(a: number, now: number, ok: boolean, timedOut: boolean): void {
    const attempts = this.#attempts;
    const key = attempts.key[a];
    this.#phase = POLICY;
    if (this.#chain.clients > 0)
      this.#chain.settle(CLIENT_SIDE, a, now, key, ok ? "success" : timedOut ? "timeout" : "failure");
    const c = attempts.call[a];
    const rec = this.#rec;
    rec.gauge(IN_FLIGHT, --this.#inFlight, now);
    if (ok) rec.success(now, key, now - attempts.start[a]);
    else rec.failure(now, key, timedOut);
    const sent = attempts.start[a];
    const flags = (attempts.flags[a] |= CLIENT_DONE);
    if ((flags & SERVER_DONE) !== 0) attempts.close(a);
    this.#resolve(c, now, ok, false, sent);
  }

  /** The answer to attempt `a` leaves the server at `now`: it reaches the client a response leg later. */
  #answer(a: number, now: number, outcome: number): void {
    if (this.#response === undefined) {
      this.#heard(a, now, outcome);
      return;
    }
    // On the wire: the attempt is not the server's any more, but its row stays until the answer lands.
    const leg = this.#leg(this.#response, "simulate network response");
    const at = now + leg;
    if (at > EVENT_LIMIT) throw pastClock("network response", "leg", leg, at, this.#start);
    const fire = outcome === OK ? this.#onHeardOk : outcome === FAILED ? this.#onHeardFailed : this.#onHeardRefused;
    this.sim.at(at, fire, this.#attempts.ref(a));
  }

  readonly #onHeardOk = (now: number, ref: number): void => this.#heard(this.#attempts.of(ref), now, OK);
  readonly #onHeardFailed = (now: number, ref: number): void => this.#heard(this.#attempts.of(ref), now, FAILED);
  readonly #onHeardRefused = (now: number, ref: number): void => this.#heard(this.#attempts.of(ref), now, REFUSED);

  #heard(a: number, now: number, outcome: number): void {
    const attempts = this.#attempts;
    // Only now is nothing of the attempt left on the server's side or on the wire.
    attempts.flags[a] |= SERVER_DONE;
    if ((attempts.flags[a] & CLIENT_DONE) !== 0) {
      // The client stopped waiting before the answer came.
      attempts.close(a);
      return;
    }
    if (outcome !== REFUSED) {
      this.#clientDone(a, now, outcome === OK, false);
      return;
    }
    // A server-side refusal: the attempt never ran, and the client-side places are given back.
    const key = attempts.key[a];
    this.#phase = POLICY;
    if (this.#chain.clients > 0) this.#chain.release(CLIENT_SIDE, a, now, key);
    this.#rec.gauge(IN_FLIGHT, --this.#inFlight, now);
    attempts.flags[a] |= CLIENT_DONE;
    const c = attempts.call[a];
    const sent = attempts.start[a];
    attempts.close(a);
    this.#resolve(c, now, false, true, sent);
  }

  // ---- attempts: the server's side ----------------------------------------------------------

  /** Attempt `ref` reaches the server, a request leg (and its client-side delays) after it was sent. */
  readonly #onReach: Fire = (now, ref) => this.#reach(now, ref);

  #reach(now: number, ref: number): void {
    const attempts = this.#attempts;
    const a = attempts.of(ref);
    const chain = this.#chain;
    if (chain.servers > 0) {
      const key = attempts.key[a];
      this.#phase = POLICY;
      if (!chain.admit(SERVER_SIDE, a, now, key, attempts.cost[a])) {
        this.#rec.refuse(now, key, chain.reason);
        this.#answer(a, now, REFUSED);
        return;
      }
      this.#rec.admit(now, key);
    }
    this.#dispatch(a, now);
  }

  #dispatch(a: number, now: number): void {
    const rec = this.#rec;
    rec.arrive(now);
    const server = this.#server;
    this.#phase = BACKEND;
    const taken = server.accept(a, now);
    if (taken === FULL) {
      // Queue full: the server turns it away at once.
      this.#serverDone(a, now, false, false);
      return;
    }
    if (taken === DROPPED) this.#drop(a, now, false);
    if (this.#limited) {
      rec.backend(server.busy, server.queued, now);
    }
  }

  readonly #onService: Fire = (now, a) => this.#service(now, a);

  #service(now: number, a: number): void {
    const server = this.#server;
    this.#phase = BACKEND;
    const ok = server.finish(a, now);
    if (this.#limited) {
      this.#rec.backend(server.busy, server.queued, now);
    }
    this.#serverDone(a, now, ok, true);
  }

  readonly #onWake = (now: number, edge: number): void => {
    const server = this.#server;
    this.#phase = BACKEND;
    server.wake(now, edge);
    this.#rec.backend(server.busy, server.queued, now);
  };

  /** The server has finished with attempt `a` at `now` (`served`: it spent a worker's time on it). */
  #serverDone(a: number, now: number, ok: boolean, served: boolean): void {
    const attempts = this.#attempts;
    this.#phase = POLICY;
    if (this.#chain.servers > 0) this.#chain.settle(SERVER_SIDE, a, now, attempts.key[a], ok ? "success" : "failure");
    if ((attempts.flags[a] & CLIENT_DONE) !== 0) {
      // Nobody is waiting for the answer.
      if (served) this.#rec.waste(now);
      attempts.flags[a] |= SERVER_DONE;
      attempts.close(a);
    } else if (this.#response === undefined) {
      // Nothing between the server and the client: the answer is heard at once.
      attempts.flags[a] |= SERVER_DONE;
      this.#clientDone(a, now, ok, false);
    } else this.#answer(a, now, ok ? OK : FAILED);
  }

  /**
   * The backend dropped attempt `a` unserved at `now`, its caller having stopped waiting: after
   * holding it in its queue (`waited`: the server-side stages hear a failure, as admit's verdict
   * is released when its client has gone), or as it arrived (they hear a release: it never ran).
   */
  #drop(a: number, now: number, waited: boolean): void {
    const attempts = this.#attempts;
    this.#rec.drop(now);
    this.#phase = POLICY;
    if (this.#chain.servers > 0) {
      if (waited) this.#chain.drop(SERVER_SIDE, a, now, attempts.key[a]);
      else this.#chain.release(SERVER_SIDE, a, now, attempts.key[a]);
    }
    attempts.flags[a] |= SERVER_DONE;
    attempts.close(a);
  }
}
