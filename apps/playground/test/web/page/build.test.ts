// The built page as served: its weight in gzipped JavaScript, nothing fetched from elsewhere, and
// the page on loopback. The global setup (setup.ts) builds it and serves it.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { dist } from "../page";
import { pageUrl } from "./browser";

/** The gzipped JavaScript the page may load, in bytes: main script and worker together. */
const BUDGET = 150 * 1024;

describe("the built page", () => {
  it(`loads at most ${BUDGET / 1024} KB of gzipped JavaScript, from its own origin only`, () => {
    const assets = join(dist, "assets");
    const js = readdirSync(assets).filter((f) => f.endsWith(".js"));
    expect(js.length).toBeGreaterThanOrEqual(2); // the page and its worker
    const gzipped = js.reduce((sum, f) => sum + gzipSync(readFileSync(join(assets, f)), { level: 9 }).length, 0);
    expect(gzipped).toBeLessThan(BUDGET);
    // Works offline: nothing in the page or its scripts is fetched from elsewhere.
    const html = readFileSync(join(dist, "index.html"), "utf8");
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
  });

  it("serves the page on loopback", async () => {
    const res = await fetch(pageUrl());
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("<title>tideward playground</title>");
  });
});
