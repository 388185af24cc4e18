export { ms, seconds, minutes, hours, days, parseSpan, formatSpan } from "./span";
export type { Span, SpanInput } from "./span";
export { systemClock, ManualClock } from "./clock";
export type { Clock } from "./clock";
export { systemRandom, seededRandom } from "./random";
export type { Random } from "./random";
export { Deadline } from "./deadline";
export { isOptionError } from "./option-error";
export type { OptionError } from "./option-error";
