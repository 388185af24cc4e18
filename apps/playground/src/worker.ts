// The simulation runs here, off the page's thread, so that a long run never freezes a knob. The
// tuner has a worker of its own, which it ends to cancel a sweep; the same module serves both.
import { scenario } from "@tideward/sim";
import type {
  CatalogueAnswer,
  CatalogueRequest,
  ProgressAnswer,
  RunAnswer,
  RunRequest,
  SweepAnswer,
  SweepRequest,
} from "./protocol.ts";
import { runs } from "./runs.ts";
import { START } from "./runs/sim.ts";
import { simMetas } from "./sim-catalogue.ts";
import { pointOf } from "./tuner-model.ts";

interface WorkerScope {
  onmessage: ((event: MessageEvent<RunRequest | SweepRequest | CatalogueRequest>) => void) | null;
  postMessage(message: RunAnswer | SweepAnswer | CatalogueAnswer | ProgressAnswer): void;
}

const scope = self as unknown as WorkerScope;

const describe = (error: unknown): string =>
  error instanceof Error ? `${error.name}: ${error.message}` : String(error);

function sweep(data: SweepRequest): void {
  const s = scenario(data.of);
  data.points.forEach((params, index) => {
    try {
      if (s === undefined) throw new Error(`no scenario named ${JSON.stringify(data.of)}`);
      scope.postMessage({ kind: "point", index, point: pointOf(params, s.run(params, { start: START })) });
    } catch (error) {
      scope.postMessage({ kind: "error", index, error: describe(error) });
    }
  });
}

scope.onmessage = ({ data }) => {
  if ("kind" in data) {
    if (data.kind === "catalogue") scope.postMessage({ kind: "catalogue", scenarios: simMetas });
    else sweep(data);
    return;
  }
  const started = performance.now();
  const run = runs[data.scenario];
  try {
    if (run === undefined) throw new Error(`no scenario named ${JSON.stringify(data.scenario)}`);
    // The page shows how far a long run has got (the simulator tells every 16 384 calls offered).
    const outcome = run(data.params, ({ done, total }) =>
      scope.postMessage({ kind: "progress", seq: data.seq, done, total }),
    );
    scope.postMessage({ seq: data.seq, ok: true, outcome, elapsed: performance.now() - started });
  } catch (error) {
    scope.postMessage({ seq: data.seq, ok: false, error: describe(error), elapsed: performance.now() - started });
  }
};
