// Waiting in tests: a promise the test settles by hand, a call's answer as a value, and a bounded
// wait for a condition.

/** A promise with its resolve and reject. */
export interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

/** A promise with its resolve and reject, for functions the test answers by hand. */
export function deferred<T>(): Deferred<T> {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** What `p` settles with: its value, or what it rejected with. */
export async function outcome<T>(p: Promise<T>): Promise<{ value?: T; error?: unknown }> {
  try {
    return { value: await p };
  } catch (error) {
    return { error };
  }
}

/**
 * Waits until `test` holds, asking it every `every` ms (real time); throws once `ms` have passed
 * without it.
 */
export async function until(test: () => boolean | Promise<boolean>, ms = 5_000, every = 2): Promise<void> {
  const end = performance.now() + ms;
  while (!(await test())) {
    if (performance.now() > end) throw new Error("condition not reached in time");
    await new Promise((r) => setTimeout(r, every));
  }
}
