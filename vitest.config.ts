import { defineConfig } from "vitest/config";

// Tests run against the TypeScript sources of the workspace packages (no build step needed).
const conditions = ["@rewind/source", "node", "development|production"];

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    include: [
      "libs/**/*.test.ts",
      "services/**/*.test.ts",
      "load-tests/**/*.test.ts",
      "helm/**/*.test.ts",
      "deploy/**/*.test.ts",
    ],
    exclude: ["**/node_modules/**", "**/dist/**"],
    testTimeout: 30_000,
    // Set-up hooks make databases, migrate them and start servers; with the suite's files running
    // side by side on two cores that can take well over vitest's 10 s default.
    hookTimeout: 60_000,
    // Commands the tests spawn keep no compiled scripts in the user's cache folder (the cache's
    // own test points it at a folder of its own).
    // TZ: the sandbox's epoch 1 needs its process at UTC, set by the launcher (bin/rewind.mjs).
    env: { REWIND_CACHE_DIR: "", TZ: "UTC" },
    reporters: ["default", "./scripts/summary-reporter.ts"],
    // isolated-vm is a native addon: forks keep each test file in its own process.
    pool: "forks",
    // The harsher host: with --expose-gc the sandbox must still hide the collector from scripts.
    poolOptions: { forks: { execArgv: ["--expose-gc"] } },
  },
});
