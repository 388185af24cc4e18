// The page tests' global setup: builds the page once and serves it on a free loopback port for
// every page test file (each runs in a process of its own), and stops the server after the last.
import type { TestProject } from "vitest/node";
import { serve } from "../../../scripts/serve";
import { buildPage } from "../page";

declare module "vitest" {
  export interface ProvidedContext {
    /** The built page's address, `http://127.0.0.1:<port>/`. */
    pageUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const served = await serve(await buildPage(), 0);
  project.provide("pageUrl", served.url);
  return () => served.close();
}
