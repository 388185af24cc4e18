import { describe, expect, it } from "vitest";
import { QuotaEngine } from "@tideward/quota-engine";
import { quotaConformance, reservationConformance, runtimeLimitConformance } from "@tideward/quota-engine/conformance";

// The in-process engine passes the suite the Redis engine will run, near 0 and at Date.now() magnitudes.
quotaConformance({ describe, it, expect }, () => new QuotaEngine(), { name: "QuotaEngine conformance (clock near 0)" });
quotaConformance({ describe, it, expect }, () => new QuotaEngine(), {
  name: "QuotaEngine conformance (clock near 2025)",
  origin: 1_750_000_000_000,
});
// A store whose every answer is a promise runs the same suites: the seam the Redis engine uses.
const behindPromises = (engine: QuotaEngine): QuotaEngine =>
  new Proxy(engine, {
    get: (target, p) => {
      const v = Reflect.get(target, p, target) as unknown;
      return typeof v === "function"
        ? (...args: unknown[]) => Promise.resolve((v as (...a: unknown[]) => unknown).apply(target, args))
        : v;
    },
  });
quotaConformance({ describe, it, expect }, () => behindPromises(new QuotaEngine()), {
  name: "QuotaEngine behind promises (the asynchronous seam)",
});

// Reservations: reserve, settle, cancel and expiry, held to the same hand-computed answers.
reservationConformance({ describe, it, expect }, ({ topUp }) => new QuotaEngine({ topUp }), {
  name: "QuotaEngine reservations (clock near 0)",
});
reservationConformance({ describe, it, expect }, ({ topUp }) => new QuotaEngine({ topUp }), {
  name: "QuotaEngine reservations (clock near 2025)",
  origin: 1_750_000_000_000,
});
reservationConformance({ describe, it, expect }, ({ topUp }) => behindPromises(new QuotaEngine({ topUp })), {
  name: "QuotaEngine reservations behind promises",
});

// Limits that change while the engine runs: replaced, removed, overridden for one key.
runtimeLimitConformance({ describe, it, expect }, () => new QuotaEngine(), {
  name: "QuotaEngine runtime limits (clock near 0)",
});
runtimeLimitConformance({ describe, it, expect }, () => new QuotaEngine(), {
  name: "QuotaEngine runtime limits (clock near 2025)",
  origin: 1_750_000_000_000,
});
runtimeLimitConformance({ describe, it, expect }, () => behindPromises(new QuotaEngine()), {
  name: "QuotaEngine runtime limits behind promises",
});
