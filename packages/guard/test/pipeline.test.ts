// The pipeline asks, spends, settles and releases its stages exactly as the plain loop over them
// does (the reference below, the pipeline as first written): the pipeline is straight-line code
// for its first places, its first two stages spent last and its four slots, a loop beyond them,
// so every length from none to nine is run, with stages that peek, settle, release, refuse and
// throw at random, at clocks near 0 and near Date.now().
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Outcome } from "../src/events";
import { Pipeline } from "../src/pipeline";
import type { Held } from "../src/pipeline";
import type { Ask, Stage } from "../src/stage";

/** The plain loop: every stage in turn, the ones spent last after; a switch per slot. */
class Reference {
  readonly stages: readonly Stage[];
  readonly #last: readonly boolean[];
  readonly #spent: readonly number[];
  readonly #slot: readonly number[];
  readonly #settled: readonly number[];
  refusedBy = -1;

  constructor(stages: readonly Stage[]) {
    this.stages = stages;
    this.#last = stages.map((s) => s.last === true && typeof s.peek === "function");
    this.#spent = stages.flatMap((_, i) => (this.#last[i] ? [i] : []));
    let slots = 0;
    this.#slot = stages.map((s) => (typeof s.settle === "function" || typeof s.release === "function" ? slots++ : -1));
    this.#settled = stages.flatMap((s, i) => (typeof s.settle === "function" ? [i] : []));
  }

