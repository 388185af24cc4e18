// Type-level tests of the public API: compiled by `tsc -p .` (typecheck), never run. An
// `@ts-expect-error` that stops being an error fails the typecheck.
import { admit, admitFetch, guard, guardFetch, isRefusal, isTimeoutError } from "@tideward/guard";
import type { Attempt, Fetch, Guarded, RefusalKind, Verdict } from "@tideward/guard";
import { admitNode } from "@tideward/guard/node";
import type { Middleware } from "@tideward/guard/node";

/* eslint-disable @typescript-eslint/require-await -- async functions that answer at once stand for real calls */
// The guarded function takes fn's parameters after the Attempt, optional ones included.
const lookup = guard(async ({ signal }: Attempt, id: string, page?: number) => ({ id, page, aborted: signal.aborted }));
const typed: Guarded<[id: string, page?: number], { id: string; page: number | undefined; aborted: boolean }> = lookup;
void typed("a");
void typed("a", 2);
void lookup.run({ signal: AbortSignal.timeout(10), deadline: Date.now() + 10 }, "a");
// @ts-expect-error -- the Attempt is the guard's to hand, not the caller's
void lookup({ attempt: 1, hedge: false, signal: AbortSignal.abort() }, "a");
// @ts-expect-error -- a number is not an id
void lookup(5);

// A function that ignores its Attempt takes no arguments; a synchronous one is awaited all the same.
const now: Guarded<[], number> = guard(() => 42);
void now();

// isFailure and retryOn see what the function returns.
guard(async () => ({ status: 200 }), { isFailure: (_e, r) => (r?.status ?? 0) >= 500, retryOn: (e, r) => e !== undefined || r?.status === 429 });

// The refusal guard narrows to the kind and the wait.
function why(e: unknown): RefusalKind | "timeout" | undefined {
  if (isRefusal(e)) {
    const ms: number = e.retryAfter;
    void ms;
    return e.kind;
  }
  return isTimeoutError(e) && (e.scope === "attempt" || e.scope === "deadline") ? "timeout" : undefined;
}
void why;

// guardFetch answers fetch's own shape.
const f: Fetch = guardFetch(fetch, { retry: { attempts: 2 }, methods: ["GET"], retryStatuses: [503] });
void f;

// admit answers a verdict now, or a promise of one with a store that answers promises.
const a = admit({ gate: 1 });
const v: Verdict | Promise<Verdict> = a.check("k");
void v;
const handler = admitFetch(a, (request: Request, env: { incoming: unknown }) => new Response(`${request.url} ${String(env.incoming)}`));
void handler(new Request("http://x/"), { incoming: null });
const mw: Middleware = admitNode(a, { trustProxy: 1 });
void mw;
