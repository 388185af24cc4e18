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
 * What one call holds of each stage it entered: its tokens, by the stage's place in the pipeline.
 * The first six are fields (a guard's attempt, of five stages at most, allocates no array for them);
 * more go in `rest`.
 */
export class Held {
  t0: unknown = undefined;
  t1: unknown = undefined;
  t2: unknown = undefined;
  t3: unknown = undefined;
  t4: unknown = undefined;
  t5: unknown = undefined;
  rest: unknown[] | undefined = undefined;
}

function get(h: Held, i: number): unknown {
  switch (i) {
    case 0:
      return h.t0;
    case 1:
      return h.t1;
    case 2:
      return h.t2;
    case 3:
      return h.t3;
    case 4:
      return h.t4;
    case 5:
      return h.t5;
    default:
      return h.rest?.[i - 6];
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
    case 3:
      h.t3 = token;
      return;
    case 4:
      h.t4 = token;
      return;
    case 5:
      h.t5 = token;
      return;
    default:
      (h.rest ??= [])[i - 6] = token;
  }
}

/** The stages of one guard or admission, in order, and which of them are spent last. */
export class Pipeline {
  readonly stages: readonly Stage[];
  /** Per stage: peeked at its place and entered after every other stage admitted. */
  readonly #last: readonly boolean[];
  /** Whether any stage is spent last. */
  readonly #deferred: boolean;
  /** Per stage: it has a `settle`. */
  readonly #settles: readonly boolean[];
  /**
   * Set by {@link Pipeline.admit} on a refusal: the place of the stage that refused, or -1 when
   * none did (nothing stands in the way, or a stage threw).
   */
  refusedBy = -1;

  /** @param stages - in the order they are asked (those with `last` and a `peek` are spent last) */
  constructor(stages: readonly Stage[]) {
    this.stages = stages;
    this.#last = stages.map((s) => s.last === true && typeof s.peek === "function");
    this.#deferred = this.#last.includes(true);
    this.#settles = stages.map((s) => typeof s.settle === "function");
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
    const n = stages.length;
    let i = 0;
    try {
      for (; i < n; i++) {
        const s = stages[i];
        if (last[i]) {
          if (!(s.peek as NonNullable<Stage["peek"]>)(now, ask)) return this.#refused(i, i, now, held);
        } else {
          const token = s.enter(now, ask);
          if (token === undefined) return this.#refused(i, i, now, held);
          set(held, i, token);
        }
      }
      if (this.#deferred) return this.spend(now, ask, held, 0);
    } catch (e) {
      this.#release(i, -1, now, held);
      throw e;
    }
    return true;
  }

  /** Enters the stages spent last, from place `from` on, once the others have all admitted. */
  spend(now: number, ask: Ask, held: Held, from: number): boolean {
    const stages = this.stages;
    const last = this.#last;
    let i = from;
    try {
      for (; i < stages.length; i++) {
        if (!last[i]) continue;
        const token = stages[i].enter(now, ask);
        if (token === undefined) return this.#refused(i, stages.length, now, held);
        set(held, i, token);
      }
    } catch (e) {
      this.#release(stages.length, i, now, held);
      throw e;
    }
    return true;
  }

  #refused(i: number, upTo: number, now: number, held: Held): false {
    this.refusedBy = i;
    this.#release(upTo, upTo === this.stages.length ? i : -1, now, held);
    return false;
  }

  /**
   * Releases, last first, what the stages before place `upTo` hold (those spent last only once
   * spent: before `spent`, or not at all when `spent` is -1).
   */
  #release(upTo: number, spent: number, now: number, held: Held): void {
    const stages = this.stages;
    const last = this.#last;
    for (let k = upTo - 1; k >= 0; k--) {
      if (last[k] && !(k < spent)) continue;
      const token = get(held, k);
      set(held, k, undefined);
      if (token !== undefined) stages[k].release?.(token, now);
    }
  }

  /** Settles everything `held` holds at `now` (ms), in order, with how the call went; once only. */
  settle(now: number, outcome: Outcome, held: Held): void {
    const stages = this.stages;
    const settles = this.#settles;
    for (let i = 0; i < stages.length; i++) {
      const token = get(held, i);
      if (token === undefined) continue;
      set(held, i, undefined);
      if (settles[i]) (stages[i].settle as NonNullable<Stage["settle"]>)(token, now, outcome);
    }
  }
}
