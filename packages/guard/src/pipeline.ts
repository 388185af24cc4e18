// The one pipeline every admission runs: the client guard's attempts, the server admit's
// requests, the simulator's policy chain, and otel's instrumented guard and admission (which are
// those with listeners). A call goes through the stages in their documented order:
//
//        peek      peek       enter      enter        enter      enter      enter
//   ──▶ bucket ──▶ gate ──▶ shedder ──▶ breaker ──▶ budget ──▶ gate ──▶ bucket ──▶ the call
//        │          │          │           │          │      (spent last)
//        ▼          ▼          ▼           ▼          ▼
//      refused: what the stages before it took is released, last first
//
// A stage the pipeline spends last (a guard's bucket and gate; admit's per-key limits when a
// quota set follows them) is peeked at its place, so a refusal further on spends none of it, and
// entered once every other stage has let the call through. When the call ends, each stage it
// entered is settled with how it went. Admit's quota set may answer later (a store over the
// network): it stands last, and the pipeline's one asynchronous branch (`admitThen`) goes on
// when it answers, so the synchronous path the guard runs is the same code with or without it.
import type { Outcome } from "./events";
import type { Ask, Stage } from "./stage";

type Peek = NonNullable<Stage["peek"]>;

/**
 * What one call holds of each stage it entered: its tokens.
 * Only the stages that settle or release keep one, each in a slot of its own: the first four
 * slots are fields (a guard's attempt, three such stages at most, allocates no array for them: its
 * `Pass` is its `Held`), any further ones (a simulated chain of many policies) in `more`.
 */
export interface Held {
  t0: unknown;
  t1: unknown;
  t2: unknown;
  t3: unknown;
  /** Slots from the fifth on, made when first needed. */
  more?: unknown[];
}

/** Keeps `token` in slot `k` of `held`. */
function keep(held: Held, k: number, token: unknown): void {
  if (k === 0) held.t0 = token;
  else if (k === 1) held.t1 = token;
  else if (k === 2) held.t2 = token;
  else if (k === 3) held.t3 = token;
  else (held.more ??= [])[k - FIELDS] = token;
}

/** How many slots are fields of {@link Held}. */
const FIELDS = 4;

/** How the pipeline asks a stage at its place: peeked (it is spent last), or entered and its token dropped. */
const PEEK = -1;
const DROP = -2;

/** What settles a slot's token. */
interface Settler {
  settle(token: unknown, now: number, outcome: Outcome): void;
}

/** What gives a slot's token back. */
interface Releaser {
  release(token: unknown, now: number): void;
}

/** For a place with no stage, or a slot whose stage lacks `release`: nothing to do. */
const NONE: Stage & Releaser = {
  kind: "none",
  peek: () => true,
  enter: () => true,
  release(): void {
    // Nothing to give back: its token is only cleared.
  },
};

/** How many places and spent stages are asked by straight-line code; more go through a loop. */
const PLACES = 6;
const SPENT = 2;

/**
 * The stages of one guard or admission, in order, and which of them are spent last.
 *
 * Everything that depends only on the stages is worked out once, here: how each place is asked,
 * which stages are spent after, and which stage owns each token slot. An admission is then
 * straight-line code over the first six places and two spent stages (each a call site of its
 * own, which V8 sees one stage at), and a settle or a release straight-line code over the four
 * slots. A plain loop over the stages, with a switch per slot, took about 20 ns more than the
 * stages called by hand for a bucket and a breaker, this about 10 (pipeline.test.ts holds the two
 * to the same decisions); the loop is kept for a pipeline longer than six places, and for the
 * slots past four a simulated chain of many policies may use.
 */
