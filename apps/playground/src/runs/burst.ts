// The seed's bursts through a bucket, a sliding window and a period.
import { Bucket, Period, Sliding } from "@tideward/limiters";
import type { Figure, Outcome, Params } from "../model.ts";

export function burst(p: Params): Outcome {
  const calls = Number(p.calls);
  const spacing = Number(p.spacing);
  const every = Number(p.every);
  const bursts = Number(p.bursts);
  const quota = Number(p.quota);
  const before = Math.round((calls * Number(p.before)) / 100);
  const bucket = new Bucket(quota, { burst: Number(p.burst) });
  const sliding = new Sliding(quota, 1_000);
  const period = new Period(quota, 1_000, { align: p.align === "yes" });
  const rows: { label: string; cells: Figure[] }[] = [];
  // The running totals, a point before and after every call, so the steps show each burst's shape.
  const xs: number[] = [];
  const series = { offered: [] as number[], bucket: [] as number[], sliding: [] as number[], period: [] as number[] };
  const total = { offered: 0, bucket: 0, sliding: 0, period: 0 };
  const point = (now: number): void => {
    xs.push(now / 1_000);
    series.offered.push(total.offered);
    series.bucket.push(total.bucket);
    series.sliding.push(total.sliding);
    series.period.push(total.period);
  };
  point(0);
  for (let k = 0; k < bursts; k++) {
    const boundary = Math.ceil((k * every) / 1_000 + 1) * 1_000;
    const start = boundary - before * spacing;
    let b = 0;
    let s = 0;
    let q = 0;
    const totalBefore = { ...total };
    for (let i = 0; i < calls; i++) {
      const now = start + i * spacing;
      if (bucket.take(now)) b++;
      if (sliding.take(now)) s++;
      if (period.take(now) !== "over") q++;
      total.offered++;
      total.bucket = totalBefore.bucket + b;
      total.sliding = totalBefore.sliding + s;
      total.period = totalBefore.period + q;
      point(now);
    }
    const cell = (name: string, value: number): Figure => ({ id: `burst${k}.${name}`, label: `burst ${k}, ${name}`, value, unit: "", digits: 0, expr: `rows[${k}].${name}` });
    rows.push({ label: `burst ${k}`, cells: [cell("bucket", b), cell("sliding", s), cell("period", q)] });
  }
  return {
    charts: [
      {
        id: "admitted",
        title: `Calls let through so far, bursts of ${calls} every ${every} ms`,
        x: { label: "time (s)", values: xs },
        y: { label: "calls", min: 0 },
        series: [
          { label: "offered", values: series.offered, color: "#6b7280", dash: true },
          { label: "bucket", values: series.bucket },
          { label: "sliding", values: series.sliding },
          { label: "period", values: series.period },
        ],
      },
    ],
    figures: [],
    tables: [{ caption: `Calls let through of ${calls} offered in each burst, quota ${quota} a second`, columns: ["burst", "bucket", "sliding", "period"], rows }],
    notes: [],
    replay: { imports: [], body: [] },
    simulated: { ms: bursts * every, calls: bursts * calls },
  };
}
