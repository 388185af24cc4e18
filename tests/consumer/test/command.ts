// A command as a user runs it in a terminal: in a process group of its own, so that "Ctrl-C" is
// SIGINT to the whole group (the terminal's way), not to one process; its output read as it comes.
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";

export interface Typed {
  /** Everything it printed so far, stdout and stderr interleaved as they came. */
  output(): string;
  /** The first match of `pattern` in its output, once it appears; rejects if it exits first or after `ms`. */
  waitFor(pattern: RegExp, ms: number): Promise<RegExpMatchArray>;
  /** Ctrl-C: SIGINT to its process group, then its exit. */
  interrupt(ms: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILL to the whole group, if anything of it still runs (a test's last resort). */
  kill(): void;
  readonly child: ChildProcess;
}

export function type(
  command: string,
  args: readonly string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Typed {
  const child = spawn(command, args, { ...options, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let text = "";
  const listeners = new Set<() => void>();
  const heard = (d: string) => {
    text += d;
    for (const listener of listeners) listener();
  };
  child.stdout?.setEncoding("utf8").on("data", heard);
  child.stderr?.setEncoding("utf8").on("data", heard);
  // "close", not "exit": by then everything it printed has been read.
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("close", (code, signal) => {
      resolve({ code, signal });
      for (const listener of listeners) listener();
    }),
  );
  const running = () => child.exitCode === null && child.signalCode === null;
  const group = (signal: NodeJS.Signals) => {
    if (child.pid === undefined) return;
    try {
      process.kill(-child.pid, signal);
    } catch {
      // the group is gone already
    }
  };
  return {
    child,
    output: () => text,
    waitFor: (pattern, ms) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const m = pattern.exec(text);
          if (m !== null) done(() => resolve(m));
          else if (!running())
            done(() =>
              reject(new Error(`exited (${child.exitCode ?? child.signalCode}) before printing ${pattern}:\n${text}`)),
            );
        };
        const timer = setTimeout(() => done(() => reject(new Error(`no ${pattern} after ${ms} ms:\n${text}`))), ms);
        const done = (settle: () => void) => {
          clearTimeout(timer);
          listeners.delete(check);
          settle();
        };
        listeners.add(check);
        check();
      }),
    interrupt: async (ms) => {
      if (running()) group("SIGINT");
      const timer = setTimeout(() => group("SIGKILL"), ms);
      const result = await exit;
      clearTimeout(timer);
      return result;
    },
    kill: () => group("SIGKILL"),
  };
}
