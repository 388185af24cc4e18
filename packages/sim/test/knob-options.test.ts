// A knob's `option` names a real @tideward/guard option, in the guard's units: the guard (which
// refuses an option name it does not know) takes the knob's default there, and a value it cannot
// take there is refused naming that path and the unit the knob's scale converts to.
import { admit, guard } from "@tideward/guard";
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { catalogue, defineScenario, knobArbitrary, seedKnob } from "@tideward/sim";
import type { GuardOption, NumberKnob } from "@tideward/sim";

/** `{ a: { b: value } }` for the path `"a.b"`. */
function nest(path: string, value: number): Record<string, unknown> {
  return path
    .split(".")
    .reduceRight<Record<string, unknown>>(
      (inner, field, i, all) => ({ [field]: i === all.length - 1 ? value : inner }),
      {},
    );
}

/** Builds what `o.of` builds from `options`; a shedder needs the load it weighs. */
function build(o: GuardOption, options: Record<string, unknown>): void {
  if (o.of === "admit") admit({ load: () => 0, ...options });
  else guard(() => 0, options);
}

/** The unit the guard names in its messages for a knob's unit times its scale. */
const GUARD_UNIT: Record<string, string> = {
  "s×1000": "ms",
  "ms×1": "ms",
  "calls/s×1": "tokens per second",
  "‰×1": "thousandths",
};

const withOption = catalogue.flatMap((s) =>
  s.knobs.flatMap((k) =>
    (k.kind === "number" || k.kind === "integer") && k.option !== undefined
      ? [{ scenario: s.name, knob: k, option: k.option }]
      : [],
  ),
);

describe("knobs that are guard options", () => {
  it("are found in the catalogue: timeouts, deadlines, retries, budgets, a bucket and a shedder", () => {
    const paths = new Set(withOption.map((x) => `${x.option.of ?? "guard"} ${x.option.path}`));
    expect([...paths].sort()).toEqual([
      "admit shedder.cpu",
      "guard bucket.rate",
      "guard budget.ratio",
      "guard deadline",
      "guard retry.attempts",
      "guard retry.base",
      "guard retry.cap",
      "guard timeout",
    ]);
  });

  it.each(withOption.map((x) => [`${x.scenario} ${x.knob.name}`, x] as const))(
    "%s: the guard takes its default at its path, and refuses NaN there naming the path in the guard's unit",
    (_, { knob, option }) => {
      const value = knob.default * (option.scale ?? 1) + (option.offset ?? 0);
      expect(() => build(option, nest(option.path, value))).not.toThrow();
      const field = option.path.split(".").at(-1) ?? "";
      const unit = GUARD_UNIT[`${knob.unit ?? ""}×${option.scale ?? 1}`];
      let message = "";
      try {
        build(option, nest(option.path, Number.NaN));
      } catch (e) {
        message = (e as Error).message;
      }
      // The guard's and admit's messages name the whole path, each under its own name.
      expect(message).toContain(`${option.of ?? "guard"} ${option.path}`);
      if (unit === undefined) expect(message).not.toMatch(/\(.*\) must/);
      else expect(message).toContain(`${field} (${unit})`);
    },
  );

  it.each(catalogue.filter((s) => withOption.some((x) => x.scenario === s.name)).map((s) => [s.name, s] as const))(
    "%s: over every knob's range, its options are what guard() and admit() take, each knob's value at its path",
    (_, s) => {
      fc.assert(
        fc.property(knobArbitrary(fc, s.knobs) as fc.Arbitrary<Record<string, number>>, (params) => {
          const o = s.options(params);
          // Plain JSON, as a page copies it.
          expect(JSON.parse(JSON.stringify(o))).toEqual(JSON.parse(JSON.stringify({ ...o })));
          expect(() => guard(() => 0, o.guard ?? {})).not.toThrow();
          expect(() => admit({ load: () => 0, ...o.admit })).not.toThrow();
          for (const k of s.knobs) {
            if ((k.kind !== "number" && k.kind !== "integer") || k.option === undefined) continue;
            const at = k.option.path
              .split(".")
              .reduce<unknown>((r, f) => (r as Record<string, unknown>)[f], o[k.option.of ?? "guard"]);
            const value = Number((params[k.name] * (k.option.scale ?? 1) + (k.option.offset ?? 0)).toPrecision(12));
            // The backoff scenarios raise a cap below the base to the base, as their runs do.
            if (k.option.path === "retry.cap")
              expect(at).toBe(Number(Math.max(params.cap, params.base).toPrecision(12)));
            else expect(at).toBe(value);
          }
        }),
        { numRuns: 300 },
      );
    },
  );

  it("a definition's options are laid over its knobs', and refused by name when they are not options", () => {
    const define = (options: unknown) =>
      defineScenario({
        name: "probe",
        title: "Probe",
        summary: "",
        knobs: [
          seedKnob,
          {
            kind: "number",
            name: "t",
            label: "t",
            doc: "t",
            default: 1,
            min: 0,
            max: 2,
            step: 1,
            option: { path: "retry.base" },
          },
        ],
        run: () => ({ runs: [], figures: {}, report: "" }),
        ...(options === undefined ? {} : { options }),
      } as never);
    expect(define(undefined).options({ t: 2 })).toEqual({ guard: { retry: { base: 2 } } });
    expect(define(() => ({ guard: { retry: { cap: 5 } }, admit: { gate: { limit: 3 } } })).options({ t: 2 })).toEqual({
      guard: { retry: { base: 2, cap: 5 } },
      admit: { gate: { limit: 3 } },
    });
    expect(() => define(5)).toThrow(/^scenario probe options must be a function, got number 5$/);
    expect(() => define(() => null).options()).toThrow(
      /^scenario probe options must return \{ guard\?, admit\? \}, each a record of options, got null$/,
    );
    expect(() => define(() => ({ guard: 1 })).options()).toThrow(
      /^scenario probe options guard must be a record of options, got 1$/,
    );
    expect(() => define(() => ({ server: {} })).options()).toThrow(/scenario probe options has no option "server"/);
  });

  it("a definition whose option is not one refuses to build, naming the knob", () => {
    const define = (option: unknown) =>
      defineScenario({
        name: "probe",
        title: "Probe",
        summary: "",
        knobs: [
          seedKnob,
          {
            kind: "number",
            name: "t",
            label: "t",
            doc: "t",
            default: 1,
            min: 0,
            max: 2,
            step: 1,
            option,
          } as NumberKnob,
        ],
        run: () => ({ runs: [], figures: {}, report: "" }),
      });
    expect(() => define({ path: "retry.attempts", offset: 1 })).not.toThrow();
    expect(() => define({ path: "retry..attempts" })).toThrow(/probe knob t option.path must be field names/);
    expect(() => define({ path: "timeout", scale: 0 })).toThrow(/probe knob t option.scale must not be 0/);
    expect(() => define({ path: "timeout", scale: Number.NaN })).toThrow(/option.scale must be a finite number/);
    expect(() => define({ path: "timeout", of: "server" })).toThrow(/option.of must be "guard" or "admit"/);
    expect(() => define({ path: "timeout", unit: "s" })).toThrow(/option has no option "unit"/);
  });
});
