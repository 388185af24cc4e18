// Type tests: vitest's typecheck runs tsc over them (they never run); each test fails on a type
// error inside it, and an `@ts-expect-error` that stops being an error is one.
import { describe, expectTypeOf, test } from "vitest";
import { admit, admitFetch, guard, guardFetch, isRefusal, isTimeoutError, refusalKinds } from "@tideward/guard";
import type { Limiter, Queue } from "@tideward/concurrency";
import type { Gate } from "@tideward/limiters";
import type { Shed, Shedder } from "@tideward/shedder";
import type { Clock, Span } from "@tideward/time";
import type {
  AdmitOptions,
  Attempt,
  Fetch,
  Guarded,
  Limit,
  QuotaAdmission,
  Refusal,
  RefusalKind,
  TimeoutError,
  ServerStageOptions,
  TimeoutScope,
  Verdict,
} from "@tideward/guard";
import { admitNode } from "@tideward/guard/node";
import type { Middleware } from "@tideward/guard/node";

describe("guard", () => {
  test("keeps the call's arguments and resolves to what it returns", () => {
    const getUser = guard((_: Attempt, id: string, full: boolean) => Promise.resolve({ id, full }));
    expectTypeOf(getUser).toEqualTypeOf<Guarded<[id: string, full: boolean], { id: string; full: boolean }>>();
    expectTypeOf(getUser("42", true)).toEqualTypeOf<Promise<{ id: string; full: boolean }>>();
    expectTypeOf(getUser.run({ deadline: 5_000 }, "42", false)).toEqualTypeOf<Promise<{ id: string; full: boolean }>>();
    expectTypeOf(guard(() => 1)()).toEqualTypeOf<Promise<number>>();
    const lookup = guard(({ signal }: Attempt, id: string, page?: number) =>
      Promise.resolve({ id, page, aborted: signal.aborted }),
    );
    expectTypeOf(lookup).toEqualTypeOf<
      Guarded<[id: string, page?: number], { id: string; page: number | undefined; aborted: boolean }>
    >();
    void lookup("a");
    // @ts-expect-error -- the Attempt is the guard's to hand, not the caller's
    void lookup({ attempt: 1, hedge: false, signal: AbortSignal.abort() }, "a");
    // @ts-expect-error -- the guarded call takes the call's own arguments
    void getUser(42, true);
    // @ts-expect-error -- and all of them
    void getUser("42");
  });

  test("takes policies as Partials over the presets, and callbacks typed by the result", () => {
    guard(() => "x", { breaker: { k: 2 }, retry: { attempts: 3 }, bucket: { rate: 50 }, budget: false });
    guard(() => ({ status: 200 }), {
      isFailure: (_error, result) => (result?.status ?? 0) >= 500,
      retryOn: (_error, result) => expectTypeOf(result).toEqualTypeOf<{ status: number } | undefined>() === undefined,
    });
    guard(() => 1, { breaker: true });
    guard(() => 1, { breaker: false });
    // @ts-expect-error -- not a breaker policy field
    guard(() => 1, { breaker: { threshold: 0.5 } });
    // @ts-expect-error -- a preset is named by its object (sre, client), not a string
    guard(() => 1, { breaker: "sre" });
    // @ts-expect-error -- a bucket needs its rate
    guard(() => 1, { bucket: { burst: 5 } });
    // @ts-expect-error -- an unknown option
    guard(() => 1, { retries: 3 });
  });

  test("a priority function reads the call's arguments as the guarded function takes them", () => {
    const get = guard((_: Attempt, path: string, _tries: number) => Promise.resolve(path), {
      priority: (path, tries) => {
        expectTypeOf(path).toEqualTypeOf<string>();
        expectTypeOf(tries).toEqualTypeOf<number>();
        return path.startsWith("/prefetch") ? "sheddable" : undefined;
      },
    });
    expectTypeOf(get).toEqualTypeOf<Guarded<[path: string, _tries: number], string>>();
    // @ts-expect-error -- the arguments are the call's, not others
    guard((_: Attempt, path: string) => path, { priority: (path: number) => path });
    // @ts-expect-error -- it answers a level's number or name
    guard((_: Attempt, path: string) => path, { priority: (path) => ({ path }) });
    guardFetch(fetch, { priority: (input, init) => (init?.method === "HEAD" || input instanceof URL ? 3 : 0) });
  });

  test("guardFetch keeps fetch's signature", () => {
    expectTypeOf(guardFetch(fetch, { timeout: 2_000 })).toEqualTypeOf<Fetch>();
    expectTypeOf<ReturnType<Fetch>>().toEqualTypeOf<Promise<Response>>();
    // @ts-expect-error -- guardFetch judges responses with failOn, not isFailure
    guardFetch(fetch, { isFailure: () => true });
  });
});

