import { describe, expect, it } from "vitest";
import { main } from "../examples/quota";

describe("example: quota", () => {
  it("admits at least as many requests atomically as sequentially, and leaks nothing", () => {
    const [head, atomic, sequential] = main();
    expect(head).toBe("200 requests over 10000 ms");
    const a = Number(/atomic: +(\d+) admitted/.exec(atomic ?? "")?.[1]);
    const s = /sequential: (\d+) admitted, (\d+) tenant tokens/.exec(sequential ?? "");
    expect(a).toBeGreaterThan(0);
    expect(a).toBeGreaterThanOrEqual(Number(s?.[1]));
    expect(Number(s?.[2])).toBeGreaterThan(0); // the sequential gateway did charge refused requests
  });
});
