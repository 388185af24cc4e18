// The web playground's build. Sibling packages are bundled from their sources (the
// "@tideward/source" export condition), so the page builds without building them first.
import { defaultClientConditions, defineConfig } from "vite";

export default defineConfig({
  root: import.meta.dirname,
  base: "./",
  resolve: { conditions: ["@tideward/source", ...defaultClientConditions] },
  worker: { format: "es" },
  build: {
    target: "es2022",
    outDir: "dist",
    emptyOutDir: true,
    reportCompressedSize: false,
  },
});
