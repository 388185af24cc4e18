// A guarded client against a flaky local server, watched the way a service is watched: through
// OpenTelemetry metrics scraped by Prometheus. A real node:http server on loopback answers, then
// fails every request for three seconds (an outage), then recovers. The client offers a call
// every 10 ms through a guard with a breaker (a two-second memory) reported by @tideward/otel on
// @opentelemetry/sdk-metrics; the real @opentelemetry/exporter-prometheus serves /metrics on a
// second loopback port, and every two seconds this program lets the calls in flight settle,
// scrapes it over HTTP, as Prometheus would, and prints the lines that tell the story: calls by
// outcome, the breaker's refusals, and its drop ratio rising in the outage and falling back to 0
// after it. About eight seconds.
import { createServer } from "node:http";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { PrometheusExporter } from "@opentelemetry/exporter-prometheus";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import { isRefusal } from "@tideward/guard";
import { instrumentGuard } from "@tideward/otel";

/** One phase of the run: whether the server fails, and for how long (ms). */
interface Phase {
  readonly name: string;
  readonly fail: boolean;
  readonly ms: number;
}

const PHASES: readonly Phase[] = [
  { name: "healthy", fail: false, ms: 2_000 },
  { name: "outage", fail: true, ms: 3_000 },
  { name: "recovered", fail: false, ms: 3_000 },
];

/** How often /metrics is scraped and printed (ms). */
const EVERY = 2_000;

/** The metric families printed: the rest (durations, attempts) are served too, but long. */
const SHOWN = /^tideward_(guard_calls_total|guard_refusals_total|breaker_drop_ratio)\{/;

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** What one call ended as, counted by the client itself, to print next to the metrics. */
interface Seen {
  ok: number;
  failed: number;
  refused: number;
}

/**
 * Runs the three phases and returns every line it printed. `print` is handed each line as it
 * is made, so that the command line shows the scrapes as they happen.
 */
export async function main(print: (line: string) => void = () => undefined): Promise<string[]> {
  const lines: string[] = [];
  const say = (line: string) => {
    lines.push(line);
    print(line);
  };
  let failing = false;
  const backend = createServer((_req, res) => {
    res.writeHead(failing ? 503 : 200, { "content-type": "text/plain" });
    res.end(failing ? "down" : "ok");
  });
  // The exporter's own handler, on a port of our choosing (0: a free one).
  const exporter = new PrometheusExporter({
    preventServerStart: true,
    withoutScopeInfo: true,
    withoutTargetInfo: true,
  });
  const scrapes = createServer((req, res) => exporter.getMetricsRequestHandler(req, res));
  const provider = new MeterProvider({ readers: [exporter] });
  const url = await listen(backend);
  const metricsUrl = `${await listen(scrapes)}/metrics`;

  const call = instrumentGuard(
    async ({ signal }) => {
      const res = await fetch(url, { signal });
      await res.text();
      if (res.status >= 500) throw new Error(`HTTP ${res.status}`);
    },
    { breaker: { window: 2_000, size: 10, probe: 200 }, timeout: 1_000 },
    { meter: provider.getMeter("example"), name: "backend" },
  );
  const seen: Seen = { ok: 0, failed: 0, refused: 0 };
  const pending: Promise<void>[] = [];
  const scrape = async (at: number, phase: string) => {
    // The calls in flight settle first: one that ended while /metrics was being read would be
    // counted by the client and not yet in the scrape (or the other way round).
    await Promise.all(pending);
    const text = await (await fetch(metricsUrl)).text();
    say(
      `── ${(at / 1000).toFixed(0)} s, ${phase}: the client saw ${seen.ok} ok, ${seen.failed} failed, ${seen.refused} refused; GET /metrics says`,
    );
    for (const line of text.split("\n").filter((l) => SHOWN.test(l))) say(`   ${line}`);
  };

  say(
    `A call every 10 ms through a guard with a breaker to ${url}, which fails from 2 s to 5 s; /metrics at ${metricsUrl}`,
  );
  const start = performance.now();
  let nextScrape = EVERY;
  try {
    let end = 0;
    for (const phase of PHASES) {
      failing = phase.fail;
      // Each phase ends on the schedule printed above, however late a scrape ran in it: on a loaded
      // machine, phases timed from where the last one ended drifted and a scrape meant for the
      // recovery fell in the outage.
      end += phase.ms;
      while (performance.now() - start < end) {
        pending.push(
          call().then(
            () => void seen.ok++,
            (e: unknown) => void (isRefusal(e) ? seen.refused++ : seen.failed++),
          ),
        );
        await sleep(10);
        const at = performance.now() - start;
        if (at >= nextScrape) {
          await scrape(nextScrape, phase.name);
          nextScrape += EVERY;
        }
      }
    }
    await scrape(performance.now() - start, "the end");
  } finally {
    backend.closeAllConnections();
    scrapes.closeAllConnections();
    await Promise.all([new Promise((r) => backend.close(r)), new Promise((r) => scrapes.close(r))]);
    await provider.shutdown();
  }
  return lines;
}
