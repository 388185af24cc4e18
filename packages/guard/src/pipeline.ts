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
// entered is settled with how it went.
import type { Outcome } from "./events";
import type { Ask, Stage } from "./stage";

/**
 * What one call holds of each stage it entered: its tokens.
 * Only the stages that settle or release keep one, each in a slot of its own: four slots, fields
 * (a guard's attempt, three such stages at most, allocates no array for them: its `Pass` is its
 * `Held`).
 */
export interface Held {
  t0: unknown;
  t1: unknown;
  t2: unknown;
  t3: unknown;
}

function get(h: Held, i: number): unknown {
  switch (i) {
    case 0:
      return h.t0;
    case 1:
      return h.t1;
    case 2:
      return h.t2;
    default:
      return h.t3;
  }
}

function set(h: Held, i: number, token: unknown): void {
  switch (i) {
    case 0:
      h.t0 = token;
      return;
    case 1:
      h.t1 = token;
      return;
    case 2:
      h.t2 = token;
      return;
    default:
      h.t3 = token;
  }
}

/** The stages of one guard or admission, in order, and which of them are spent last. */
export class Pipeline {
  readonly stages: readonly Stage[];
  /** Per stage: peeked at its place and entered after every other stage admitted. */
  readonly #last: readonly boolean[];
  /** The places of the stages spent last, in order. */
  readonly #spent: readonly number[];
  /** Per stage: the slot its token is kept in (it has a `settle` or a `release`), or -1 (a bucket). */
  readonly #slot: readonly number[];
  /** The places of the stages that settle, in order. */
  readonly #settled: readonly number[];
  /**
   * Set by {@link Pipeline.admit} on a refusal: the place of the stage that refused, or -1 when
   * none did (nothing stands in the way, or a stage threw).
   */
  refusedBy = -1;

  /** @param stages - in the order they are asked (those with `last` and a `peek` are spent last) */
  constructor(stages: readonly Stage[]) {
    this.stages = stages;
    this.#last = stages.map((s) => s.last === true && typeof s.peek === "function");
    this.#spent = stages.flatMap((_, i) => (this.#last[i] ? [i] : []));
    let slots = 0;
    this.#slot = stages.map((s) => (typeof s.settle === "function" || typeof s.release === "function" ? slots++ : -1));
    if (slots > 4) throw new RangeError(`a pipeline keeps tokens for 4 stages at most, got ${slots}`);
    this.#settled = stages.flatMap((s, i) => (typeof s.settle === "function" ? [i] : []));
  }

  /**
   * Admits `ask` at `now` (ms) through every stage, its tokens kept in `held`: true; or false
   * with the refusing stage's place in {@link Pipeline.refusedBy} (its wait in
   * `ask.retryAfter`), everything the stages before it took released. What a stage throws is
   * thrown on, and then too nothing is held.
   */
  admit(now: number, ask: Ask, held: Held): boolean {
    const stages = this.stages;
    const last = this.#last;
    const slot = this.#slot;
    const n = stages.length;
    let i = 0;
    try {
      for (; i < n; i++) {
        const s = stages[i];
        if (last[i]) {
          if (!(s.peek as NonNullable<Stage["peek"]>)(now, ask)) return this.#refused(i, now, held);
        } else {
          const token = s.enter(now, ask);
          if (token === undefined) return this.#refused(i, now, held);
          if (slot[i] >= 0) set(held, slot[i], token);
        }
      }
      // Every stage has let it through: the ones asked first are spent now, in the same tick.
      const spent = this.#spent;
      for (let j = 0; j < spent.length; j++) {
        i = spent[j];
        const token = stages[i].enter(now, ask);
        if (token === undefined) return this.#refused(i, now, held);
        if (slot[i] >= 0) set(held, slot[i], token);
      }
    } catch (e) {
      this.#release(now, held);
      throw e;
    }
    return true;
  }

  #refused(i: number, now: number, held: Held): false {
    this.refusedBy = i;
    this.#release(now, held);
    return false;
  }

  /** Releases, last first, every token `held` holds (a stage spent last holds one once spent). */
  #release(now: number, held: Held): void {
    const stages = this.stages;
    const slot = this.#slot;
    for (let k = stages.length - 1; k >= 0; k--) {
      if (slot[k] < 0) continue;
      const token = get(held, slot[k]);
      if (token === undefined) continue;
      set(held, slot[k], undefined);
      stages[k].release?.(token, now);
    }
  }

  /** Settles everything `held` holds at `now` (ms), in order, with how the call went; once only. */
  settle(now: number, outcome: Outcome, held: Held): void {
    const stages = this.stages;
    const settled = this.#settled;
    for (let j = 0; j < settled.length; j++) {
      const i = settled[j];
      const token = get(held, this.#slot[i]);
      if (token === undefined) continue;
      set(held, this.#slot[i], undefined);
      (stages[i].settle as NonNullable<Stage["settle"]>)(token, now, outcome);
    }
  }
}
