import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { describeLimit, format, limitPolicy, main, parseLimit, parseLogLine, replayLog } from "@tideward/sim/cli";
import type { Io, ReplayReport } from "@tideward/sim/cli";
import { ALGORITHMS, PER_WORDS, UNIT_WORDS } from "../src/cli/limit";
import { STARTS } from "./helpers";

const pkg = join(import.meta.dirname, "..");
const log = join(import.meta.dirname, "fixtures", "access.log");
const text = readFileSync(log, "utf8");

async function run(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const io: Io = {
    out: (t) => void (out += t),
    err: (t) => void (err += t),
    read: (p) => Promise.resolve(readFileSync(p, "utf8")),
  };
  const code = await main(argv, io);
  return { code, out, err };
}

/** A reference: each key's requests refused by an exact "count in any `per` ms", counted by brute force. */
function reference(count: number, per: number): Map<string, number> {
  const byKey = new Map<string, number[]>();
  for (const line of text.split("\n")) {
    const r = parseLogLine(line);
    if (r === undefined || typeof r === "string") continue;
    const key = r.key ?? "";
    byKey.set(key, [...(byKey.get(key) ?? []), r.t]);
  }
  const refused = new Map<string, number>();
  for (const [key, times] of byKey) {
    times.sort((a, b) => a - b);
    const admitted: number[] = [];
    let n = 0;
    for (const t of times) {
      if (admitted.filter((s) => t - s < per).length < count) admitted.push(t);
      else n++;
    }
    refused.set(key, n);
  }
  return refused;
}

