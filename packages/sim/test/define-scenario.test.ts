// defineScenario and knobArbitrary refuse what they cannot use (a definition, a knob, an outcome,
// a plot), naming the path the user typed and the value; the catalogue's knobs cannot be changed.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { catalogue, defineScenario, knobArbitrary } from "@tideward/sim";
import type { Knob } from "@tideward/sim";

describe("defineScenario and knobArbitrary refuse what they cannot use, naming it", () => {
  const outcome = { runs: [], figures: {}, report: "" };
  // A run of two buckets, as far as an outcome's check looks, and a plot over it.
  const probed = { ...outcome, runs: [{ label: "a", duration: 2, summary: {}, series: { t: [0, 1] } }] };
  const plot = { id: "tokens", title: "Tokens", unit: "tokens/s", runs: [[1, null]] };
  const rate: Knob = { kind: "number", name: "rate", label: "Rate", doc: "", default: 1, min: 0, max: 2, step: 0.1 };
  const define = (over: Record<string, unknown>) =>
    defineScenario({ name: "probe", title: "", summary: "", knobs: [rate], run: () => outcome, ...over });

  it.each<[string, () => unknown, RegExp]>([
    [
      "null",
      () => defineScenario(null as never),
      /^defineScenario definition must be an object with name, title, summary, knobs and run, got null$/,
    ],
    ["no name", () => define({ name: undefined }), /^defineScenario name must be non-empty text, got undefined$/],
    ["a title that is not text", () => define({ title: 5 }), /^scenario probe title must be text, got 5$/],
    ["no run", () => define({ run: undefined }), /^scenario probe run must be a function, got undefined$/],
    [
      "knobs not an array",
      () => define({ knobs: {} }),
      /^scenario probe knobs must be an array of knobs, got \[object Object\]$/,
    ],
    ["a null knob", () => define({ knobs: [rate, null] }), /^scenario probe knobs\[1\] must be a knob .+, got null$/],
    [
      "a hole for a knob",
      () => define({ knobs: Object.assign(new Array<Knob>(3), { 0: rate, 2: rate }) }),
      /^scenario probe knobs\[1\] must be a knob .+, got undefined$/,
    ],
    [
      "an unknown kind",
      () => define({ knobs: [{ ...rate, kind: "slider" }] }),
      /^scenario probe knobs\[0\] kind must be "number", "integer", "select" or "boolean", got "slider"$/,
    ],
    [
      "a knob without a name",
      () => define({ knobs: [{ ...rate, name: 7 }] }),
      /^scenario probe knobs\[0\] name must be non-empty text, got 7$/,
    ],
    ["two knobs of one name", () => define({ knobs: [rate, rate] }), /^scenario probe has two knobs named "rate"$/],
    [
      "a step of 0",
      () => define({ knobs: [{ ...rate, step: 0 }] }),
      /^scenario probe knob rate step must be above 0, got 0$/,
    ],
    [
      "a NaN bound",
      () => define({ knobs: [{ ...rate, max: NaN }] }),
      /^scenario probe knob rate max must be a finite number, got NaN$/,
    ],
    [
      "an integer knob's fraction",
      () => define({ knobs: [{ ...rate, kind: "integer", default: 1.5 }] }),
      /^scenario probe knob rate default must be a whole number, got 1\.5$/,
    ],
    [
      "select options null",
      () => define({ knobs: [{ kind: "select", name: "mode", label: "", doc: "", default: "a", options: null }] }),
      /^scenario probe knob mode options must be a non-empty array of \{ value, label \}, got null$/,
    ],
    [
      "a select of 100 000 options",
      () =>
        define({
          knobs: [
            {
              kind: "select",
              name: "mode",
              label: "",
              doc: "",
              default: "0",
              options: Array.from({ length: 100_000 }, (_, i) => ({ value: String(i), label: String(i) })),
            },
          ],
        }),
      /^scenario probe knob mode options must be at most 1024 \(a list to pick from\), got 100000$/,
    ],
    [
      "a select option not text",
      () =>
        define({
          knobs: [
            { kind: "select", name: "mode", label: "", doc: "", default: "a", options: [{ value: 1, label: "one" }] },
          ],
        }),
      /^scenario probe knob mode options\[0\] must be \{ value, label \}, both text, got \[object Object\]$/,
    ],
    [
      "a boolean knob's default",
      () => define({ knobs: [{ kind: "boolean", name: "on", label: "", doc: "", default: "yes" }] }),
      /^scenario probe knob on default must be true or false, got "yes"$/,
    ],
    [
      "a run that returns nothing",
      () => define({ run: () => undefined }).run(),
      /^scenario probe run must return an outcome \(\{ runs, figures, report \}\), got undefined$/,
    ],
    [
      "a run whose runs are not an array",
      () => define({ run: () => ({ ...outcome, runs: null }) }).run(),
      /^scenario probe run outcome runs must be an array of runs, got null$/,
    ],
    [
      "a run without a report",
      () => define({ run: () => ({ ...outcome, report: undefined }) }).run(),
      /^scenario probe run outcome report must be text, got undefined$/,
    ],
    [
      "plots that are not an array",
      () => define({ run: () => ({ ...outcome, plots: {} }) }).run(),
      /^scenario probe run outcome plots must be an array of plots, got \[object Object\]$/,
    ],
    [
      "a plot without a unit",
      () => define({ run: () => ({ ...probed, plots: [{ ...plot, unit: undefined }] }) }).run(),
      /^scenario probe run outcome plots\[0\] unit must be text, got undefined$/,
    ],
    [
      "a plot with a line for a run that is not there",
      () =>
        define({
          run: () => ({
            ...probed,
            plots: [
              {
                ...plot,
                runs: [
                  [1, 2],
                  [3, 4],
                ],
              },
            ],
          }),
        }).run(),
      /^scenario probe run outcome plots\[0\] runs must be an array of 1 lines, one a run, got \[object Array\]$/,
    ],
    [
      "a plot line shorter than its run's series",
      () => define({ run: () => ({ ...probed, plots: [{ ...plot, runs: [[1]] }] }) }).run(),
      /^scenario probe run outcome plots\[0\] runs\[0\] must be an array of 2 values, one a bucket of the run, got \[object Array\]$/,
    ],
    [
      "a plot value that is not a number",
      () => define({ run: () => ({ ...probed, plots: [{ ...plot, runs: [[1, Number.NaN]] }] }) }).run(),
      /^scenario probe run outcome plots\[0\] runs\[0\]\[1\] must be a finite number or null, got NaN$/,
    ],
    [
      "a plot's mark without a value",
      () => define({ run: () => ({ ...probed, plots: [{ ...plot, marks: [{ label: "cap" }] }] }) }).run(),
      /^scenario probe run outcome plots\[0\] marks\[0\] value must be a finite number, got undefined$/,
    ],
    [
      "two plots of one name",
      () => define({ run: () => ({ ...probed, plots: [plot, plot] }) }).run(),
      /^scenario probe run outcome has two plots named "tokens"$/,
    ],
    [
      "knobArbitrary without fast-check",
      () => knobArbitrary(null as never, [rate]),
      /^knobArbitrary fc must be fast-check itself \(its default export\), got null$/,
    ],
    [
      "knobArbitrary with half of fast-check",
      () => knobArbitrary({ integer: () => 0 } as never, [rate]),
      /^knobArbitrary fc must be fast-check itself \(its default export\): its double is undefined$/,
    ],
    [
      "knobArbitrary without knobs",
      () => knobArbitrary(fc, undefined as never),
      /^knobArbitrary knobs must be an array of knobs, got undefined$/,
    ],
    [
      "knobArbitrary with a null knob",
      () => knobArbitrary(fc, [null as never]),
      /^knobArbitrary knobs\[0\] must be a knob .+, got null$/,
    ],
    [
      "a knob whose min is above its max",
      () => define({ knobs: [{ ...rate, min: 3, max: 1 }] }),
      /^scenario probe knob rate min \(3\) must be at most its max \(1\)$/,
    ],
    [
      "knobArbitrary with a knob whose min is above its max",
      () => knobArbitrary(fc, [{ ...rate, kind: "integer", min: 3, max: 1 }]),
      /^knobArbitrary knob rate min \(3\) must be at most its max \(1\)$/,
    ],
  ])("%s", (_, act, message) => {
    expect(act).toThrow(message);
  });

  it.each(catalogue.map((s) => [s.name, s] as const))(
    "%s: its knobs cannot be changed, so its checks hold (a max raised to 9 000 let 9 000 attempts through)",
    (_, s) => {
      for (const k of s.knobs) {
        expect(Object.isFrozen(k)).toBe(true);
        if (k.kind === "select") {
          expect(Object.isFrozen(k.options)).toBe(true);
          for (const o of k.options) expect(Object.isFrozen(o)).toBe(true);
        }
        if (k.kind !== "number" && k.kind !== "integer") continue;
        if (k.option !== undefined) expect(Object.isFrozen(k.option)).toBe(true);
        expect(() => ((k as { max: number }).max = k.max + 9_000)).toThrow(TypeError);
        expect(() => ((k as { kind: string }).kind = "number")).toThrow(TypeError);
        expect(() => s.resolve({ [k.name]: k.max + k.step })).toThrow(RangeError);
        if (k.kind === "integer") expect(() => s.resolve({ [k.name]: k.min + 0.5 })).toThrow(/must be a whole number/);
      }
    },
  );

  it("a result carries the plots its run gave, and has no plots field when it gave none", () => {
    expect(define({ run: () => ({ ...probed, plots: [plot] }) }).run().plots).toEqual([plot]);
    expect(Object.keys(define({ run: () => probed }).run())).not.toContain("plots");
  });

  it("a knob changed in its definition after defineScenario changes nothing", () => {
    const attempts = {
      kind: "integer" as string,
      name: "attempts",
      label: "",
      doc: "",
      default: 2,
      min: 1,
      max: 3,
      step: 1,
      option: { path: "retry.attempts" },
    };
    const s = define({ knobs: [attempts] });
    attempts.max = 9_000;
    attempts.kind = "number";
    attempts.option.path = "timeout";
    expect(() => s.resolve({ attempts: 9_000 })).toThrow(/attempts must be between 1 and 3, got 9000/);
    expect(() => s.resolve({ attempts: 500_000_000.5 })).toThrow(/attempts must be a whole number, got 500000000\.5/);
    expect(s.knobs[0]).toMatchObject({ kind: "integer", max: 3, option: { path: "retry.attempts" } });
  });

  it("a well-formed definition runs, its body called on the definition, its knobs drawn by knobArbitrary", () => {
    const definition = {
      name: "probe",
      title: "Probe",
      summary: "",
      knobs: [rate],
      tag: "mine",
      run(this: { tag: string }, p: { rate: number }) {
        return { ...outcome, figures: { rate: p.rate }, report: this.tag };
      },
    };
    const r = defineScenario(definition as never).run({ rate: 1.5 });
    expect([r.figures.rate, r.report]).toEqual([1.5, "mine"]);
    for (const p of fc.sample(knobArbitrary(fc, [rate]), 3)) expect(Object.keys(p as object)).toEqual(["rate"]);
  });
});
