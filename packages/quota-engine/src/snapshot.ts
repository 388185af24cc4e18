// The snapshot format and its writer; the reader, which takes an untrusted value, is
// snapshot-read.ts.
import type { FairShare } from "./fair";
import type { Links } from "./hierarchy";
import { QuotaKey } from "./key";
import { BUCKET, GCRA, WINDOW } from "./kinds";
import type { LimitSpec } from "./limit";
import type { LimitState } from "./limit-state";
import { STRIDE } from "./table";

/**
 * The snapshot format's version. Version 4 adds `overrides`, the keys with a limit of their own
 * (their state listed with the others, under the limit's name); `restore` still reads versions 3
 * and 2. Version 3 lists the buckets of one number (a limit whose ms a token
 * is a whole number of 2^-7 ms) in `fullAt`, as the instant each is full again; version 2 had every
 * bucket as `{ tokens, at }`, and `restore` still reads it (a bucket of one number converted as a
 * charge would leave it). Version 2 also made GCRA state `{ at, ahead }` (version 1 had one
 * absolute `tat`, which rounds near `Date.now()`); `restore` refuses version 1.
 */
export const SNAPSHOT_VERSION = 4;

/** A {@link QuotaKey}'s parts, as snapshots store them. */
export interface KeyParts {
  readonly scope: string;
  readonly subject: string;
  readonly resource: string;
}

/** A token bucket's state: `tokens` held at instant `at` (ms); it refills from there. A take forgives a billionth of the capacity (at most 2^-10 of a token), so `tokens` may be a hair below 0. */
export interface BucketEntry {
  readonly key: KeyParts;
  readonly limit: string;
  /** Tokens held at `at`: from 0 to the limit's capacity, fractions allowed. */
  readonly tokens: number;
  /** Milliseconds; at most the snapshot's clock. */
  readonly at: number;
}

/**
 * A token bucket of one number's state: the instant it is full again (ms); at `t` it lacks `max(full − t, 0) · refill / window` tokens of its capacity.
 */
export interface FullAtEntry {
  readonly key: KeyParts;
  readonly limit: string;
  /** When the bucket is full again (ms): at most the limit's depth (`capacity · window / refill`, and the slack) after the snapshot's clock. */
  readonly full: number;
}

/** A fixed window's state: the open window, which ends at `end` (ms, exclusive), has counted `used` units. */
export interface WindowEntry {
  readonly key: KeyParts;
  readonly limit: string;
  /** Milliseconds; at most one window after the snapshot's clock. */
  readonly end: number;
  /** Units, a whole number from 0 to the limit's capacity. */
  readonly used: number;
}

/**
 * A GCRA flow's state: its theoretical arrival time is `at + ahead` (ms), kept as two numbers
 * because near `Date.now()` one absolute instant would round to 2^-12 ms.
 */
export interface GcraEntry {
  readonly key: KeyParts;
  readonly limit: string;
  /** The instant of the flow's latest admission (ms); at most the snapshot's clock. */
  readonly at: number;
  /** How far ahead of `at` the flow then was (ms): from 0 to the limit's tolerance (`burst · window / refill`). */
  readonly ahead: number;
}

/**
 * A key with a limit of its own under a limit's name: the fields it sets, `null` for each it takes
 * from the limit. Its state is listed with the others', under the limit's name.
 */
export interface OverrideEntry {
  /** The key with a limit of its own. */
  readonly key: KeyParts;
  /** The limit it overrides, by name. */
  readonly limit: string;
  /** Units, or null: the limit's. */
  readonly capacity: number | null;
  /** Units per `window`, or null: the limit's. */
  readonly refill: number | null;
  /** Milliseconds, or null: the limit's. */
  readonly window: number | null;
  /** Units, or null: the limit's. */
  readonly burst: number | null;
  /** Whether windows open on multiples of `window`, or null: the limit's. */
  readonly align: boolean | null;
}

/** A hierarchy link, keys as parts. */
export interface LinkEntry {
  readonly child: KeyParts;
  readonly parent: KeyParts;
  /** The limit the link applies to. */
  readonly limit: string;
  /** The parent's charge per unit of the child's, a whole number of at least 1. */
  readonly ratio: number;
}

