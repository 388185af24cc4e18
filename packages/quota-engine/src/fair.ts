import { check } from "@tideward/time/internal";
import { done, refused } from "./result";
import type { Result } from "./result";

/** The longest a fair-share subject name may be, in UTF-16 code units. */
export const MAX_SUBJECT = 1024;

/** One subject's standing in the fair share. */
export interface FairShareItem {
  readonly subject: string;
  /** Its share relative to the others: a whole number of at least 1. */
  readonly weight: number;
  /** Units recorded against it so far. */
  readonly used: number;
  /** `used / weight`: the lowest is served next. */
  readonly score: number;
}

interface Budget {
  weight: number;
  used: number;
}

/** Why `weight` is not a valid weight, or undefined. */
export function weightProblem(weight: unknown): string | undefined {
  return typeof weight === "number" && Number.isSafeInteger(weight) && weight >= 1
    ? undefined
    : `weight must be a whole number of at least 1, got ${check.describe(weight)}`;
}

/** Why `subject` is not a valid subject name, or undefined. */
export function subjectProblem(subject: unknown): string | undefined {
  if (typeof subject !== "string") return `subject must be a string, got ${check.describe(subject)}`;
  return subject.length === 0 || subject.length > MAX_SUBJECT
    ? `subject must be 1 to ${MAX_SUBJECT} characters, got ${subject.length}`
    : undefined;
}

/**
 * Weighted fair share: subjects with weights and the units each has used; the next to serve is
 * the one with the least used per weight.
 *
 * Scores compare exactly (`usedA · weightB` against `usedB · weightA`) while those products stay
 * under 2^53. Ties go to the heavier weight, then to the subject name in code-unit order, so the
 * same history always picks the same subject.
 */
export class FairShare {
  readonly #subjects = new Map<string, Budget>();

  /** How many subjects there are. */
  get size(): number {
    return this.#subjects.size;
  }

  /** Adds `subject` with `weight` and nothing used. */
  add(subject: string, weight: number): Result<"duplicate_subject" | "invalid_subject"> {
    const problem = subjectProblem(subject) ?? weightProblem(weight);
    if (problem !== undefined) return refused("invalid_subject", `Fair-share ${problem}`);
    if (this.#subjects.has(subject))
      return refused("duplicate_subject", `Fair-share subject ${JSON.stringify(subject)} exists already`);
    this.#subjects.set(subject, { weight, used: 0 });
    return done;
  }

  /** Records `cost` units (a whole number of at least 1) used by `subject`. */
  record(subject: string, cost: number): Result<"unknown_subject" | "invalid_cost"> {
    if (typeof cost !== "number" || !Number.isSafeInteger(cost) || cost < 1) {
      return refused(
        "invalid_cost",
        `Fair-share cost must be a whole number of at least 1, got ${check.describe(cost)}`,
      );
    }
    const budget = typeof subject === "string" ? this.#subjects.get(subject) : undefined;
    if (budget === undefined)
      return refused(
        "unknown_subject",
        `Fair-share subject ${check.describe(subject)} does not exist; add it with addSubject`,
      );
    if (!Number.isSafeInteger(budget.used + cost))
      return refused("invalid_cost", `Fair-share usage of ${JSON.stringify(subject)} would pass 2^53`);
    budget.used += cost;
    return done;
  }

  /** The subject to serve next: least used per weight; `undefined` when there are no subjects. */
  next(): string | undefined {
    let best: string | undefined;
    let bestWeight = 0;
    let bestUsed = 0;
    for (const [subject, { weight, used }] of this.#subjects) {
      if (best === undefined) {
        best = subject;
        bestWeight = weight;
        bestUsed = used;
        continue;
      }
      const mine = used * bestWeight;
      const theirs = bestUsed * weight;
      if (mine < theirs || (mine === theirs && (weight > bestWeight || (weight === bestWeight && subject < best)))) {
        best = subject;
        bestWeight = weight;
        bestUsed = used;
      }
    }
    return best;
  }

  /** Every subject's standing, in the order they were added. */
  snapshot(): FairShareItem[] {
    const out: FairShareItem[] = [];
    for (const [subject, { weight, used }] of this.#subjects) out.push({ subject, weight, used, score: used / weight });
    return out;
  }

  /** The heaviest weight and the most used, for a precision check. */
  extremes(): { weight: number; used: number } {
    let weight = 0;
    let used = 0;
    for (const b of this.#subjects.values()) {
      if (b.weight > weight) weight = b.weight;
      if (b.used > used) used = b.used;
    }
    return { weight, used };
  }

  /** Sets a subject's state wholesale, for restore (already validated). */
  put(subject: string, weight: number, used: number): void {
    this.#subjects.set(subject, { weight, used });
  }
}
