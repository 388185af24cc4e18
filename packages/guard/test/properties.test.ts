// Invariants of the guard over random scenarios on the simulated scheduler, at clocks near 0 and
// near Date.now(): whatever the functions do (answer, fail, throw, hang, refuse) and whatever the
// policies, every call settles, every attempt is reported exactly once, and nothing is held after.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Breaker } from "@tideward/breaker";
import { Refusal, guard, isRefusal, isTimeoutError } from "@tideward/guard";
import type { GuardOptions } from "@tideward/guard";
import { Bucket, Gate } from "@tideward/limiters";
import { Shedder } from "@tideward/shedder";
import { Scheduler } from "./scheduler";

type Behaviour = { readonly kind: "answer" | "fail" | "hang" | "throw" | "refuse"; readonly after: number };

const behaviour = fc.record({
  kind: fc.constantFrom("answer", "fail", "hang", "throw", "refuse"),
  after: fc.integer({ min: 0, max: 300 }),
}) as fc.Arbitrary<Behaviour>;

const policies = fc.record({
  deadline: fc.option(fc.integer({ min: 1, max: 600 }), { nil: undefined }),
  timeout: fc.option(fc.integer({ min: 1, max: 250 }), { nil: undefined }),
  attempts: fc.integer({ min: 1, max: 3 }),
  hedge: fc.option(fc.record({ delay: fc.integer({ min: 0, max: 120 }), max: fc.integer({ min: 1, max: 2 }) }), {
    nil: undefined,
  }),
  maxWait: fc.constantFrom(0, 50),
  gate: fc.integer({ min: 1, max: 4 }),
  rate: fc.constantFrom(5, 1_000),
  signal: fc.boolean(),
});