describe("refusals", () => {
  test("say which policy refused, one of nine kinds", () => {
    expectTypeOf<RefusalKind>().toEqualTypeOf<
      "deadline" | "rate" | "breaker" | "budget" | "shed" | "gate" | "quota" | "limit" | "reserved"
    >();
    expectTypeOf(refusalKinds).toEqualTypeOf<readonly RefusalKind[]>();
    const e: unknown = new Error("x");
    if (isRefusal(e)) {
      expectTypeOf(e).toEqualTypeOf<Refusal>();
      expectTypeOf(e.kind).toEqualTypeOf<RefusalKind>();
      expectTypeOf(e.retryAfter).toEqualTypeOf<number>();
    }
    if (isTimeoutError(e)) {
      expectTypeOf(e).toEqualTypeOf<TimeoutError>();
      expectTypeOf(e.scope).toEqualTypeOf<TimeoutScope>();
    }
    expectTypeOf<TimeoutScope>().toEqualTypeOf<"attempt" | "deadline">();
    // @ts-expect-error -- not a refusal kind
    const kind: RefusalKind = "timeout";
    void kind;
  });
});

describe("admission", () => {
  test("answers a Verdict (a promise only with a quota store), whose reason is a refusal kind", () => {
    const admission = admit({ gate: 64, limits: [{ name: "burst", quota: 100, window: 60_000 }] });
    expectTypeOf(admission.check("203.0.113.7")).toEqualTypeOf<Verdict | Promise<Verdict>>();
    expectTypeOf<Verdict["reason"]>().toEqualTypeOf<RefusalKind | undefined>();
    expectTypeOf(admitFetch(admission, (request: Request) => new Response(request.url))).toEqualTypeOf<
      (request: Request) => Promise<Response>
    >();
    // A handler's extra arguments (a platform's env) pass through.
    expectTypeOf(
      admitFetch(
        admission,
        (request: Request, env: { incoming: unknown }) => new Response(`${request.url} ${String(env.incoming)}`),
      ),
    ).toEqualTypeOf<(request: Request, env: { incoming: unknown }) => Promise<Response>>();
    expectTypeOf(admitNode(admission)).toEqualTypeOf<Middleware>();
    // @ts-expect-error -- a limit's kind is one of the four limiters
    admit({ limits: [{ name: "burst", quota: 100, window: 60_000, kind: "leaky" }] });
  });

  test("changes its limits at run time, and settles a reservation with units, a promise of them, or a cancel", () => {
    const admission = admit({ limits: [{ name: "burst", quota: 100, window: 60_000 }] });
    admission.replaceLimit({ name: "burst", quota: 50, window: 60_000 }); // kind left out: the limit's
    admission.setOverride("acme", "burst", { quota: 500 });
    // @ts-expect-error -- an override sets quota and window, not the algorithm
    admission.setOverride("acme", "burst", { kind: "gcra" });
    const v = admission.check("acme") as Verdict;
    expectTypeOf(v.reservation).toEqualTypeOf<string | undefined>();
    v.settle({ tokens: 300 });
    v.settle(Promise.resolve(undefined));
    v.settle("cancel");
    // @ts-expect-error -- a settle is units, a promise of them, or "cancel"
    v.settle("refund");
    admitNode(admission, { actual: (_req, res) => ({ tokens: Number(res.getHeader("x-usage-tokens")) }) });
    admitFetch(admission, () => new Response(), {
      actual: async (response) => ({ tokens: ((await response.clone().json()) as { usage: number }).usage }),
    });
  });
});

describe("admit's options", () => {
  test("are its stages' and its own, each of one shape", () => {
    // Written out field by field: what admit took before its stages declared their options.
    expectTypeOf<AdmitOptions>().toEqualTypeOf<{
      readonly shedder?: Shedder | Partial<Shed>;
      readonly load?: () => number;
      readonly gate?: Gate | number;
      readonly limit?: Limiter;
      readonly priority?: number | string;
      readonly limits?: readonly Limit[];
      readonly maxKeys?: number;
      readonly maxBytes?: number;
      readonly quota?: QuotaAdmission;
      readonly wait?: Queue<unknown>;
      readonly busyRetryAfter?: Span;
      readonly problem?: boolean;
      readonly fields?: "always" | "low" | "refused";
      readonly clock?: Clock;
    }>();
    expectTypeOf<keyof ServerStageOptions>().toEqualTypeOf<
      "shedder" | "load" | "gate" | "limit" | "priority" | "limits" | "maxKeys" | "maxBytes" | "quota"
    >();
    admit({ shedder: { cpu: 800 }, load: () => 500, gate: 64, priority: "critical", maxKeys: 10, fields: "low" });
    // @ts-expect-error -- a gate is a Gate or its number of places
    admit({ gate: "64" });
    // @ts-expect-error -- a shedder is a Shedder or its fields
    admit({ shedder: 5 });
    // @ts-expect-error -- the load is a function answering thousandths
    admit({ load: 500 });
    // @ts-expect-error -- a priority function is the client guard's (admit's adapters take one per request)
    admit({ priority: () => 0 });
    // @ts-expect-error -- per-key limits are a list
    admit({ limits: { name: "burst", quota: 100, window: 60_000 } });
    // @ts-expect-error -- a client guard's option, not admit's
    admit({ breaker: true });
  });
});
