import { describe, expect, it } from "vitest";
import { REPORT_TO, isSettled, settle } from "@tideward/time/internal";
import type { Settleable } from "@tideward/time/internal";

interface Sink {
  readonly got: string[];
}

// A handle as the breaker's Permit and the shedder's Ticket build theirs.
class Handle implements Settleable<Sink> {
  [REPORT_TO]: Sink | undefined;
  constructor(sink: Sink) {
    this[REPORT_TO] = sink;
  }
  report(what: string): void {
    settle(this)?.got.push(what);
  }
}

describe("settle", () => {
  it("gives the handle's target the first time only, and the handle reads settled from then on", () => {
    const sink: Sink = { got: [] };
    const handle = new Handle(sink);
    expect(isSettled(handle)).toBe(false);
    handle.report("pass");
    expect(isSettled(handle)).toBe(true);
    handle.report("fail");
    handle.report("pass");
    expect(sink.got).toEqual(["pass"]);
  });

  it("keeps handles apart: settling one leaves another to the same target open", () => {
    const sink: Sink = { got: [] };
    const a = new Handle(sink);
    const b = new Handle(sink);
    a.report("a");
    expect(isSettled(b)).toBe(false);
    b.report("b");
    b.report("b again");
    expect(sink.got).toEqual(["a", "b"]);
  });
});
