// The reader of a snapshot: an untrusted value turned into fresh engine state, or a SnapshotError
// naming the first bad field. It builds new objects only; the engine swaps them in after the whole
// snapshot has been read, so a bad one changes nothing.
import { MAX_INSTANT, above } from "@tideward/limiters/math";
import { check, read as readers } from "@tideward/time/internal";
import { SnapshotError } from "./errors";
import { FairShare, subjectProblem, weightProblem } from "./fair";
import { Links } from "./hierarchy";
import type { QuotaLink } from "./hierarchy";
import { MAX_KEY_PART, QuotaKey } from "./key";
import { BUCKET, GCRA, WINDOW } from "./kinds";
import type { Kind } from "./kinds";
import { OVERRIDE_FIELDS, limitProblem } from "./limit";
import type { LimitSpec } from "./limit";
import { overrideSpec } from "./limit-book";
import { LimitState } from "./limit-state";
import type { Rule } from "./rule";
import { SNAPSHOT_VERSION } from "./snapshot";
import { STRIDE } from "./table";
/** What {@link readSnapshot} built: fresh state for an engine to adopt. */
export interface Restored {
  readonly clock: number;
  readonly limits: Map<string, LimitState>;
  readonly links: Links;
  readonly fair: FairShare;
  readonly keys: number;
  /** Overrides restored. */
  readonly overrides: number;
}

// A refusal, and a record of exactly its fields, read as every package's snapshot is read.
// (Typed here, so that a call of `fail` ends its branch for the compiler as a function would.)
const fail: (path: string, problem: string) => never = readers.fail;
const record: (value: unknown, path: string, fields: readonly string[]) => Record<string, unknown> = readers.record;

function list(value: unknown, path: string): readonly unknown[] {
  if (!Array.isArray(value) || Object.getPrototypeOf(value) !== Array.prototype)
    fail(path, `must be an array, got ${check.describe(value)}`);
  const array = value as unknown[];
  for (let i = 0; i < array.length; i++)
    if (!Object.prototype.hasOwnProperty.call(array, i)) fail(`${path}[${i}]`, "is missing (a hole)");
  return array;
}

function finite(value: unknown, path: string): number {
  if (typeof value !== "number" || !Number.isFinite(value))
    fail(path, `must be a finite number, got ${check.describe(value)}`);
  return value;
}

// A clock reading the engine accepts: finite and within ±MAX_INSTANT.
function instant(value: unknown, path: string): number {
  const n = finite(value, path);
  if (n > MAX_INSTANT || n < -MAX_INSTANT) fail(path, `must be within ±${MAX_INSTANT} ms (±2^45), got ${n}`);
  return n;
}

function whole(value: unknown, path: string, min: number, max: number): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min || value > max) {
    fail(path, `must be a whole number from ${min} to ${max}, got ${check.describe(value)}`);
  }
  return value;
}

function key(value: unknown, path: string): QuotaKey {
  const r = record(value, path, ["scope", "subject", "resource"]);
  for (const part of ["scope", "subject", "resource"]) {
    const v = r[part];
    if (typeof v !== "string" || v.length === 0 || v.length > MAX_KEY_PART)
      fail(`${path}.${part}`, `must be a string of 1 to ${MAX_KEY_PART} characters, got ${check.describe(v)}`);
  }
  return new QuotaKey(r.scope as string, r.subject as string, r.resource as string);
}

/**
 * Reads an untrusted snapshot into fresh state, checking every field: the version, shapes, that
 * every number is finite and in range (no negative balances, no state from after the clock), that
 * every entry names a known limit and appears once, that links make no cycle, and that the keys
 * fit `maxKeys`.
 *
 * @throws SnapshotError naming the first bad field
 */
export function readSnapshot(value: unknown, maxKeys: number, maxOverrides: number): Restored {
  // A Proxy (a revoked one included) can throw from any reflection on it, anywhere in the tree:
  // what reading it throws is the snapshot's fault, so it is refused as such, never passed on.
  try {
    return read(value, maxKeys, maxOverrides);
  } catch (e) {
    if (e instanceof SnapshotError) throw e;
    fail("snapshot", `could not be read: ${e instanceof Error ? e.message : check.describe(e)}`);
  }
}

