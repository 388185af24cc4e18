import { describe, expect, it } from "vitest";
import { main as backoff } from "../examples/backoff";

describe("example: backoff", () => {
  it("shows jitter breaking up the herd and a budget holding an outage's retries to a fifth", async () => {
    const lines = await backoff();
    const numbers = lines.map((l) => Number(/(\d+)( calls)?$/.exec(l)?.[1]));
    expect(lines[0]).toMatch(/^1000 clients/);
    const [rigid, full, equal, spread] = numbers.slice(1, 5);
    expect(rigid).toBe(1_000); // all in one slot
    expect(full).toBe(20); // spread over 100 slots: about 10 each
    expect(equal).toBeGreaterThan(full); // half the room: twice as crowded
    expect(spread).toBeGreaterThan(equal);
    expect(numbers.slice(6)).toEqual([4_000, 1_200]);
  });
});