describe("tideward-sim replay", () => {
  it("reports, per key, what 100/min per key would have refused", async () => {
    const { code, out, err } = await run("replay", log, "--limit", "100/min per key");
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(out).toContain("limit: 100 per 1m per key (sliding window)");
    expect(out).toContain("455 requests from 13 keys");
    expect(out).toContain("55 would be refused (12.1 %), from 2 keys");
    expect(out).toContain("1 line skipped (line 41: neither NDJSON");
    // The scraper's 150 in its first minute: 50 refused, the first at its 101st request.
    expect(out).toMatch(/203\.0\.113\.9 +180 +50 +27\.8 % +2024-08-12T16:00:39\.000Z/);
    expect(out).toMatch(/192\.0\.2\.44 +105 +5 +4\.8 %/);
    expect(out).toMatch(/198\.51\.100\.7 +120 +0 +0\.0 % +–/);
  });

  it("agrees with a brute-force count of the same limit, key by key", async () => {
    for (const [limit, count, per] of [
      ["100/min per key", 100, 60_000],
      ["30/10s per key", 30, 10_000],
      ["5/1h per key", 5, 3_600_000],
    ] as const) {
      const { out } = await run("replay", log, "--limit", limit, "--json");
      const report = JSON.parse(out) as ReplayReport;
      const expected = reference(count, per);
      for (const k of report.perKey) expect([k.key, k.refused]).toEqual([k.key, expected.get(k.key)]);
      expect(report.refused).toBe([...expected.values()].reduce((a, b) => a + b, 0));
    }
  });

  it("tries a token bucket, a global limit, another key field", async () => {
    const bucket = JSON.parse(
      (await run("replay", log, "--limit", "100/min per key burst 50", "--algorithm", "bucket", "--json")).out,
    ) as ReplayReport;
    expect(bucket.limit).toBe("100 per 1m per key (token bucket, burst 50)");
    // The scraper's 150 in 58 s (the log keeps whole seconds) meet a bucket of 50 that refills
    // 100 a minute: 50 + 96.7 pass.
    const of = (key: string) => bucket.perKey.find((k) => k.key === key)?.refused;
    expect(of("203.0.113.9")).toBe(4);
    // The burst's 105 within 9 s: 50 + 15 pass.
    expect(of("192.0.2.44")).toBe(105 - 65);
    expect(bucket.perKey[0].key).toBe("192.0.2.44");
    const global = JSON.parse((await run("replay", log, "--limit", "200/min", "--json")).out) as ReplayReport;
    expect(global.limit).toBe("200 per 1m in all (sliding window)");
    const users = JSON.parse(
      (await run("replay", log, "--limit", "100/min per key", "--key", "user", "--json")).out,
    ) as ReplayReport;
    expect(users.perKey.map((k) => k.key)).toContain("alice");
  });

  it("is the same report every time (its trace hash included)", async () => {
    const a = await run("replay", log, "--limit", "100/min per key", "--json");
    const b = await run("replay", log, "--limit", "100/min per key", "--json");
    expect(a.out).toBe(b.out);
    expect((JSON.parse(a.out) as ReplayReport).hash).toMatch(/^[0-9a-f]{16}$/);
  });

  it("says what is wrong with its arguments", async () => {
    expect((await run()).code).toBe(2);
    expect((await run("--help")).out).toContain("usage: tideward-sim replay");
    expect(await run("replay", log)).toMatchObject({
      code: 2,
      err: expect.stringContaining("needs a log and --limit") as unknown,
    });
    expect(await run("replay", log, "--limit", "lots")).toMatchObject({
      code: 2,
      err: expect.stringContaining("start with <count>/<unit>") as unknown,
    });
    expect(await run("replay", log, "--limit", "100/fortnight")).toMatchObject({
      code: 2,
      err: expect.stringContaining("unit") as unknown,
    });
    expect(await run("replay", log, "--limt", "1/s")).toMatchObject({
      code: 2,
      err: expect.stringContaining("unknown option --limt") as unknown,
    });
    expect(await run("replay", "/nonexistent.log", "--limit", "1/s")).toMatchObject({
      code: 1,
      err: expect.stringContaining("cannot read /nonexistent.log") as unknown,
    });
    expect(await run("play", log)).toMatchObject({ code: 2 });
  });

  it("refuses a limit the limiter cannot hold, two algorithms and a misspelt option as usage errors, naming what was typed", async () => {
    const usage = async (...argv: string[]): Promise<string> => {
      const r = await run("replay", log, ...argv);
      expect(r.code).toBe(2);
      expect(r.out).toBe("");
      return r.err.split("\n")[0];
    };
    expect(await usage("--limit", "20000000/s")).toBe(
      'tideward-sim: --limit "20000000/s": a sliding window\'s count must be at most 16777216 (2^24 stamps, 128 MiB), got 20000000',
    );
    expect(await usage("--limit", "5/1e-9s per key")).toMatch(
      /^tideward-sim: --limit "5\/1e-9s per key": a sliding window's span \(ms\) must be at least 0\.0625 ms/,
    );
    expect(await usage("--limit", "1/1e15s period")).toMatch(
      /^tideward-sim: --limit "1\/1e15s period": a fixed window's span/,
    );
    expect(await usage("--limit", "10/s burst 1e300 bucket")).toMatch(
      /a token bucket's burst must be at most 9007199254740991/,
    );
    expect(await usage("--limit", "10/s bucket gcra")).toBe(
      'tideward-sim: --limit "10/s bucket gcra": the limit "10/s bucket gcra" names two algorithms, bucket and gcra: keep one',
    );
    expect(await usage("--limit", "10/s bucket", "--algorithm", "gcra")).toMatch(
      /says bucket, and --algorithm gcra: keep one/,
    );
    expect(await usage("--limt", "1/s")).toBe("tideward-sim: unknown option --limt; did you mean --limit?");
    expect(await usage("--limit", "1/s", "--max-bytse", "9")).toMatch(/did you mean --max-bytes\?$/);
    expect(await usage("--limit", "1/s", "--frobnicate")).toBe("tideward-sim: unknown option --frobnicate");
    expect(await usage("--limit", "1/s", "--max-bytes", "1e20")).toBe(
      'tideward-sim: --max-bytes must be a whole number of bytes from 1 to 9007199254740991 (2^53 − 1), got "1e20"',
    );
    // A flag's value left out, with another flag after it, is not taken as the value.
    expect(await usage("--limit", "1/s", "--key", "--json")).toBe("tideward-sim: --key needs a value");
    expect(await usage("--limit", "--top", "3")).toBe("tideward-sim: --limit needs a value");
    // A flag given twice is refused rather than the last silently kept.
    expect(await usage("--limit", "1/s", "--limit", "2/s")).toBe("tideward-sim: --limit is given twice; give it once");
    expect(await usage("--limit", "1/s", "--json", "--json")).toBe("tideward-sim: --json is given twice; give it once");
    // Counts are decimal digits, quoted back as typed.
    for (const top of ["", "0x10", "1e3", "-1", "2.5", " 3"])
      expect(await usage("--limit", "1/s", "--top", top)).toBe(
        `tideward-sim: --top must be a whole number, 0 or more, got ${JSON.stringify(top)}`,
      );
    expect(await usage("--limit", "1/s", "--max-bytes", "0x10000000")).toMatch(/got "0x10000000"$/);
    // "per" takes only the words it documents.
    expect(await usage("--limit", "1/s per banana")).toBe(
      'tideward-sim: --limit "1/s per banana": cannot read "per banana" in the limit "1/s per banana": write "per key" (one limit a key) or "per all" (one for everyone)',
    );
    expect(parseLimit("1/s per all")).toMatchObject({ perKey: false });
    expect(parseLimit("1/s per key")).toMatchObject({ perKey: true });
    expect((await run("replay", log, "--limit", "100/min per key", "--top", "3")).code).toBe(0);
    // The same word twice, or --algorithm agreeing with the text, is one algorithm.
    expect(parseLimit("10/s gcra gcra")).toMatchObject({ algorithm: "gcra" });
    expect(parseLimit("10/s gcra", "gcra")).toMatchObject({ algorithm: "gcra" });
    expect((await run("replay", log, "--limit", "16777216/s", "--max-bytes", "9007199254740991")).code).toBe(0);
  });

  it("runs as a command: the package's bin, in a process of its own", () => {
    const r = spawnSync(
      process.execPath,
      [
        "--conditions=@tideward/source",
        "--import",
        "tsx",
        join(pkg, "bin", "tideward-sim.js"),
        "replay",
        log,
        "--limit",
        "100/min per key",
        "--top",
        "3",
      ],
      { cwd: pkg, encoding: "utf8", timeout: 60_000 },
    );
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(r.stdout).toContain("55 would be refused");
    expect(r.stdout).toContain("… and 10 more keys");
  });
});

