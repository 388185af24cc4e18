// The table-driven bad-input harness the packages' tests share (imported by relative path, so
// it is never published): each case runs on a state of its own, must answer exactly what its
// row says, and must leave that state (or the preset) as it was.
import { expect, it } from "vitest";

/** What a case must answer: the exact error it throws, or the value it returns. */
export type Expect = { readonly throws: ErrorConstructor; readonly message: string } | { readonly answers: unknown };

/** A case on a fresh state: its name, what it does, and what that must answer. */
export type Row<S> = readonly [name: string, act: (s: S) => unknown, want: Expect];

/** Tests each row on a state from `fresh`: it answers `want` exactly, and `snapshot` of the state is unchanged. */
export function eachRow<S>(rows: readonly Row<S>[], fresh: () => S, snapshot: (s: S) => unknown): void {
  it.each(rows)("%s", (_, act, want) => {
    const s = fresh();
    const before = snapshot(s);
    expect(answerOf(() => act(s))).toEqual(want);
    expect(snapshot(s)).toEqual(before);
  });
}

/** What `act` answers: the class and message of what it throws, or the value it returns. */
function answerOf(act: () => unknown): Expect {
  try {
    return { answers: act() };
  } catch (e) {
    return { throws: (e as Error).constructor as ErrorConstructor, message: (e as Error).message };
  }
}

/** A construction that must be refused: its name, the construction, and the error's class and message. */
export type Refusal = readonly [name: string, act: () => unknown, type: ErrorConstructor, message: string];

/** Tests each refusal: it throws an error of that class with exactly that message, and leaves `preset` as it was. */
export function eachRefusal(cases: readonly Refusal[], preset: object): void {
  it.each(cases)("%s", (_, act, type, message) => {
    const before = { ...preset };
    const error = thrown(act);
    expect(error).toBeInstanceOf(type);
    expect((error as Error).message).toBe(message);
    expect(preset).toEqual(before);
  });
}

/** What `act` throws, or `undefined` when it returns. */
function thrown(act: () => unknown): unknown {
  try {
    act();
    return undefined;
  } catch (e) {
    return e;
  }
}

/** A hot-path case: the odd call, and the call it is documented to behave as. */
export type Twin<S> = readonly [name: string, odd: (s: S) => unknown, same: (s: S) => unknown];

/**
 * Tests each pair on twin states from `fresh`: the odd call answers as its documented equivalent
 * (both `undefined` or neither, and the same number where that answers one), and leaves its twin
 * in the same state (`snapshot`).
 */
export function eachTwin<S>(cases: readonly Twin<S>[], fresh: () => S, snapshot: (s: S) => unknown): void {
  it.each(cases)("%s", (_, odd, same) => {
    const a = fresh();
    const b = fresh();
    const got = odd(a);
    const want = same(b);
    expect(got === undefined).toBe(want === undefined);
    if (typeof want === "number") expect(got).toBe(want);
    expect(snapshot(a)).toEqual(snapshot(b));
  });
}
