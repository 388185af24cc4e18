// What a Prometheus server scrapes: the real @opentelemetry/exporter-prometheus serving its own
// /metrics on a free loopback port, read over HTTP and parsed from the text exposition format.
import { PrometheusExporter } from "@opentelemetry/exporter-prometheus";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import { Breaker } from "@tideward/breaker";
import type { Verdict } from "@tideward/guard";
import { QuotaEngine, QuotaKey, perSecond } from "@tideward/quota-engine";
import { freePort } from "@tideward/redis/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DURATION_BUCKETS, instrumentAdmit, instrumentGuard, instrumentQuota } from "../src/index";
import { get, startFlaky } from "./support/flaky";
import type { Flaky } from "./support/flaky";

/** One sample line: its metric name, labels and value. */
interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** The text exposition format, as Prometheus reads it: `# TYPE` lines and samples. */
function parse(text: string): { types: Map<string, string>; units: Map<string, string>; samples: Sample[] } {
  const types = new Map<string, string>();
  const units = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type !== null) types.set(type[1] ?? "", type[2] ?? "");
    const unit = /^# UNIT (\S+) (\S+)$/.exec(line);
    if (unit !== null) units.set(unit[1] ?? "", unit[2] ?? "");
    if (line === "" || line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (m === null) throw new Error(`not a sample: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[l[1] ?? ""] = l[2] ?? "";
    samples.push({ name: m[1] ?? "", labels, value: Number(m[3]) });
  }
  return { types, units, samples };
}

let flaky: Flaky;
let exporter: PrometheusExporter;
let port = 0;
beforeAll(async () => {
  flaky = await startFlaky((n) => (n % 3 === 1 ? { status: 503 } : { status: 200 }));
  port = await freePort();
  exporter = new PrometheusExporter({ host: "127.0.0.1", port, preventServerStart: true });
  await exporter.startServer();
});
afterAll(async () => {
  await exporter.shutdown();
  await flaky.close();
});

describe("scraped by Prometheus", () => {
  it("serves every series under its Prometheus name, with counts that match what happened", async () => {
    const provider = new MeterProvider({ readers: [exporter] });
    const meter = provider.getMeter("tideward-test");
    const breaker = new Breaker({}, Date.now());
    const call = instrumentGuard(
      ({ signal }) => get(`${flaky.url}/`, signal),
      {
        retry: { attempts: 3, base: 1, cap: 1 },
        budget: false,
        breaker,
      },
      { meter, name: "api" },
    );
    let ok = 0;
    for (let i = 0; i < 9; i++) await call().then(() => ok++);
    const admission = instrumentAdmit(
      { limits: [{ name: "burst", quota: 3, window: 60_000 }] },
      { meter, name: "web" },
    );
    const statuses = Array.from({ length: 5 }, () => (admission.check("203.0.113.9") as Verdict).status);
    const engine = new QuotaEngine();
    engine.addLimit(perSecond("user", 1));
    const quota = instrumentQuota(engine, { meter, name: "quota" });
    quota.checkTokenBucket(new QuotaKey("t", "ada", "api"), "user", 0);
    quota.checkTokenBucket(new QuotaKey("t", "ada", "api"), "user", 0);

    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
    const { types, units, samples } = parse(await res.text());
    const value = (name: string, labels: Record<string, string>) =>
      samples
        .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
        .reduce((sum, s) => sum + s.value, 0);

    expect(types.get("tideward_guard_calls_total")).toBe("counter");
    expect(types.get("tideward_guard_attempts_total")).toBe("counter");
    expect(types.get("tideward_guard_call_duration")).toBe("histogram");
    expect(types.get("tideward_breaker_drop_ratio")).toBe("gauge");
    expect(types.get("tideward_admit_verdicts_total")).toBe("counter");
    expect(types.get("tideward_admit_keys")).toBe("gauge"); // an up-down counter reads as a gauge
    expect(units.get("tideward_guard_call_duration")).toBe("s");

    // Every call succeeded (one 503 in three, retried); every request was an attempt.
    expect(ok).toBe(9);
    expect(value("tideward_guard_calls_total", { tideward_name: "api", tideward_outcome: "success" })).toBe(9);
    expect(value("tideward_guard_attempts_total", { tideward_name: "api" })).toBe(flaky.served.requests);
    expect(value("tideward_guard_attempts_total", { tideward_outcome: "failure", error_type: "HttpError" })).toBe(
      flaky.served.by.get(503),
    );
    expect(value("tideward_guard_retries_total", { tideward_name: "api" })).toBe(flaky.served.requests - 9);
    expect(value("tideward_guard_attempt_duration_count", { tideward_name: "api" })).toBe(flaky.served.requests);
    // The histogram's buckets are the package's boundaries, in seconds, then +Inf.
    const les = samples
      .filter((s) => s.name === "tideward_guard_call_duration_bucket" && s.labels.tideward_outcome === "success")
      .map((s) => s.labels.le);
    expect(les).toEqual([...DURATION_BUCKETS.map(String), "+Inf"]);
    expect(value("tideward_guard_call_duration_bucket", { tideward_outcome: "success", le: "+Inf" })).toBe(9);
    expect(value("tideward_breaker_drop_ratio", { tideward_name: "api" })).toBe(0);

    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    expect(value("tideward_admit_verdicts_total", { tideward_name: "web", http_response_status_code: "200" })).toBe(3);
    expect(
      value("tideward_admit_verdicts_total", { http_response_status_code: "429", tideward_refusal_kind: "rate" }),
    ).toBe(2);
    expect(value("tideward_admit_keys", { tideward_name: "web" })).toBe(1);
    expect(value("tideward_quota_decisions_total", { tideward_quota_limit: "user", tideward_quota_reason: "ok" })).toBe(
      1,
    );
    expect(
      value("tideward_quota_decisions_total", { tideward_quota_limit: "user", tideward_quota_reason: "exhausted" }),
    ).toBe(1);
    expect(value("tideward_quota_keys", { tideward_name: "quota" })).toBe(1);

    // No series carries a key, an address or a user: only these labels appear.
    const allowed = new Set([
      "tideward_name",
      "tideward_outcome",
      "tideward_attempt_kind",
      "tideward_refusal_kind",
      "error_type",
      "http_response_status_code",
      "tideward_quota_limit",
      "tideward_quota_reason",
      "tideward_quota_algorithm",
      "le",
      "otel_scope_name",
      "otel_scope_version",
    ]);
    const labels = new Set(samples.filter((s) => s.name.startsWith("tideward_")).flatMap((s) => Object.keys(s.labels)));
    expect([...labels].filter((l) => !allowed.has(l))).toEqual([]);
    const text = samples.map((s) => JSON.stringify(s.labels)).join("\n");
    expect(text).not.toMatch(/203\.0\.113\.9|ada/);
    await provider.shutdown();
  });
});