describe.each([0, 1_700_000_000_123.375])("guard invariants with the clock at %d", (t0) => {
  it(
    "every call settles, every attempt is reported once, and the gate, the shedder and the timers are left empty",
    { timeout: 60_000 },
    async () => {
      await fc.assert(
        fc.asyncProperty(
          policies,
          fc.array(fc.array(behaviour, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 6 }),
          fc.integer({ min: 0, max: 400 }),
          async (p, scripts, abortAt) => {
            const s = new Scheduler(t0);
            const gate = new Gate(p.gate);
            const shedder = new Shedder({}, t0);
            const breaker = new Breaker({}, t0);
            let invoked = 0;
            let reported = 0;
            const options: GuardOptions<string> = {
              clock: s.now,
              timers: s,
              random: () => 0.5,
              gate,
              shedder,
              load: () => 0,
              breaker,
              bucket: new Bucket(p.rate, { burst: 2, now: t0 }),
              maxWait: p.maxWait,
              // With nothing to end a hanging attempt, a call would wait forever by design: give it a deadline.
              deadline: p.deadline ?? (p.timeout === undefined && !p.signal ? 600 : undefined),
              timeout: p.timeout,
              retry: p.attempts > 1 ? { attempts: p.attempts, base: 10, cap: 40 } : undefined,
              hedge: p.hedge,
              onOutcome: () => void reported++,
            };
            const g = guard((a, script: readonly Behaviour[]) => {
              invoked++;
              const b = script[(a.attempt - 1) % script.length];
              if (b.kind === "throw") throw new Error("thrown");
              if (b.kind === "refuse") return Promise.reject(new Refusal("quota", 5));
              if (b.kind === "hang") return new Promise<string>(() => undefined);
              return new Promise<string>((resolve, reject) =>
                s.set(() => (b.kind === "answer" ? resolve("ok") : reject(new Error("failed"))), b.after),
              );
            }, options);
            const controller = new AbortController();
            if (p.signal) s.set(() => controller.abort(new Error("caller")), abortAt);
            const settled: unknown[] = [];
            const calls = scripts.map((script) =>
              (p.signal ? g.run({ signal: controller.signal }, script) : g(script)).then(
                (v) => settled.push(v),
                (e: unknown) => settled.push(e),
              ),
            );
            await s.run();
            await Promise.all(calls);
            expect(settled).toHaveLength(scripts.length);
            for (const r of settled) {
              const known =
                r === "ok" ||
                isRefusal(r) ||
                isTimeoutError(r) ||
                (r instanceof Error && ["thrown", "failed", "caller"].includes(r.message));
              expect(known, String(r)).toBe(true);
            }
            expect(reported).toBe(invoked);
            expect(gate.held).toBe(0);
            expect(shedder.flying).toBe(0);
            expect(s.pending).toBe(0);
          },
        ),
        { numRuns: 150, interruptAfterTimeLimit: 20_000 },
      );
    },
  );

  it(
    "discard sees exactly the results no caller gets, each once, and never the one a caller gets",
    { timeout: 60_000 },
    async () => {
      await fc.assert(
        fc.asyncProperty(
          policies,
          fc.array(fc.array(behaviour, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 6 }),
          fc.integer({ min: 0, max: 400 }),
          async (p, scripts, abortAt) => {
            const s = new Scheduler(t0);
            const produced: string[] = [];
            const discarded: string[] = [];
            let n = 0;
            const options: GuardOptions<string> = {
              clock: s.now,
              timers: s,
              random: () => 0.5,
              gate: new Gate(p.gate),
              breaker: new Breaker({}, t0),
              bucket: new Bucket(p.rate, { burst: 2, now: t0 }),
              maxWait: p.maxWait,
              deadline: p.deadline ?? (p.timeout === undefined && !p.signal ? 600 : undefined),
              timeout: p.timeout,
              retry: p.attempts > 1 ? { attempts: p.attempts, base: 10, cap: 40 } : undefined,
              hedge: p.hedge,
              // A result the guard may retry: "fail" answers a value that counts as a failure.
              isFailure: (error, result) => error !== undefined || result?.startsWith("bad") === true,
              discard: (r) => void discarded.push(r),
            };
            const g = guard((a, script: readonly Behaviour[]) => {
              const b = script[(a.attempt - 1) % script.length];
              if (b.kind === "throw") throw new Error("thrown");
              if (b.kind === "refuse") return Promise.reject(new Refusal("quota", 5));
              if (b.kind === "hang") return new Promise<string>(() => undefined);
              const value = `${b.kind === "answer" ? "ok" : "bad"}:${n++}`;
              return new Promise<string>((resolve) =>
                s.set(() => {
                  produced.push(value);
                  resolve(value);
                }, b.after),
              );
            }, options);
            const controller = new AbortController();
            if (p.signal) s.set(() => controller.abort(new Error("caller")), abortAt);
            const got: unknown[] = [];
            const calls = scripts.map((script) =>
              (p.signal ? g.run({ signal: controller.signal }, script) : g(script)).then(
                (v) => got.push(v),
                (e: unknown) => got.push(e),
              ),
            );
            await s.run();
            await Promise.all(calls);
            await s.settle();
            const returned = got.filter((v): v is string => typeof v === "string");
            for (const v of returned) expect(discarded).not.toContain(v);
            expect([...discarded].sort()).toEqual(produced.filter((v) => !returned.includes(v)).sort());
          },
        ),
        { numRuns: 100, interruptAfterTimeLimit: 20_000 },
      );
    },
  );

  it(
    "a listener changes nothing: a guard of a bucket and a breaker answers, refuses and records alike with one and without",
    { timeout: 60_000 },
    async () => {
      // The same traffic through two guards on twin breakers and buckets, one of them with a
      // listener: reporting must not move a decision, a draw or a record.
      type Kind = "answer" | "fail" | "throw" | "refuse" | "value";
      const call = fc.record({
        at: fc.integer({ min: 0, max: 400 }),
        kind: fc.constantFrom<Kind>("answer", "fail", "throw", "refuse", "value"),
        after: fc.integer({ min: 0, max: 80 }),
      });
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 0, max: 2 }),
          fc.constantFrom(20, 1_000),
          fc.array(call, { minLength: 1, maxLength: 40 }),
          async (protection, rate, calls) => {
            const s = new Scheduler(t0);
            const twin = (listen: boolean) => {
              let seed = 7;
              const breaker = new Breaker({ protection, probe: 100 }, t0);
              const bucket = new Bucket(rate, { burst: 3, now: t0 });
              const options: GuardOptions<string> = {
                clock: s.now,
                timers: s,
                // The same draws in the same order for both, as long as they decide alike.
                random: () => (seed = (seed * 48_271) % 2_147_483_647) / 2_147_483_647,
                breaker,
                bucket,
                onOutcome: listen ? () => undefined : undefined,
              };
              const g = guard((_, c: (typeof calls)[number]) => {
                if (c.kind === "throw") throw new Error("thrown");
                if (c.kind === "value") return "value";
                if (c.kind === "refuse") return Promise.reject(new Refusal("quota", 5));
                return new Promise<string>((resolve, reject) =>
                  s.set(() => (c.kind === "answer" ? resolve("ok") : reject(new Error("failed"))), c.after),
                );
              }, options);
              return { g, breaker, bucket, answers: [] as string[], ratios: [] as number[] };
            };
            const pair = [twin(false), twin(true)];
            const done: Promise<unknown>[] = [];
            for (const c of calls)
              s.set(() => {
                for (const t of pair) {
                  t.ratios.push(t.breaker.ratio(s.now()));
                  done.push(
                    t.g(c).then(
                      (v) => void t.answers.push(v),
                      (e: unknown) =>
                        void t.answers.push(isRefusal(e) ? `refused ${e.kind} ${e.retryAfter}` : String(e)),
                    ),
                  );
                }
              }, c.at);
            await s.run();
            await Promise.all(done);
            const [quiet, heard] = pair;
            expect(quiet.answers).toEqual(heard.answers);
            expect(quiet.ratios).toEqual(heard.ratios);
            expect(quiet.answers).toHaveLength(calls.length);
            expect(quiet.breaker.ratio(s.now())).toBe(heard.breaker.ratio(s.now()));
            expect(quiet.bucket.next(s.now(), 3)).toBe(heard.bucket.next(s.now(), 3));
          },
        ),
        { numRuns: 150, interruptAfterTimeLimit: 20_000 },
      );
    },
  );
});
