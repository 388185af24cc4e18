import { beforeAll, describe, expect, it } from "vitest";
import { inTime, report, runHttp } from "../examples/concurrency-http";
import type { HttpRun, Load } from "../examples/concurrency-http";

describe("example: adaptive limits with priority in front of a node:http server", () => {
  // Shortened to one second of load, once with no policy and once with AIMD judging priority.
  // Only what holds on any host is asserted: the figures vary with how busy it is.
  const load: Load = { user: 125, prefetch: 500, duration: 1_000, grace: 2_000, deadline: 500 };
  let none: HttpRun;
  let aimd: HttpRun;
  beforeAll(async () => {
    none = await runHttp("none", load);
    aimd = await runHttp("aimd", load);
  }, 60_000);

  it("accounts for every request sent, and prints a row per run", () => {
    for (const run of [none, aimd])
      for (const s of [run.user, run.prefetch])
        expect(s.ok.length + s.refused.length + s.failed + s.unanswered, run.policy).toBe(s.sent);
    const lines = report(load, [none, aimd]);
    expect(lines[1]).toMatch(/^policy\s+user in time\s+prefetch in time\s+user p99\s+prefetch p99$/);
    expect(lines.slice(2, 4).map((l) => l.split(/\s+/)[0])).toEqual(["none", "aimd"]);
    expect(inTime(none.user, load.deadline)).toBeLessThanOrEqual(1);
  });

  it("no policy refuses nothing; AIMD with priority refuses prefetch first", () => {
    expect(none.user.refused.length + none.prefetch.refused.length).toBe(0);
    const share = (s: HttpRun["user"]) => s.refused.length / Math.max(1, s.sent);
    // Prefetch may fill half the places and user calls all of them: whenever a user call was
    // refused the places were full, and prefetch was refused from half full.
    expect(share(aimd.prefetch)).toBeGreaterThanOrEqual(share(aimd.user));
    if (aimd.user.refused.length + aimd.prefetch.refused.length > 0)
      expect(share(aimd.prefetch)).toBeGreaterThan(share(aimd.user));
  });
});
