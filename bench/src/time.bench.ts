// @tideward/time: parseSpan against the `ms` package and a bare parseFloat, and
// Deadline.remaining against the arithmetic it stands for.
import ms from "ms";
import { Deadline, parseSpan } from "@tideward/time";
import { compare } from "./harness";

const texts = ["1.5s", "250ms", "2m", "1h", "90s", "3d", "10ms", "0.5h"];
let i = 0;

await compare("parse a span (cycling through 8 texts)", [
  { name: "@tideward/time parseSpan", fn: () => parseSpan(texts[i++ & 7]) },
  { name: "ms (npm) 2.1.3", fn: () => ms(texts[i++ & 7] as ms.StringValue) },
  { name: "plain parseFloat × 1000 (no units, a floor)", fn: () => parseFloat(texts[i++ & 7]) * 1000 },
]);

const deadline = Deadline.start(5_000, 0);
const end = 5_000;
let now = 0;
await compare("remaining budget of a deadline", [
  { name: "@tideward/time Deadline.remaining", fn: () => deadline.remaining((now = (now + 1) % 7_000)) },
  { name: "plain Math.max(0, end - now)", fn: () => Math.max(0, end - (now = (now + 1) % 7_000)) },
]);
