// The simulation runs here, off the page's thread, so that a long run never freezes a knob.
import type { RunAnswer, RunRequest } from "./protocol.ts";
import { runs } from "./runs.ts";

interface WorkerScope {
  onmessage: ((event: MessageEvent<RunRequest>) => void) | null;
  postMessage(message: RunAnswer): void;
}

const scope = self as unknown as WorkerScope;

scope.onmessage = ({ data }) => {
  const started = performance.now();
  const run = runs[data.scenario];
  try {
    if (run === undefined) throw new Error(`no scenario named ${JSON.stringify(data.scenario)}`);
    const outcome = run(data.params);
    scope.postMessage({ seq: data.seq, ok: true, outcome, elapsed: performance.now() - started });
  } catch (error) {
    const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    scope.postMessage({ seq: data.seq, ok: false, error: text, elapsed: performance.now() - started });
  }
};