function read(value: unknown, maxKeys: number, maxOverrides: number): Restored {
  const probe =
    value !== null && typeof value === "object" ? Object.getOwnPropertyDescriptor(value, "version") : undefined;
  const older: unknown = probe !== undefined && "value" in probe ? probe.value : undefined;
  const v2 = older === 2;
  const v4 = !(older === 2 || older === 3);
  const root = record(value, "snapshot", [
    "version",
    "clock",
    "limits",
    ...(v4 ? ["overrides"] : []),
    "buckets",
    ...(v2 ? [] : ["fullAt"]),
    "windows",
    "gcra",
    "links",
    "subjects",
  ]);
  if (root.version !== SNAPSHOT_VERSION && !v2 && root.version !== 3)
    fail("snapshot.version", `must be ${SNAPSHOT_VERSION} (or 3, or 2), got ${check.describe(root.version)}`);
  const clock = root.clock === null ? -Infinity : instant(root.clock, "snapshot.clock");

  const limits = new Map<string, LimitState>();
  list(root.limits, "snapshot.limits").forEach((raw, i) => {
    const path = `snapshot.limits[${i}]`;
    const spec = record(raw, path, ["name", "capacity", "refill", "window", "burst", "align"]);
    const problem = limitProblem(spec);
    if (problem !== undefined) fail(path, `is not a valid limit: ${problem}`);
    const name = spec.name as string;
    if (limits.has(name)) fail(`${path}.name`, `duplicates the limit ${JSON.stringify(name)}`);
    limits.set(name, new LimitState(Object.freeze({ ...(spec as unknown as LimitSpec) })));
  });

  let overrides = 0;
  if (v4)
    list(root.overrides, "snapshot.overrides").forEach((raw, i) => {
      const path = `snapshot.overrides[${i}]`;
      const e = record(raw, path, ["key", "limit", ...OVERRIDE_FIELDS]);
      const k = key(e.key, `${path}.key`);
      const base = typeof e.limit === "string" ? limits.get(e.limit) : undefined;
      if (base === undefined)
        return fail(`${path}.limit`, `must name a limit in snapshot.limits, got ${check.describe(e.limit)}`);
      if (base.overrides?.has(k.id) === true)
        fail(path, `duplicates an earlier override for key ${k.id} and limit ${JSON.stringify(e.limit)}`);
      if (++overrides > maxOverrides) fail(path, `is past maxOverrides (${maxOverrides}) of this engine`);
      const fields: Record<string, unknown> = {};
      for (const f of OVERRIDE_FIELDS) if (e[f] !== null) fields[f] = e[f];
      const spec = overrideSpec(base.spec, fields);
      const problem = limitProblem(spec);
      if (problem !== undefined) fail(path, `is not a valid override: ${problem}`);
      (base.overrides ??= new Map()).set(k.id, new LimitState(spec, base.ownFor(k, Object.freeze(fields))));
    });

  let keys = 0;
  const entries = (
    field: "buckets" | "fullAt" | "windows" | "gcra",
    kind: Kind,
    fields: readonly string[],
    read: (e: Record<string, unknown>, rule: Rule, path: string) => [number, number],
  ): void => {
    list(root[field], `snapshot.${field}`).forEach((raw, i) => {
      const path = `snapshot.${field}[${i}]`;
      const e = record(raw, path, ["key", "limit", ...fields]);
      const k = key(e.key, `${path}.key`);
      const base = typeof e.limit === "string" ? limits.get(e.limit) : undefined;
      if (base === undefined)
        return fail(`${path}.limit`, `must name a limit in snapshot.limits, got ${check.describe(e.limit)}`);
      // A key with an override keeps its state there, and is checked against it.
      const limit = base.forKey(k);
      if (clock === -Infinity) fail("snapshot.clock", "must be a finite number when the snapshot holds key state");
      const [amount, instant] = read(e, limit.rule, path);
      const table = limit.table(kind);
      if (table.slotOf(k.id) >= 0)
        fail(path, `duplicates an earlier entry for key ${k.id} and limit ${JSON.stringify(e.limit)}`);
      if (++keys > maxKeys) fail(path, `is past maxKeys (${maxKeys}) of this engine`);
      const at = table.insert(k.id) * STRIDE;
      table.data[at] = amount;
      table.data[at + 1] = instant;
    });
  };
  entries("buckets", BUCKET, ["tokens", "at"], (e, rule, path) => {
    if (rule.oneNumber && !v2)
      fail(
        `${path}.limit`,
        `must name a limit whose buckets keep two numbers, got ${JSON.stringify(rule.name)} (its buckets belong in snapshot.fullAt)`,
      );
    const tokens = finite(e.tokens, `${path}.tokens`);
    // A bucket settled in debt owes its capacity at most (and a take forgives a hair below that).
    if (tokens < -rule.capacity - rule.bucketSlack || tokens > rule.capacity)
      fail(
        `${path}.tokens`,
        `must be from −${rule.capacity} (in debt) to ${rule.capacity} (the capacity of ${JSON.stringify(rule.name)}), got ${tokens}`,
      );
    const at = instant(e.at, `${path}.at`);
    if (at > clock) fail(`${path}.at`, `must not be after snapshot.clock (${clock}), got ${at}`);
    // A bucket of one number (a version 2 snapshot): full again once the missing tokens refill.
    return rule.oneNumber ? [0, at + (rule.capacity - tokens) * rule.tick] : [tokens, at];
  });
  if (!v2)
    entries("fullAt", BUCKET, ["full"], (e, rule, path) => {
      if (!rule.oneNumber)
        fail(
          `${path}.limit`,
          `must name a limit whose buckets keep one number, got ${JSON.stringify(rule.name)} (its buckets belong in snapshot.buckets)`,
        );
      const full = finite(e.full, `${path}.full`);
      // Written at a reading of at least −2^45 ms, so never before it (the upper bound is below).
      if (full < -MAX_INSTANT) fail(`${path}.full`, `must be at least −${MAX_INSTANT} ms (−2^45), got ${full}`);
      if (full - clock > rule.bucketMost)
        fail(
          `${path}.full`,
          `must be at most ${rule.bucketMost} ms (twice the depth of ${JSON.stringify(rule.name)}: owing its capacity) after snapshot.clock (${clock}), got ${full}`,
        );
      return [0, full];
    });
  entries("windows", WINDOW, ["end", "used"], (e, rule, path) => {
    const end = finite(e.end, `${path}.end`);
    // It opened at a reading of at least −2^45 ms, so it cannot end before that.
    if (end < -MAX_INSTANT) fail(`${path}.end`, `must be at least −${MAX_INSTANT} ms (−2^45), got ${end}`);
    // A window opens at the clock at the latest, so it ends at most one window later (give or
    // take two float steps: the rounding of an aligned end).
    if (end > above(above(clock + rule.window)))
      fail(
        `${path}.end`,
        `must be at most ${rule.window} ms (the window of ${JSON.stringify(rule.name)}) after snapshot.clock (${clock}), got ${end}`,
      );
    // A window settled in debt counts up to twice its capacity.
    return [whole(e.used, `${path}.used`, 0, 2 * rule.capacity), end];
  });
  entries("gcra", GCRA, ["at", "ahead"], (e, rule, path) => {
    const at = instant(e.at, `${path}.at`);
    if (at > clock) fail(`${path}.at`, `must not be after snapshot.clock (${clock}), got ${at}`);
    const ahead = finite(e.ahead, `${path}.ahead`);
    if (ahead < 0 || ahead > rule.gcraMost)
      fail(
        `${path}.ahead`,
        `must be from 0 to ${2 * rule.tau} ms (burst ${rule.burst} of ${JSON.stringify(rule.name)}, and as much owed), got ${ahead}`,
      );
    return [ahead, at];
  });

  const links = new Links();
  const at = new Map<QuotaLink | undefined, number>();
  list(root.links, "snapshot.links").forEach((raw, i) => {
    const path = `snapshot.links[${i}]`;
    const e = record(raw, path, ["child", "parent", "limit", "ratio"]);
    const added = links.add(
      {
        child: key(e.child, `${path}.child`),
        parent: key(e.parent, `${path}.parent`),
        limit: e.limit as string,
        ratio: e.ratio as number,
      },
      (name) => limits.has(name),
      false,
    );
    if (!added.ok) fail(path, `is not a valid link (${added.code}): ${added.reason}`);
    at.set(links.parentOf(e.limit as string, key(e.child, `${path}.child`)), i);
  });
  // Cycles found once over all the links, each key visited once; named at the link listed last,
  // the one that closed it.
  const loop = links.cycle();
  if (loop.length > 0) {
    const last = loop.reduce((a, b) => ((at.get(b) ?? 0) > (at.get(a) ?? 0) ? b : a));
    fail(
      `snapshot.links[${at.get(last) ?? 0}]`,
      `is not a valid link (cycle): linking ${last.child.id} to ${last.parent.id} for ${JSON.stringify(last.limit)} would close a cycle`,
    );
  }

  const fair = new FairShare();
  const seen = new Set<string>();
  list(root.subjects, "snapshot.subjects").forEach((raw, i) => {
    const path = `snapshot.subjects[${i}]`;
    const e = record(raw, path, ["subject", "weight", "used"]);
    const problem = subjectProblem(e.subject);
    if (problem !== undefined) fail(`${path}.subject`, problem.replace(/^subject /, ""));
    const weight = weightProblem(e.weight);
    if (weight !== undefined) fail(`${path}.weight`, weight.replace(/^weight /, ""));
    const used = whole(e.used, `${path}.used`, 0, Number.MAX_SAFE_INTEGER);
    const subject = e.subject as string;
    if (seen.has(subject)) fail(`${path}.subject`, `duplicates the subject ${JSON.stringify(subject)}`);
    seen.add(subject);
    fair.put(subject, e.weight as number, used);
  });

  return { clock, limits, links, fair, keys, overrides };
}
