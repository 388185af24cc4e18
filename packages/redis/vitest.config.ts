import { mergeConfig } from "vitest/config";
import shared from "../../vitest.shared.ts";

// The type tests alone: the package's own tsconfig takes in every test file and, through them,
// node-redis's types, which cost a type check most of its time.
export default mergeConfig(shared, { test: { typecheck: { tsconfig: "./tsconfig.types.json" } } });
