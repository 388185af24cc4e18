// A concurrency gate as a stage: a place for each call in flight. In a client guard it is peeked
// at its place and entered last, as the bucket is; in front of a server it is entered at its
// place, so that the place is held while a quota store answers.
import { Gate } from "@tideward/limiters";
import { check } from "@tideward/time/internal";
import type { Host, Stage, Side, StageDef } from "../stage";

/** The gate option, of the guard and of admit. */
export interface GateOption {
  /**
   * A concurrency limit on calls in flight (a guard's attempts, the requests in admit's
   * handlers), or the gate itself. @defaultValue none
   */
  readonly gate?: Gate | number;
}

/**
 * The gate `value` gives at `what` (its path and what it counts: `"admit gate (requests in
 * flight)"`): itself, or one of that many places; `undefined` for none.
 */
export function parseGate(value: unknown, what: string): Gate | undefined {
  if (check.has(value, "enter")) return value as Gate;
  if (value === undefined) return undefined;
  return new Gate(check.integer(value, what, 1));
}

/** A gate in the pipeline: its token is `true`, given back when the call settles. */
export class GateStage implements Stage<true> {
  readonly kind = "gate";
  readonly gate: Gate;
  readonly last: boolean;

  /** @param last - peeked at its place and entered last (a client's gate) */
  constructor(gate: Gate, last: boolean) {
    this.gate = gate;
    this.last = last;
  }

  peek(): boolean {
    return this.gate.peek();
  }

  enter(): true | undefined {
    return this.gate.enter() ? true : undefined;
  }

  settle(): void {
    this.gate.leave();
  }

  release(): void {
    this.gate.leave();
  }
}

export const gate: StageDef<GateOption, Side> = {
  kind: "gate",
  options: ["gate"] satisfies (keyof GateOption)[],
  place: { client: 20, server: 20 },
  parse(o, host: Host) {
    const g = parseGate(o.gate, `${host.owner} gate (${host.side === "client" ? "calls" : "requests"} in flight)`);
    return g === undefined ? undefined : new GateStage(g, host.side === "client");
  },
};