export class Pipeline {
  readonly stages: readonly Stage[];
  /** How many stages. */
  readonly #n: number;
  /** Per place, how it is asked: {@link PEEK}, {@link DROP}, or the slot its token is kept in. */
  readonly #op: readonly number[];
  /** The places of the stages spent last, in order. */
  readonly #spent: readonly number[];
  /** Per stage spent last: {@link DROP}, or the slot its token is kept in. */
  readonly #spentOp: readonly number[];
  /** How many slots are used. */
  readonly #slots: number;
  /** Per slot from the fifth on, what settles and what releases its token. */
  readonly #settleMore: readonly (Settler | undefined)[];
  readonly #releaseMore: readonly Releaser[];
  // The first places' stages and how each is asked, and the first two spent: fields, so that
  // each has a call site of its own.
  readonly #s0: Stage;
  readonly #s1: Stage;
  readonly #s2: Stage;
  readonly #s3: Stage;
  readonly #s4: Stage;
  readonly #s5: Stage;
  readonly #k0: number;
  readonly #k1: number;
  readonly #k2: number;
  readonly #k3: number;
  readonly #k4: number;
  readonly #k5: number;
  readonly #p0: Stage;
  readonly #p1: Stage;
  // Per slot, the stage whose token it keeps: what settles it (none for a stage that only
  // releases: its token is left as it is) and what releases it ({@link NONE} when it lacks one).
  readonly #settle0: Settler | undefined;
  readonly #settle1: Settler | undefined;
  readonly #settle2: Settler | undefined;
  readonly #settle3: Settler | undefined;
  readonly #release0: Releaser;
  readonly #release1: Releaser;
  readonly #release2: Releaser;
  readonly #release3: Releaser;
  /** The place of the stage that answers later (see {@link Pipeline.admitThen}), -1 for none. */
  readonly #late: number;
  /** Its token's slot, or {@link DROP}. */
  readonly #lateOp: number;
  /** With one, the places of the stages spent last (entered after it answers), and their slots. */
  readonly #after: readonly number[];
  readonly #afterOp: readonly number[];
  /**
   * Set by {@link Pipeline.admit} on a refusal: the place of the stage that refused, or -1 when
   * none did (nothing stands in the way, or a stage threw).
   */
  refusedBy = -1;
  /**
   * Set with {@link Pipeline.refusedBy}: whether the stage refused as it was spent last, every
   * other stage having let the call through, rather than at its place.
   */
  refusedSpending = false;

  /**
   * @param stages - in the order they are asked (those with `last` and a `peek` are spent last)
   * @param waits - whether its holder waits for a stage that answers later (admit's quota set)
   * @param inOrder - whether each stage is entered at its place, none spent last (a simulated chain)
   */
  constructor(stages: readonly Stage[], waits = false, inOrder = false) {
    this.stages = stages;
    const all = stages.length;
    const late = waits ? stages.findIndex((s) => typeof s.enterThen === "function") : -1;
    if (late >= 0 && (late !== all - 1 || stages[late].last === true))
      throw new RangeError(`a stage that answers later (${stages[late].kind}) must stand last`);
    this.#late = late;
    // With one, `admit` asks the places before it, and admitThen it and the stages spent last.
    const n = late >= 0 ? late : all;
    this.#n = n;
    const last = stages.map((s) => !inOrder && s.last === true && typeof s.peek === "function");
    let slots = 0;
    const slot = stages.map((s) =>
      typeof s.settle === "function" || typeof s.release === "function" ? slots++ : DROP,
    );
    this.#slots = slots;
    const op = stages.map((_, i) => (last[i] ? PEEK : slot[i]));
    this.#op = op;
    const spent = stages.flatMap((_, i) => (last[i] ? [i] : []));
    this.#after = late >= 0 ? [...spent] : [];
    this.#afterOp = this.#after.map((i) => slot[i]);
    this.#lateOp = late >= 0 ? slot[late] : DROP;
    if (late >= 0) spent.length = 0;
    this.#spent = spent;
    this.#spentOp = spent.map((i) => slot[i]);
    const at = (i: number): Stage => stages[i] ?? NONE;
    const opAt = (i: number): number => (i < n ? op[i] : DROP);
    this.#s0 = at(0);
    this.#s1 = at(1);
    this.#s2 = at(2);
    this.#s3 = at(3);
    this.#s4 = at(4);
    this.#s5 = at(5);
    this.#k0 = opAt(0);
    this.#k1 = opAt(1);
    this.#k2 = opAt(2);
    this.#k3 = opAt(3);
    this.#k4 = opAt(4);
    this.#k5 = opAt(5);
    // NONE where fewer are spent last (`spent[j]` undefined).
    this.#p0 = at(spent[0]);
    this.#p1 = at(spent[1]);
    const owner = (k: number): Stage | undefined => stages[slot.indexOf(k)];
    const settler = (k: number): Settler | undefined => {
      const s = owner(k);
      return typeof s?.settle === "function" ? (s as Settler) : undefined;
    };
    const releaser = (k: number): Releaser => {
      const s = owner(k);
      return typeof s?.release === "function" ? (s as Releaser) : NONE;
    };
    this.#settle0 = settler(0);
    this.#settle1 = settler(1);
    this.#settle2 = settler(2);
    this.#settle3 = settler(3);
    this.#release0 = releaser(0);
    this.#release1 = releaser(1);
    this.#release2 = releaser(2);
    this.#release3 = releaser(3);
    const more = Array.from({ length: Math.max(0, slots - FIELDS) }, (_, j) => FIELDS + j);
    this.#settleMore = more.map(settler);
    this.#releaseMore = more.map(releaser);
  }

