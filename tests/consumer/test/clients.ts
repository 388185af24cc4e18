// The programs a new user would write against @tideward/breaker and @tideward/limiters, and the
// guard's first example, as files written into a fresh project. Each prints one JSON line; the
// test compares it with what the packages' READMEs promise.

/** The body both JavaScript clients share, after their imports. */
const body = `
const breaker = new Breaker(); // the sre preset
for (let i = 0; i < 10; i++) breaker.allow(0, 0.5)?.fail(0);
const ratio = breaker.ratio(0).toFixed(3);
const refused = breaker.allow(10, 0.2) === undefined;
const permit = breaker.allow(20, 0.9);
permit?.pass(35);

const bucket = new Bucket(20);
let passed = 0;
for (let i = 0; i < 25; i++) if (bucket.take(0)) passed++;

const second = new Period(2, 1_000, { align: true });
const periods = [second.take(900), second.take(950), second.take(990), second.take(1_000)];

let error = "";
try {
  new Bucket(-5);
} catch (e) {
  error = e.constructor.name;
}

console.log(JSON.stringify({
  preset: [sre.k, sre.window],
  ratio,
  refused,
  settled: permit?.settled,
  passed,
  next: bucket.next(0),
  periods,
  error,
  resolved: RESOLVED,
}));
`;

/** What both JavaScript clients must print (but `resolved`, which names the file each loaded). */
export const promised = {
  preset: [1.5, 10_000],
  ratio: "0.455",
  refused: true,
  settled: true,
  passed: 20,
  next: 50,
  periods: ["under", "hit", "over", "under"],
  error: "RangeError",
};

export const esm = `import { Breaker, sre } from "@tideward/breaker";
import { Bucket, Period } from "@tideward/limiters";
const RESOLVED = [import.meta.resolve("@tideward/breaker"), import.meta.resolve("@tideward/limiters")];
${body}`;

export const cjs = `"use strict";
const { Breaker, sre } = require("@tideward/breaker");
const { Bucket, Period } = require("@tideward/limiters");
const RESOLVED = [require.resolve("@tideward/breaker"), require.resolve("@tideward/limiters")];
${body}`;

/**
 * The first example of the guard's README: a flaky backend behind a breaker, a bucket of two and
 * three attempts. The third call finds the bucket empty and is refused before the backend.
 */
export const guardClient = `import { guard, isRefusal } from "@tideward/guard";

let calls = 0;
const backend = async (id) => {
  if (++calls % 3 === 0) throw new Error("backend down");
  return \`user \${id}\`;
};
const getUser = guard((attempt, id) => backend(id), {
  breaker: {},
  bucket: { rate: 5, burst: 2 },
  retry: { attempts: 3, base: 10, cap: 50 },
});
const first = await getUser("ada");
const second = await getUser("bob");
const third = await getUser("cy").catch((e) => e);
console.log(JSON.stringify({ first, second, refused: isRefusal(third) && third.kind, calls, resolved: import.meta.resolve("@tideward/guard") }));
`;

/** What the guard's client must print (but `resolved`). */
export const guardPromised = { first: "user ada", second: "user bob", refused: "rate", calls: 2 };

/**
 * A TypeScript client: what it must infer, and what must not compile. Checked with the
 * installed declarations only (no @types/node, `skipLibCheck` off), so a declaration that leans
 * on anything a user might not have fails here.
 */
export const typescript = `import { Breaker, Permit, sre } from "@tideward/breaker";
import type { Sre } from "@tideward/breaker";
import { Bucket, Gate, Period } from "@tideward/limiters";
import type { BucketOptions, PeriodAnswer, RateLimit } from "@tideward/limiters";

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const equal = <A, B>(proof: Equal<A, B>): Equal<A, B> => proof;

const policy: Partial<Sre> = { k: 2, window: 5_000 };
const breaker = new Breaker(policy, 0);
const permit = breaker.allow(0, 0.5);
equal<typeof permit, Permit | undefined>(true);
equal<Breaker["policy"], Sre>(true);
equal<typeof sre.k, number>(true);
if (permit !== undefined) permit.pass(1);

const quota = new Period(2, 1_000).take(0);
equal<typeof quota, PeriodAnswer>(true);
equal<PeriodAnswer, "under" | "hit" | "over">(true);
const options: BucketOptions = { burst: 5 };
const report: RateLimit = new Bucket(2, options).rateLimit(0);
const remaining: number = report.remaining;
const entered: boolean = new Gate(1).enter();

// @ts-expect-error -- now is milliseconds as a number
breaker.allow("0", 0.5);
// @ts-expect-error -- no such policy field
new Breaker({ kk: 2 });
// @ts-expect-error -- a policy is readonly
sre.k = 3;
// @ts-expect-error -- a PeriodAnswer is one of three strings
const wrong: PeriodAnswer = "maybe";

export { remaining, entered, wrong, equal };
`;

// The declarations name AbortSignal, which a project has from @types/node or the DOM library.
const strict = {
  strict: true,
  noEmit: true,
  skipLibCheck: false,
  target: "es2022",
  exactOptionalPropertyTypes: true,
  noUncheckedIndexedAccess: true,
  noImplicitOverride: true,
  noPropertyAccessFromIndexSignature: true,
  forceConsistentCasingInFileNames: true,
};

/**
 * tsconfig files for the two resolutions users meet: a Node.js project's own (with @types/node,
 * taken from `typeRoots`) and a browser app's behind a bundler (with the DOM library).
 */
export const tsconfigs = (typeRoots: string) => ({
  nodenext: {
    compilerOptions: {
      ...strict,
      lib: ["es2023"],
      types: ["node"],
      typeRoots: [typeRoots],
      module: "nodenext",
      moduleResolution: "nodenext",
    },
    files: ["client.mts", "client.cts"],
  },
  bundler: {
    compilerOptions: { ...strict, lib: ["es2023", "dom"], types: [], module: "preserve", moduleResolution: "bundler" },
    files: ["client.ts"],
  },
});
