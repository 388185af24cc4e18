// A client's token bucket as a stage: one token an attempt, peeked at its place and taken once
// every other stage has let the attempt through, so a refusal further on wastes no token. With
// `maxWait`, an attempt may wait for its token (see admission.ts `enter`).
import { Bucket } from "@tideward/limiters";
import { check } from "@tideward/time/internal";
import type { Span } from "@tideward/time";
import type { Ask, Host, Stage, StageDef } from "../stage";

/** What a client's token bucket is built from, when the guard builds its own. */
export interface BucketFields {
  /** Tokens per second, above 0. */
  readonly rate: number;
  /** The most tokens held, and what it starts with. @defaultValue the rate */
  readonly burst?: number;
}

/** The guard's bucket options. */
export interface BucketOption {
  /** A rate limit on attempts: each takes one token. @defaultValue none */
  readonly bucket?: Bucket | BucketFields;
  /**
   * How long an attempt may wait for a token when the bucket is empty, in milliseconds; 0 refuses
   * at once with a `Refusal` of kind `"rate"`. A wait never runs past the deadline. @defaultValue 0
   */
  readonly maxWait?: Span;
}

/**
 * The bucket `value` gives at `path`: itself, or one built from `{ rate, burst }` at `now`;
 * `undefined` for none.
 * @throws TypeError/RangeError naming `path` and the field
 */
export function parseBucket(value: unknown, path: string, now: number): Bucket | undefined {
  if (check.has(value, "take")) return value as Bucket;
  if (value === undefined) return undefined;
  if (!check.isObject(value))
    throw check.typeError(path, `must be a Bucket or { rate, burst }, got ${check.describe(value)}`, value);
  const b = check.options<Partial<BucketFields>>(value, ["rate", "burst"], path);
  if (b.rate === undefined)
    throw check.typeError(
      `${path}.rate (tokens per second)`,
      "is missing: a bucket given as fields is { rate, burst }, such as { rate: 5, burst: 2 }",
      undefined,
    );
  const rate = b.rate;
  return check.within(path, ["Bucket"], () => new Bucket(rate, { burst: b.burst, now }));
}

/** A bucket in the pipeline, spent last: its token is `true`. */
export class BucketStage implements Stage<true> {
  readonly kind = "rate";
  readonly last = true;
  readonly bucket: Bucket;
  /** How long an attempt may wait for a token (ms); 0 for none. */
  readonly maxWait: number;

  constructor(bucket: Bucket, maxWait: number) {
    this.bucket = bucket;
    this.maxWait = maxWait;
  }

  peek(now: number, ask: Ask): boolean {
    if (this.bucket.peek(now, ask.cost)) return true;
    ask.retryAfter = this.bucket.next(now, ask.cost);
    return false;
  }

  enter(now: number, ask: Ask): true | undefined {
    if (this.bucket.take(now, ask.cost)) return true;
    ask.retryAfter = this.bucket.next(now, ask.cost);
    return undefined;
  }
}

export const bucket: StageDef<BucketOption, "client"> = {
  kind: "rate",
  options: ["bucket", "maxWait"] satisfies (keyof BucketOption)[],
  place: { client: 10 },
  parse(o, host: Host) {
    const b = parseBucket(o.bucket, `${host.owner} bucket`, host.now);
    const maxWait = o.maxWait === undefined ? 0 : check.nonNegative(o.maxWait, `${host.owner} maxWait (ms)`);
    return b === undefined ? undefined : new BucketStage(b, maxWait);
  },
};