/** A fair-share subject. */
export interface SubjectEntry {
  readonly subject: string;
  /** A whole number of at least 1. */
  readonly weight: number;
  /** Units recorded, a whole number of at least 0. */
  readonly used: number;
}

/**
 * Everything an engine holds, as plain JSON-safe data: what `snapshot()` returns and `restore()`
 * takes. `JSON.parse(JSON.stringify(s))` restores to the same engine.
 */
export interface QuotaSnapshot {
  readonly version: typeof SNAPSHOT_VERSION;
  /** The latest instant the engine has seen (ms), or null if it has seen none. */
  readonly clock: number | null;
  readonly limits: readonly LimitSpec[];
  /** The keys with a limit of their own, in the order set, limit by limit. */
  readonly overrides: readonly OverrideEntry[];
  /** The buckets of two numbers (tokens and when they were counted). */
  readonly buckets: readonly BucketEntry[];
  /** The buckets of one number (when each is full again). */
  readonly fullAt: readonly FullAtEntry[];
  readonly windows: readonly WindowEntry[];
  readonly gcra: readonly GcraEntry[];
  readonly links: readonly LinkEntry[];
  readonly subjects: readonly SubjectEntry[];
}

/**
 * Everything an engine holds, as the snapshot format has it: limits, links and subjects in the
 * order added, key state table by table in slot order.
 */
export function writeSnapshot(
  clock: number,
  limits: ReadonlyMap<string, LimitState>,
  links: Links,
  fair: FairShare,
): QuotaSnapshot {
  const buckets: BucketEntry[] = [];
  const fulls: FullAtEntry[] = [];
  const windows: WindowEntry[] = [];
  const gcra: GcraEntry[] = [];
  const parts = (id: string): KeyParts => QuotaKey.parse(id).toJSON();
  const held = [...states(limits)];
  // Each entry as the state the slot keeps: the amount at `data[at]`, the instant after it.
  for (const { rule, tables } of held) {
    const table = tables[BUCKET];
    table?.each((id, slot) =>
      rule.oneNumber
        ? fulls.push({ key: parts(id), limit: rule.name, full: table.data[slot * STRIDE + 1] })
        : buckets.push({
            key: parts(id),
            limit: rule.name,
            tokens: table.data[slot * STRIDE],
            at: table.data[slot * STRIDE + 1],
          }),
    );
  }
  for (const { rule, tables } of held) {
    const table = tables[WINDOW];
    table?.each((id, slot) =>
      windows.push({
        key: parts(id),
        limit: rule.name,
        end: table.data[slot * STRIDE + 1],
        used: table.data[slot * STRIDE],
      }),
    );
  }
  for (const { rule, tables } of held) {
    const table = tables[GCRA];
    table?.each((id, slot) =>
      gcra.push({
        key: parts(id),
        limit: rule.name,
        at: table.data[slot * STRIDE + 1],
        ahead: table.data[slot * STRIDE],
      }),
    );
  }
  return {
    version: SNAPSHOT_VERSION,
    clock: clock === -Infinity ? null : clock,
    limits: [...limits.values()].map(({ spec }) => ({ ...spec })),
    overrides: held.flatMap(({ own, spec }) =>
      own === undefined
        ? []
        : [
            {
              key: own.key.toJSON(),
              limit: spec.name,
              capacity: own.fields.capacity ?? null,
              refill: own.fields.refill ?? null,
              window: own.fields.window ?? null,
              burst: own.fields.burst ?? null,
              align: own.fields.align ?? null,
            },
          ],
    ),
    buckets,
    fullAt: fulls,
    windows,
    gcra,
    links: links
      .list()
      .map((l) => ({ child: l.child.toJSON(), parent: l.parent.toJSON(), limit: l.limit, ratio: l.ratio })),
    subjects: fair.snapshot().map(({ subject, weight, used }) => ({ subject, weight, used })),
  };
}

/** Every limit and, after each, its overrides: every table of key state. */
function* states(limits: ReadonlyMap<string, LimitState>): Generator<LimitState> {
  for (const limit of limits.values()) {
    yield limit;
    if (limit.overrides !== undefined) yield* limit.overrides.values();
  }
}
