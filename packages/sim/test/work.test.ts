// A scenario's work is estimated from its knobs before it starts, bounded (maxCalls), reported
// as it goes (onProgress) and stoppable (signal), so a page cannot ask for an hour of work by
// moving sliders, and can show how far a long run has come and stop it.
import { describe, expect, it } from "vitest";
import { MAX_CALLS, breakerOutage, catalogue, herdRecovery, retryAmplification } from "@tideward/sim";
import type { Progress, Scenario } from "@tideward/sim";

/** Every knob at its maximum. */
const maximal = (s: Scenario) =>
  Object.fromEntries(s.knobs.flatMap((k) => (k.kind === "number" || k.kind === "integer" ? [[k.name, k.max]] : [])));

describe("work", () => {
  it.each(catalogue.map((s) => [s.name, s] as const))(
    "%s: its estimate is the calls its runs offer (within a fifth), told as they go",
    (_, s) => {
      const seen: Progress[] = [];
      const params = s.name === "breaker-outage" ? { spreadSeeds: 1 } : {};
      s.run(params, { onProgress: (p) => seen.push(p) });
      const work = s.work(params);
      expect(work).toBeDefined();
      const done = seen.at(-1)?.done ?? 0;
      expect(done / (work?.calls ?? 1)).toBeGreaterThan(0.8);
      expect(done / (work?.calls ?? 1)).toBeLessThan(1.25);
      expect(seen[0]).toEqual({ done: 0, total: work?.calls });
      seen.forEach((p, i) => i > 0 && expect(p.done).toBeGreaterThanOrEqual(seen[i - 1].done));
    },
  );

  it("breaker-outage at every knob's maximum, with 20 seeds of spread, is refused before it starts, naming its knobs", () => {
    const t0 = performance.now();
    expect(() => breakerOutage.run(maximal(breakerOutage))).toThrow(
      /^scenario breaker-outage would offer about [\d ]+ calls over its runs \(rate 5000, duration 3600, spreadSeeds 20, outageTo 3600\), past maxCalls 20 000 000 \(the default\): lower rate or duration or spreadSeeds or outageTo, or raise maxCalls \(Infinity lifts the bound\)$/,
    );
    expect(performance.now() - t0).toBeLessThan(1_000);
    expect(breakerOutage.work(maximal(breakerOutage))?.calls).toBeGreaterThan(MAX_CALLS * 100);
  });

  it("at every knob's maximum, each scenario past the bound is refused at once; the herds alone stay within it", () => {
    const within: string[] = [];
    for (const s of catalogue) {
      if ((s.work(maximal(s))?.calls ?? 0) <= MAX_CALLS) {
        within.push(s.name);
        continue;
      }
      const t0 = performance.now();
      expect(() => s.run(maximal(s), { onProgress: () => expect.unreachable("no run starts") })).toThrow(
        new RegExp(`^scenario ${s.name} would offer about [\\d ]+ calls .* past maxCalls 20 000 000 \\(the default\\)`),
      );
      expect(performance.now() - t0).toBeLessThan(1_000);
    }
    // 100 000 clients in five runs, 1 000 in six over 50 seeds: seconds of work, not hours.
    expect(within).toEqual(["herd-backoff", "contention-backoff"]);
  });

  it("maxCalls lowers or lifts the bound", () => {
    const calls = retryAmplification.work()?.calls ?? 0;
    expect(() => retryAmplification.run({}, { maxCalls: calls - 1 })).toThrow(
      /^scenario retry-amplification would offer about 18 000 calls over its runs \(rate 100, duration 60\), past maxCalls 17 999: lower rate or duration/,
    );
    expect(retryAmplification.run({}, { maxCalls: calls }).runs).toHaveLength(3);
    expect(retryAmplification.run({ duration: 5 }, { maxCalls: Infinity }).runs).toHaveLength(3);
  });

  it("an abort stops the run where the progress is told, with the signal's reason, and nothing of it is left", () => {
    const stop = new AbortController();
    const reason = new Error("enough");
    let told = 0;
    expect(() =>
      herdRecovery.run(
        {},
        {
          signal: stop.signal,
          onProgress: (p) => {
            told = p.done;
            if (p.done >= 16_384) stop.abort(reason);
          },
        },
      ),
    ).toThrow(reason);
    expect(told).toBe(16_384);
    // Already aborted: nothing runs.
    expect(() => herdRecovery.run({}, { signal: stop.signal, onProgress: () => {} })).toThrow(reason);
    // And the next run is as if the stopped ones had never been.
    expect(JSON.stringify(herdRecovery.run())).toBe(JSON.stringify(herdRecovery.run()));
  });

  it("a listener that throws stops the run with what it threw", () => {
    const oops = new RangeError("listener");
    expect(() =>
      retryAmplification.run(
        {},
        {
          onProgress: (p) => {
            if (p.done > 0) throw oops;
          },
        },
      ),
    ).toThrow(oops);
  });

  it.each<[string, Record<string, unknown>, RegExp]>([
    ["maxCalls 0", { maxCalls: 0 }, /^scenario retry-amplification maxCalls must be above 0, got 0$/],
    [
      "maxCalls NaN",
      { maxCalls: Number.NaN },
      /^scenario retry-amplification maxCalls must be a finite number, got NaN$/,
    ],
    [
      "onProgress 5",
      { onProgress: 5 },
      /^scenario retry-amplification run onProgress must be a function, got number 5$/,
    ],
    [
      "signal {}",
      { signal: {} },
      /^scenario retry-amplification run signal must be an AbortSignal, got \[object Object\]$/,
    ],
    ["a misspelt option", { onProgres: () => {} }, /did you mean "onProgress"/],
  ])("refuses %s, naming it", (_, options, message) => {
    expect(() => retryAmplification.run({}, options)).toThrow(message);
  });
});
