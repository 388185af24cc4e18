// `pnpm start` as a user runs it: it builds the page, serves it, prints its address, and a
// Ctrl-C stops it with exit code 0 and nothing on stderr (no "[ELIFECYCLE] Command failed.").
// A terminal's Ctrl-C sends SIGINT to the whole foreground process group, pnpm included, so
// the test starts pnpm in a group of its own and signals that group, by the PID it started.
import { spawn, spawnSync } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const app = join(import.meta.dirname, "..");
const repo = join(app, "..", "..");

/** pnpm's own executable: on the PATH when the tests run under pnpm, else where npx keeps pnpm 12.4.2. */
function pnpm(): string {
  const found = (args: string[]): string =>
    spawnSync("sh", ["-c", ...args], { cwd: repo, encoding: "utf8", timeout: 60_000 }).stdout.trim();
  const onPath = found(["command -v pnpm"]);
  if (onPath !== "") return onPath;
  const viaNpx = found(["npx -y pnpm@12.4.2 exec sh -c 'command -v pnpm'"]);
  if (viaNpx === "") throw new Error("no pnpm here: neither on the PATH nor through npx -y pnpm@12.4.2");
  return viaNpx;
}

/** What a started server printed and how its process ended. */
interface Ended {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  /** What the address answered while the server ran. */
  readonly page: { status: number; text: string };
  readonly url: string;
}

/** Starts `command` in a process group of its own, waits for the address, fetches it, sends `signal` to the group, and waits for the end. */
async function startAndStop(command: string, args: string[], cwd: string, signal: NodeJS.Signals): Promise<Ended> {
  const child: ChildProcess = spawn(command, args, {
    cwd,
    detached: true,
    env: { ...process.env, PORT: "0" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, sig) => resolve({ code, signal: sig })),
  );
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout?.setEncoding("utf8").on("data", (d: string) => {
      stdout += d;
      const found = /http:\/\/127\.0\.0\.1:\d+\//.exec(stdout);
      if (found !== null) resolve(found[0]);
    });
    void ended.then(() => reject(new Error(`it ended before serving: ${stdout}\n${stderr}`)));
  });
  try {
    const res = await fetch(url);
    const page = { status: res.status, text: await res.text() };
    if (child.pid === undefined) throw new Error("no pid");
    process.kill(-child.pid, signal);
    const end = await ended;
    // Let the last output drain.
    await new Promise((resolve) => setTimeout(resolve, 50));
    return { ...end, stdout, stderr, page, url };
  } finally {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined)
      process.kill(-child.pid, "SIGKILL");
  }
}

describe("pnpm start", () => {
  it(
    "serves the page on loopback until Ctrl-C, then exits 0, printing nothing on stderr and no colour",
    { timeout: 120_000 },
    async () => {
      const end = await startAndStop(pnpm(), ["--silent", "start"], repo, "SIGINT");
      expect(end.page.status).toBe(200);
      expect(end.page.text).toContain("<title>tideward playground</title>");
      expect({ code: end.code, signal: end.signal, stderr: end.stderr }).toEqual({ code: 0, signal: null, stderr: "" });
      expect(end.stdout.split("\n")).toEqual([
        `tideward playground: ${end.url}`,
        "Ctrl-C stops it. The example programs: pnpm example <name> (pnpm example lists them).",
        "",
      ]);
      // Stopped means the port no longer answers.
      await expect(fetch(end.url)).rejects.toThrow();
    },
  );

  it("exits 0 on SIGTERM too", { timeout: 120_000 }, async () => {
    const end = await startAndStop(process.execPath, ["--import", "tsx", "scripts/start.ts"], app, "SIGTERM");
    expect(end.page.status).toBe(200);
    expect({ code: end.code, signal: end.signal, stderr: end.stderr }).toEqual({ code: 0, signal: null, stderr: "" });
  });
});
