// Every policy the guard and admit compose, one module each. A new policy is a module in this
// folder and a line in each list below: its options join the guard's and admit's (by the side it
// stands on: ClientStageOptions, ServerStageOptions), its stage joins their pipelines, the
// simulator's policies and otel's gauges, and a server's refusal by it is answered with the
// status and the RateLimit fields its stage gives (`status`, `fields`: see stage.ts).
import type { StageDef } from "../stage";
import { breaker } from "./breaker";
import type { BreakerOption } from "./breaker";
import { bucket } from "./bucket";
import type { BucketOption } from "./bucket";
import { budget } from "./budget";
import type { BudgetOption } from "./budget";
import { gate } from "./gate";
import type { GateOption } from "./gate";
import { keyed } from "./keyed";
import type { KeyedOption } from "./keyed";
import { limit } from "./limit";
import type { LimitOption } from "./limit";
import { quota } from "./quota";
import type { QuotaOption } from "./quota";
import { shedder } from "./shedder";
import type { ShedderOption } from "./shedder";

/** Every stage's module. */
export const STAGES = [bucket, gate, limit, shedder, breaker, budget, keyed, quota] as const;

/** The options the stages of a client guard own. */
export interface ClientStageOptions
  extends BucketOption, GateOption, LimitOption, ShedderOption, BreakerOption, BudgetOption {}

/** The options the stages of a server admission (`admit`) own. */
export interface ServerStageOptions extends ShedderOption, GateOption, LimitOption, KeyedOption, QuotaOption {}

/** Which policy refused a call, as its stage names it. */
export type StageKind = (typeof STAGES)[number]["kind"];

/** The modules of one side, in the order their stages are asked. */
export function stagesOf(side: "client" | "server"): readonly StageDef[] {
  return (STAGES as readonly StageDef[])
    .filter((d) => d.place[side] !== undefined)
    .sort((a, b) => (a.place[side] as number) - (b.place[side] as number));
}
