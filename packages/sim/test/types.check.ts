// Type-level tests of the public API: compiled by `tsc -p .` (typecheck), never run. An
// `@ts-expect-error` that stops being an error fails the typecheck.
import { catalogue, policy, simulate, sweep, traffic } from "@tideward/sim";
import type {
  Adapter,
  Envelope,
  Knob,
  KnobValue,
  Params,
  PolicySpec,
  RunResult,
  ScenarioResult,
  SweepResult,
} from "@tideward/sim";

// A result is plain JSON all the way down: numbers, strings, booleans, null, arrays and records
// (no functions, no typed arrays, no undefined), so it crosses postMessage and JSON.stringify.
type IsJson<T> = T extends number | string | boolean | null
  ? true
  : T extends readonly (infer U)[]
    ? IsJson<U>
    : T extends (...args: never[]) => unknown
      ? false
      : T extends ArrayBufferView
        ? false
        : T extends object
          ? { [K in keyof T]-?: IsJson<Exclude<T[K], undefined>> }[keyof T] extends true
            ? true
            : false
          : false;
const runIsJson: IsJson<RunResult> = true;
const resultIsJson: IsJson<ScenarioResult> = true;
const sweepIsJson: IsJson<SweepResult> = true;
const knobIsJson: IsJson<Knob> = true;
void [runIsJson, resultIsJson, sweepIsJson, knobIsJson];
// @ts-expect-error a function is not JSON: the check can fail
const notJson: IsJson<{ f: () => void }> = true;
void notJson;
const p: Params = { seed: 1, rate: 10, order: "atomic", align: true };
const v: KnobValue = p.seed;
void v;

// A policy of one's own needs only a name, a side, a reason, admit and settle.
const mine: PolicySpec = {
  name: "mine",
  create: (context): Adapter => ({
    name: "mine",
    side: "server",
    reason: "mine",
    admit: (now, key, cost) => (now + key + cost + context.cpu(now) > 0 ? true : undefined),
    settle: () => {},
  }),
};
void simulate({ duration: 1, traffic: traffic.constant({ rate: 1 }), policies: [mine, policy.bucket(1)] });

// @ts-expect-error a side is client or server
const wrong: Adapter = { name: "x", side: "middle", reason: "x", admit: () => true, settle: () => {} };
void wrong;

// @ts-expect-error an envelope has a kind
const e: Envelope = { label: "x", rate: 1, burst: 1 };
void e;

// @ts-expect-error duration is required
void simulate({ traffic: traffic.constant({ rate: 1 }) });

// A sweep takes a scenario from the catalogue and a knob by name.
void sweep(catalogue[0], "rate");