describe("tideward-sim replay on logs that are hostile in size", () => {
  it("replays a two-line log from the epoch to now: totals only, a thousand buckets, and 1 key in the singular", async () => {
    const now = 1_723_456_789_012;
    const two = `0 alice\n${now} alice\n`;
    const report = replayLog(two, { limit: parseLimit("1/s per key") });
    expect(report).toMatchObject({ requests: 2, keys: 1, refused: 0, from: 0, to: now });
    expect(format(report)).toContain("2 requests from 1 key over");
    const io: Io = { out: () => {}, err: () => {}, read: () => Promise.resolve(two) };
    let out = "";
    expect(await main(["replay", "two.log", "--limit", "1/s"], { ...io, out: (t) => void (out += t) })).toBe(0);
    expect(out).toContain("2 requests from 1 key over");
  });

  it("refuses a candidate limit whose per-key state would not fit, naming --max-bytes", async () => {
    // A sliding window of a million keeps 8 MB a key: four of the log's keys fit in 40 MB.
    const r = await run("replay", log, "--limit", "1000000/min per key", "--max-bytes", "40000000");
    expect(r.code).toBe(1);
    expect(r.err).toMatch(
      /^tideward-sim: .+access\.log: policy limit per key: the limiter of key \d+ \(the 5th\) needs about 7\.63 MiB beside the 31\.2 MiB already set aside, past --max-bytes \(38\.1 MiB\)\n$/,
    );
    const roomy = await run("replay", log, "--limit", "1000000/min per key", "--max-bytes", "200000000");
    expect(roomy.code).toBe(0);
    expect(roomy.out).toContain("0 would be refused");
    expect((await run("replay", log, "--limit", "1/s", "--max-bytes", "lots")).err).toContain(
      '--max-bytes must be a whole number of bytes from 1 to 9007199254740991 (2^53 − 1), got "lots"',
    );
    expect(() => replayLog(text, { limit: parseLimit("1000000/min per key"), maxBytes: 40_000_000 })).toThrow(
      /past replayLog maxBytes/,
    );
    // By default 512 MiB: a window of sixteen million (128 MB a key) would hold four keys.
    expect(() => parseLimit("16000000/min per key")).not.toThrow();
  });

  it("its functions refuse arguments they cannot use, naming them, before reading the log", () => {
    const limit = parseLimit("1/s per key");
    expect(() => replayLog(text, { limit, maxbytes: 5 } as never)).toThrow(
      new TypeError('replayLog has no option "maxbytes"; did you mean "maxBytes"?'),
    );
    expect(() => replayLog(text, undefined as never)).toThrow(
      new TypeError('replayLog needs options with a limit: replayLog(text, { limit: parseLimit("100/min per key") })'),
    );
    expect(() => replayLog(text, {} as never)).toThrow(/^replayLog limit must be a limit from parseLimit/);
    expect(() => replayLog(null as never, { limit })).toThrow(
      new TypeError("replayLog text must be the log's text (a string), got null"),
    );
    expect(() => replayLog(text, { limit: "1/s" as never })).toThrow(/^replayLog limit must be a limit/);
    expect(() => replayLog(text, { limit: { ...limit, algorithm: "leaky" as never } })).toThrow(
      /^replayLog limit algorithm must be "sliding", "bucket", "gcra" or "period", got "leaky"$/,
    );
    expect(() => replayLog(text, { limit, key: 7 as never })).toThrow(/^replayLog key must be a field name/);
    expect(() => replayLog(text, { limit, maxBytes: 0 })).toThrow(/^replayLog maxBytes must be a whole number/);
    expect(() => parseLimit("1/s", "foo" as never)).toThrow(
      new TypeError('parseLimit algorithm must be "sliding", "bucket", "gcra" or "period", got "foo"'),
    );
    expect(() => describeLimit(null as never)).toThrow(/^describeLimit limit must be a limit from parseLimit/);
    expect(() => limitPolicy({ ...limit, perKey: "yes" as never })).toThrow(
      /^limitPolicy limit perKey must be true or false, got "yes"$/,
    );
    expect(() => parseLogLine(undefined as never)).toThrow(/^parseLogLine line must be text, got undefined$/);
    expect(() => parseLogLine("0 alice", "")).toThrow(/^parseLogLine key must be a field name/);
    expect(replayLog(text, { limit, maxBytes: 100_000_000 }).requests).toBeGreaterThan(0);
  });

  it.each(STARTS)(
    "a hand-made limit out of range is refused naming replayLog limit's field and the value, not in the limiter's words (log at %s ms)",
    (at) => {
      const log = `{"t": ${at}, "key": "a"}\n{"t": ${at + 500}, "key": "b"}\n`;
      const limit = parseLimit("10/s per key");
      const refused = (l: object) => () => replayLog(log, { limit: { ...limit, ...l } });
      expect(refused({ count: 0 })).toThrow(new RangeError("replayLog limit count must be 1 or more, got 0"));
      expect(refused({ count: 2.5 })).toThrow(new RangeError("replayLog limit count must be a whole number, got 2.5"));
      expect(refused({ count: NaN })).toThrow(new RangeError("replayLog limit count must be a finite number, got NaN"));
      expect(refused({ per: -5 })).toThrow(new RangeError("replayLog limit per (ms) must be above 0, got -5"));
      expect(refused({ count: 20_000_000 })).toThrow(
        new RangeError(
          "replayLog limit count (a sliding window's count) must be at most 16777216 (2^24 stamps, 128 MiB), got 20000000",
        ),
      );
      expect(refused({ per: 1e-9, algorithm: "period" })).toThrow(
        /^replayLog limit per \(a fixed window's span \(ms\)\) must be at least 0\.0625 ms .+, got 1e-9$/,
      );
      expect(refused({ burst: 0, algorithm: "bucket" })).toThrow(
        new RangeError("replayLog limit burst must be 1 or more, got 0"),
      );
      expect(refused({ burst: 1e300, algorithm: "gcra" })).toThrow(
        /^replayLog limit burst \(GCRA's burst\) must be at most 9007199254740991 \(2\^53 − 1\), got 1e\+300$/,
      );
      expect(() => limitPolicy({ ...limit, count: 0 })).toThrow(
        new RangeError("limitPolicy limit count must be 1 or more, got 0"),
      );
      // The limit as parseLimit makes it replays, and a burst unused by a sliding window is not read.
      expect(replayLog(log, { limit }).requests).toBe(2);
      expect(replayLog(log, { limit: { ...limit, burst: NaN } }).requests).toBe(2);
    },
  );

  it("says nothing when its reader stops early (a pipe into head)", () => {
    const dir = mkdtempSync(join(tmpdir(), "tideward-sim-"));
    try {
      const big = join(dir, "big.log");
      writeFileSync(big, Array.from({ length: 20_000 }, (_, i) => `${1_723_456_789 + i} user-${i}`).join("\n"));
      const bin = join(pkg, "bin", "tideward-sim.js");
      const r = spawnSync(
        "sh",
        [
          "-c",
          `"${process.execPath}" --conditions=@tideward/source --import tsx "${bin}" replay "${big}" --limit "1/s per key" --json | head -c 10`,
        ],
        { cwd: pkg, encoding: "utf8", timeout: 60_000 },
      );
      expect(r.stdout).toBe(`{\n  "limit`);
      expect(r.stderr).toBe("");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("main and format refuse a caller's garbage, naming it", () => {
  const io: Io = { out: () => {}, err: () => {}, read: () => Promise.resolve("1723456789 alice\n") };

  it("main: argv not an array of text, io not its three functions", async () => {
    await expect(main(null as never, io)).rejects.toThrow(
      new TypeError("main argv must be an array of text (the arguments after the program's name), got null"),
    );
    await expect(main("replay" as never, io)).rejects.toThrow(/^main argv must be an array of text .+, got "replay"$/);
    await expect(main(["replay", 5 as never, "--limit", "1/s"], io)).rejects.toThrow(
      new TypeError("main argv[1] must be text, got 5"),
    );
    await expect(main(["--help"], null as never)).rejects.toThrow(new TypeError("main io must be an object, got null"));
    await expect(main(["--help"], { err: io.err, read: io.read } as never)).rejects.toThrow(
      new TypeError("main io out must be a function, got undefined"),
    );
    await expect(main(["--help"], { ...io, write: io.out } as never)).rejects.toThrow(/^main has no option "write"/);
    // A well-formed call runs as before.
    let out = "";
    expect(await main(["replay", "x.log", "--limit", "1/s"], { ...io, out: (t) => void (out += t) })).toBe(0);
    expect(out).toContain("1 request from 1 key");
  });

  it.each(STARTS)("format: a report that is not one, or a top that is not a count (log at %s ms)", (at) => {
    // Half a second apart: a log's t below 10^11 is in seconds, from it in ms.
    const later = at < 1e11 ? at + 0.5 : at + 500;
    const report = replayLog(`{"t": ${at}, "key": "a"}\n{"t": ${later}, "key": "a"}\n`, {
      limit: parseLimit("1/s per key"),
    });
    expect(format(report)).toContain("1 would be refused");
    expect(() => format(null as never)).toThrow(
      new TypeError("format report must be a report from replayLog, got null"),
    );
    expect(() => format({ ...report, perKey: undefined } as never)).toThrow(
      new TypeError("format report perKey must be an array, got undefined"),
    );
    expect(() => format({ ...report, from: NaN })).toThrow(
      new TypeError("format report from must be a time in ms since the epoch, got NaN"),
    );
    expect(() => format({ ...report, perKey: [null as never] })).toThrow(
      /^format report perKey\[0\] must be a key's report \(with its key as text\), got null$/,
    );
    expect(() => format({ ...report, perKey: [{ ...report.perKey[0], firstRefused: Infinity }] })).toThrow(
      new TypeError("format report perKey[0] firstRefused must be a time in ms since the epoch, got Infinity"),
    );
    expect(() => format(report, -1)).toThrow(new RangeError("format top must be 0 or more, got -1"));
    expect(() => format(report, NaN)).toThrow(new RangeError("format top must be a finite number, got NaN"));
  });
});

describe("the usage text", () => {
  /** Whether `text` has `word` as a word of its own (not inside a longer flag or word). */
  const has = (text: string, word: string): boolean =>
    new RegExp(`(^|[\\s,|"(\\[])${word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}([\\s,|"\\])]|$)`).test(text);

  it("lists every flag the parser reads, and every per word, algorithm and unit a limit takes", async () => {
    const help = (await run("--help")).out;
    expect((await run("-h")).out).toBe(help);
    // The flags main compares its arguments with, read off its source: what it accepts.
    const source = readFileSync(join(pkg, "src", "cli", "index.ts"), "utf8");
    const flags = [...new Set([...source.matchAll(/"(--?[a-z][\w-]*)"/g)].map((m) => m[1]))];
    expect(flags.sort()).toEqual(["--algorithm", "--help", "--json", "--key", "--limit", "--max-bytes", "--top", "-h"]);
    for (const flag of flags) {
      expect([flag, has(help, flag)]).toEqual([flag, true]);
      const r = await run("replay", log, "--limit", "1/s", ...(flag === "--limit" ? [] : [flag]));
      expect([flag, r.err]).not.toEqual([flag, expect.stringContaining("unknown option") as unknown]);
    }
    const grammar = help.split("\n")[1];
    for (const word of PER_WORDS) {
      expect([word, has(grammar, `per ${word}`)]).toEqual([word, true]);
      expect(parseLimit(`1/s per ${word}`).perKey).toBe(word === "key");
    }
    for (const algorithm of ALGORITHMS) {
      expect([algorithm, has(grammar, algorithm)]).toEqual([algorithm, true]);
      expect(parseLimit(`1/s ${algorithm}`).algorithm).toBe(algorithm);
    }
    expect(has(grammar, "burst <n>")).toBe(true);
    for (const unit of UNIT_WORDS) {
      expect([unit, has(help, unit)]).toEqual([unit, true]);
      // The long forms plural or not ("ms" is milliseconds, not minutes).
      if (unit.length > 2) expect(parseLimit(`1/${unit}s`).per).toBe(parseLimit(`1/${unit}`).per);
    }
  });
});

describe("parseLimit and parseLogLine", () => {
  it("reads limits in the forms people write", () => {
    expect(parseLimit("100/min per key")).toEqual({
      count: 100,
      per: 60_000,
      perKey: true,
      burst: 100,
      algorithm: "sliding",
    });
    expect(parseLimit("10/s burst 20 bucket")).toEqual({
      count: 10,
      per: 1_000,
      perKey: false,
      burst: 20,
      algorithm: "bucket",
    });
    expect(parseLimit("5000/1h30m").per).toBe(5_400_000);
    expect(parseLimit("3/hours").per).toBe(3_600_000);
    expect(() => parseLimit("0/s")).toThrow(/whole number from 1/);
    expect(() => parseLimit("10/s per")).toThrow(/"per" needs a word/);
    expect(() => parseLimit("10/s quickly")).toThrow(/cannot read "quickly"/);
  });

  it("refuses a burst for the limits that take none, as it refuses every other word it cannot use", () => {
    expect(() => parseLimit("10/s burst 20")).toThrow(
      'cannot use "burst": it applies to the bucket and GCRA only, and the limit "10/s burst 20" is a sliding window (the default): add "bucket" or "gcra", or leave burst out',
    );
    expect(() => parseLimit("10/s burst 20 period")).toThrow(/is a fixed window \(period\): add "bucket"/);
    expect(() => parseLimit("10/s burst 20", "sliding")).toThrow(/is a sliding window: add "bucket"/);
    expect(parseLimit("10/s burst 20", "gcra")).toMatchObject({ burst: 20, algorithm: "gcra" });
  });

  it("reads NDJSON, common log format with its zone, and <time> <key> lines", () => {
    expect(parseLogLine('{"t": 1723456789012, "key": "alice"}')).toEqual({
      t: 1_723_456_789_012,
      key: "alice",
      cost: 1,
    });
    expect(parseLogLine('{"time": "2024-08-12T09:00:00.250-07:00", "ip": "1.2.3.4"}')).toEqual({
      t: Date.UTC(2024, 7, 12, 16, 0, 0, 250),
      key: "1.2.3.4",
      cost: 1,
    });
    expect(
      parseLogLine('127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] "GET /apache_pb.gif HTTP/1.0" 200 2326'),
    ).toEqual({ t: Date.UTC(2000, 9, 10, 20, 55, 36), key: "127.0.0.1" });
    expect(
      parseLogLine('127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] "GET /a?b=1 HTTP/1.0" 200 2326', "path"),
    ).toMatchObject({ key: "/a" });
    expect(parseLogLine("1723456789 bob")).toEqual({ t: 1_723_456_789_000, key: "bob" });
    expect(parseLogLine("2024-08-12T09:00:00Z carol")).toEqual({ t: Date.UTC(2024, 7, 12, 9), key: "carol" });
    expect(parseLogLine("   ")).toBeUndefined();
    expect(parseLogLine("2024-08-12 09:00 dave")).toMatch(/neither/);
    expect(parseLogLine('{"t": "yesterday", "key": "x"}')).toMatch(/no readable time/);
  });

  it("replayLog refuses a log with nothing to read", () => {
    expect(() => replayLog("nope\n", { limit: parseLimit("1/s") })).toThrow(
      /no request could be read from the log; line 1/,
    );
  });
});

describe("the units of a log's times", () => {
  it("reads t as an absolute time, and says so in --help and the README, apart from traffic.replay's ms after the start", async () => {
    // Unix seconds below 10^11, Unix ms from 10^11, ISO 8601 with a zone.
    expect(parseLogLine('{"t": 100, "key": "a"}')).toMatchObject({ t: 100_000 });
    expect(parseLogLine('{"t": 99999999999.5, "key": "a"}')).toMatchObject({ t: 99_999_999_999_500 });
    expect(parseLogLine('{"t": 100000000000, "key": "a"}')).toMatchObject({ t: 100_000_000_000 });
    expect(parseLogLine('{"t": "1970-01-01T00:01:40Z", "key": "a"}')).toMatchObject({ t: 100_000 });
    const help = (await run("--help")).out.replace(/\s+/g, " ");
    expect(help).toContain(
      "is absolute: ISO 8601 with a zone, or a number of Unix seconds (below 10^11) or Unix ms (10^11 and up)",
    );
    expect(help).toContain("not traffic.replay's ms after the start");
    const readme = readFileSync(join(pkg, "README.md"), "utf8").replace(/\s+/g, " ");
    expect(readme).toContain("`t` in ms after the run's start");
    expect(readme).toContain("the CLI below reads a log's `t` as an absolute date instead");
    expect(readme).toMatch(/below 10\^11 in magnitude, Unix \*\*seconds\*\*.*from 10\^11, Unix \*\*milliseconds\*\*/);
  });
});