  /**
   * Admits `ask` at `now` (ms) through every stage, its tokens kept in `held`: true; or false
   * with the refusing stage's place in {@link Pipeline.refusedBy} (its wait in
   * `ask.retryAfter`), everything the stages before it took released. What a stage throws is
   * thrown on, and then too nothing is held.
   */
  admit(now: number, ask: Ask, held: Held): boolean {
    const n = this.#n;
    try {
      // Each place: peeked, or entered and its token kept (k ≥ 0) or dropped.
      if (n > 0) {
        const k = this.#k0;
        if (k === PEEK) {
          if (!(this.#s0.peek as Peek)(now, ask)) return this.#refused(0, now, held);
        } else {
          const token = this.#s0.enter(now, ask);
          if (token === undefined) return this.#refused(0, now, held);
          if (k >= 0) keep(held, k, token);
        }
      }
      if (n > 1) {
        const k = this.#k1;
        if (k === PEEK) {
          if (!(this.#s1.peek as Peek)(now, ask)) return this.#refused(1, now, held);
        } else {
          const token = this.#s1.enter(now, ask);
          if (token === undefined) return this.#refused(1, now, held);
          if (k >= 0) keep(held, k, token);
        }
      }
      if (n > 2) {
        const k = this.#k2;
        if (k === PEEK) {
          if (!(this.#s2.peek as Peek)(now, ask)) return this.#refused(2, now, held);
        } else {
          const token = this.#s2.enter(now, ask);
          if (token === undefined) return this.#refused(2, now, held);
          if (k >= 0) keep(held, k, token);
        }
      }
      if (n > 3) {
        const k = this.#k3;
        if (k === PEEK) {
          if (!(this.#s3.peek as Peek)(now, ask)) return this.#refused(3, now, held);
        } else {
          const token = this.#s3.enter(now, ask);
          if (token === undefined) return this.#refused(3, now, held);
          if (k >= 0) keep(held, k, token);
        }
      }
      if (n > 4) {
        const k = this.#k4;
        if (k === PEEK) {
          if (!(this.#s4.peek as Peek)(now, ask)) return this.#refused(4, now, held);
        } else {
          const token = this.#s4.enter(now, ask);
          if (token === undefined) return this.#refused(4, now, held);
          if (k >= 0) keep(held, k, token);
        }
      }
      if (n > 5) {
        const k = this.#k5;
        if (k === PEEK) {
          if (!(this.#s5.peek as Peek)(now, ask)) return this.#refused(5, now, held);
        } else {
          const token = this.#s5.enter(now, ask);
          if (token === undefined) return this.#refused(5, now, held);
          if (k >= 0) keep(held, k, token);
        }
        const stages = this.stages;
        const op = this.#op;
        for (let i = PLACES; i < n; i++) {
          const k = op[i];
          if (k === PEEK) {
            if (!(stages[i].peek as Peek)(now, ask)) return this.#refused(i, now, held);
          } else {
            const token = stages[i].enter(now, ask);
            if (token === undefined) return this.#refused(i, now, held);
            if (k >= 0) keep(held, k, token);
          }
        }
      }
      // Every stage has let it through: the ones asked first are spent now, in the same tick.
      const spent = this.#spent;
      const m = spent.length;
      if (m > 0) {
        const token = this.#p0.enter(now, ask);
        if (token === undefined) return this.#refused(spent[0], now, held, true);
        const k = this.#spentOp[0];
        if (k >= 0) keep(held, k, token);
      }
      if (m > 1) {
        const token = this.#p1.enter(now, ask);
        if (token === undefined) return this.#refused(spent[1], now, held, true);
        const k = this.#spentOp[1];
        if (k >= 0) keep(held, k, token);
        const stages = this.stages;
        for (let j = SPENT; j < m; j++) {
          const i = spent[j];
          const more = stages[i].enter(now, ask);
          if (more === undefined) return this.#refused(i, now, held, true);
          const kj = this.#spentOp[j];
          if (kj >= 0) keep(held, kj, more);
        }
      }
    } catch (e) {
      this.#release(now, held);
      throw e;
    }
    return true;
  }

  /**
   * As {@link Pipeline.admit}, then the stage that may answer later and those spent last (at
   * `later()` ms, once it answered late); `done(admitted, late)` when decided, `refusedBy` read
   * there. What is given back after the places before it is given back at NaN.
   */
  admitThen<R>(
    now: number,
    ask: Ask,
    held: Held,
    later: () => number,
    done: (admitted: boolean, late: boolean) => R,
  ): R | Promise<R> {
    if (!this.admit(now, ask, held)) return done(false, false);
    const at = this.#late;
    if (at < 0) return done(true, false);
    const fail = (error: unknown): never => {
      this.#release(Number.NaN, held);
      throw error;
    };
    return (this.stages[at].enterThen as NonNullable<Stage["enterThen"]>)(
      now,
      ask,
      (token, late) => this.#then(token, late ? later : undefined, now, ask, held, done),
      fail,
    );
  }

  /** The stage that answers later answered `token`: the stages spent last are entered, then `done`. */
  #then<R>(
    token: unknown,
    later: (() => number) | undefined,
    now: number,
    ask: Ask,
    held: Held,
    done: (admitted: boolean, late: boolean) => R,
  ): R {
    const late = later !== undefined;
    let refused = this.#late;
    try {
      if (token !== undefined) {
        refused = -1;
        if (this.#lateOp >= 0) keep(held, this.#lateOp, token);
        const after = this.#after;
        const at = after.length === 0 || later === undefined ? now : later();
        for (let j = 0; j < after.length; j++) {
          const t = this.stages[after[j]].enter(at, ask);
          if (t === undefined) {
            refused = after[j];
            break;
          }
          if (this.#afterOp[j] >= 0) keep(held, this.#afterOp[j], t);
        }
        if (refused < 0) return done(true, late);
      }
    } catch (e) {
      this.#release(Number.NaN, held);
      throw e;
    }
    this.refusedBy = refused;
    this.refusedSpending = refused !== this.#late;
    this.#release(Number.NaN, held);
    return done(false, late);
  }

  #refused(i: number, now: number, held: Held, spending = false): false {
    this.refusedBy = i;
    this.refusedSpending = spending;
    this.#release(now, held);
    return false;
  }

  /**
   * Releases, last first, every token `held` holds at `now` (ms): the call admitted never ran.
   * (A stage spent last holds one once spent.)
   */
  release(now: number, held: Held): void {
    this.#release(now, held);
  }

  #release(now: number, held: Held): void {
    const n = this.#slots;
    if (n > FIELDS) {
      const more = held.more;
      if (more !== undefined)
        for (let k = n - 1; k >= FIELDS; k--) {
          const t = more[k - FIELDS];
          if (t === undefined) continue;
          more[k - FIELDS] = undefined;
          this.#releaseMore[k - FIELDS].release(t, now);
        }
    }
    if (n > 3 && held.t3 !== undefined) {
      const t = held.t3;
      held.t3 = undefined;
      this.#release3.release(t, now);
    }
    if (n > 2 && held.t2 !== undefined) {
      const t = held.t2;
      held.t2 = undefined;
      this.#release2.release(t, now);
    }
    if (n > 1 && held.t1 !== undefined) {
      const t = held.t1;
      held.t1 = undefined;
      this.#release1.release(t, now);
    }
    if (n > 0 && held.t0 !== undefined) {
      const t = held.t0;
      held.t0 = undefined;
      this.#release0.release(t, now);
    }
  }

  /** Settles everything `held` holds at `now` (ms), in order, with how the call went; once only. */
  settle(now: number, outcome: Outcome, held: Held): void {
    const n = this.#slots;
    if (n === 0) return;
    const s0 = this.#settle0;
    const t0 = held.t0;
    if (s0 !== undefined && t0 !== undefined) {
      held.t0 = undefined;
      s0.settle(t0, now, outcome);
    }
    if (n === 1) return;
    const s1 = this.#settle1;
    const t1 = held.t1;
    if (s1 !== undefined && t1 !== undefined) {
      held.t1 = undefined;
      s1.settle(t1, now, outcome);
    }
    if (n === 2) return;
    const s2 = this.#settle2;
    const t2 = held.t2;
    if (s2 !== undefined && t2 !== undefined) {
      held.t2 = undefined;
      s2.settle(t2, now, outcome);
    }
    if (n === 3) return;
    const s3 = this.#settle3;
    const t3 = held.t3;
    if (s3 !== undefined && t3 !== undefined) {
      held.t3 = undefined;
      s3.settle(t3, now, outcome);
    }
    if (n === FIELDS) return;
    const more = held.more;
    if (more === undefined) return;
    for (let k = FIELDS; k < n; k++) {
      const s = this.#settleMore[k - FIELDS];
      const t = more[k - FIELDS];
      if (s === undefined || t === undefined) continue;
      more[k - FIELDS] = undefined;
      s.settle(t, now, outcome);
    }
  }
}