  admit(now: number, ask: Ask, held: Held): boolean {
    const stages = this.stages;
    let i = 0;
    try {
      for (; i < stages.length; i++) {
        const s = stages[i];
        if (this.#last[i]) {
          if (!(s.peek as NonNullable<Stage["peek"]>)(now, ask)) return this.#refused(i, now, held);
        } else {
          const token = s.enter(now, ask);
          if (token === undefined) return this.#refused(i, now, held);
          if (this.#slot[i] >= 0) set(held, this.#slot[i], token);
        }
      }
      for (const j of this.#spent) {
        i = j;
        const token = stages[i].enter(now, ask);
        if (token === undefined) return this.#refused(i, now, held);
        if (this.#slot[i] >= 0) set(held, this.#slot[i], token);
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

  #release(now: number, held: Held): void {
    for (let k = this.stages.length - 1; k >= 0; k--) {
      if (this.#slot[k] < 0) continue;
      const token = get(held, this.#slot[k]);
      if (token === undefined) continue;
      set(held, this.#slot[k], undefined);
      this.stages[k].release?.(token, now);
    }
  }

  settle(now: number, outcome: Outcome, held: Held): void {
    for (const i of this.#settled) {
      const token = get(held, this.#slot[i]);
      if (token === undefined) continue;
      set(held, this.#slot[i], undefined);
      (this.stages[i].settle as NonNullable<Stage["settle"]>)(token, now, outcome);
    }
  }
}

function get(h: Held, i: number): unknown {
  return [h.t0, h.t1, h.t2, h.t3, ...(h.more ?? [])][i];
}

function set(h: Held, i: number, token: unknown): void {
  if (i === 0) h.t0 = token;
  else if (i === 1) h.t1 = token;
  else if (i === 2) h.t2 = token;
  else if (i === 3) h.t3 = token;
  else (h.more ??= [])[i - 4] = token;
}

/** What a stage is and does: its methods, and per call what each answers ("ok", "no", "throw"). */
interface Shape {
  readonly last: boolean;
  readonly settles: boolean;
  readonly releases: boolean;
  readonly answers: readonly ("ok" | "no" | "throw")[];
}

const shape = fc.record({
  last: fc.boolean(),
  settles: fc.boolean(),
  releases: fc.boolean(),
  answers: fc.array(fc.constantFrom("ok", "ok", "ok", "ok", "no", "throw"), { minLength: 8, maxLength: 8 }),
}) as fc.Arbitrary<Shape>;

/** Stages of `shapes` that log what they are asked into `log`; each call's answers by `call()`. */
function build(shapes: readonly Shape[], log: unknown[], call: () => number): Stage[] {
  return shapes.map((sh, i) => {
    const answer = (): "ok" | "no" | "throw" => sh.answers[call() % sh.answers.length];
    const act = (what: string, now: number, ask: Ask): boolean => {
      const a = answer();
      log.push([what, i, now, a]);
      if (a === "throw") throw new Error(`stage ${i} ${what}`);
      if (a === "no") ask.retryAfter = i + 1;
      return a === "ok";
    };
    const stage: Stage = {
      kind: `k${i}`,
      last: sh.last,
      enter: (now, ask) => (act("enter", now, ask) ? { stage: i, now } : undefined),
    };
    if (sh.last) (stage as { peek?: Stage["peek"] }).peek = (now, ask) => act("peek", now, ask);
    if (sh.settles) stage.settle = (token, now, outcome) => void log.push(["settle", i, token, now, outcome]);
    if (sh.releases) stage.release = (token, now) => void log.push(["release", i, token, now]);
    return stage;
  });
}

function held(): Held & Ask {
  return {
    t0: undefined,
    t1: undefined,
    t2: undefined,
    t3: undefined,
    cost: 1,
    hedge: false,
    first: true,
    retryAfter: 0,
  };
}

/** Runs `calls` through one pipeline: everything it logs, answers, refuses and throws, in order. */
function run(
  make: (stages: Stage[]) => Pipeline | Reference,
  shapes: readonly Shape[],
  t0: number,
  outcomes: readonly Outcome[],
): unknown[] {
  const log: unknown[] = [];
  let n = 0;
  let pipeline: Pipeline | Reference;
  try {
    pipeline = make(build(shapes, log, () => n));
  } catch (e) {
    return [String(e)];
  }
  for (const [c, outcome] of outcomes.entries()) {
    n = c;
    const h = held();
    const now = t0 + c * 0.125;
    try {
      const ok = pipeline.admit(now, h, h);
      log.push(["admit", ok, ok ? -2 : pipeline.refusedBy, h.retryAfter]);
      if (ok) pipeline.settle(now + 1, outcome, h);
    } catch (e) {
      log.push(["threw", String(e)]);
    }
    log.push(["left", h.t0, h.t1, h.t2, h.t3, ...(h.more ?? []).filter((t) => t !== undefined)]);
  }
  return log;
}

describe.each([0, 1_700_000_000_123.375])("the pipeline with the clock at %d", (t0) => {
  it("asks, spends, settles and releases as the plain loop over its stages does, at every length", () => {
    fc.assert(
      fc.property(
        fc.array(shape, { minLength: 0, maxLength: 9 }),
        fc.array(fc.constantFrom<Outcome>("success", "failure", "timeout", "cancelled", "refused"), {
          minLength: 1,
          maxLength: 8,
        }),
        (shapes, outcomes) => {
          const got = run((s) => new Pipeline(s), shapes, t0, outcomes);
          const want = run((s) => new Reference(s), shapes, t0, outcomes);
          expect(got).toEqual(want);
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it("keeps the tokens of stages past the fourth, settles them in order and releases them last first", () => {
    const log: string[] = [];
    let open = true;
    const keeps = (i: number): Stage => ({
      kind: `k${i}`,
      enter: () => (i < 6 || open ? `token ${i}` : undefined),
      settle: (token, now, outcome) => void log.push(`settle ${String(token)} ${now} ${outcome}`),
      release: (token, now) => void log.push(`release ${String(token)} ${now}`),
    });
    const pipeline = new Pipeline(Array.from({ length: 7 }, (_, i) => keeps(i)));
    const h = held();
    expect(pipeline.admit(t0, h, h)).toBe(true);
    pipeline.settle(t0 + 1, "success", h);
    expect(log).toEqual(Array.from({ length: 7 }, (_, i) => `settle token ${i} ${t0 + 1} success`));
    expect([h.t0, h.t1, h.t2, h.t3, ...(h.more ?? [])].every((t) => t === undefined)).toBe(true);
    log.length = 0;
    open = false;
    expect(pipeline.admit(t0 + 2, h, h)).toBe(false);
    expect(pipeline.refusedBy).toBe(6);
    expect(log).toEqual([5, 4, 3, 2, 1, 0].map((i) => `release token ${i} ${t0 + 2}`));
    log.length = 0;
    open = true;
    expect(pipeline.admit(t0 + 3, h, h)).toBe(true);
    pipeline.release(t0 + 4, h);
    expect(log).toEqual([6, 5, 4, 3, 2, 1, 0].map((i) => `release token ${i} ${t0 + 4}`));
  });
});
