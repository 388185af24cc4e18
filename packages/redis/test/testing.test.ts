import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { expect, it } from "vitest";
import { withRedis } from "./server";

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

withRedis("@tideward/redis/testing", () => {
  it("a process that throws before stop() leaves no redis-server behind", async () => {
    const run = spawnSync(
      process.execPath,
      [
        "--conditions=@tideward/source",
        "--import",
        "tsx",
        join(import.meta.dirname, "fixtures", "throws-after-start.ts"),
      ],
      { encoding: "utf8", timeout: 30_000 },
    );
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain("an example that fails before its stop()");
    const { pid } = JSON.parse(run.stdout.trim()) as { pid: number; port: number };
    expect(pid).toBeGreaterThan(0);
    // Killed as the process exited; gone once the system has reaped it (bounded wait).
    for (let i = 0; i < 100 && alive(pid); i++) await new Promise((r) => setTimeout(r, 20));
    const leaked = alive(pid);
    if (leaked) process.kill(pid, "SIGKILL"); // not left behind by this test either
    expect(leaked).toBe(false);
  });
});
