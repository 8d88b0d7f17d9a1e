import { defineConfig } from "vitest/config";

/**
 * One run, four projects (`npx vitest run --project unit` is the fast loop): `unit` is pure logic (no
 * Redis, no simulators); `simulator` drives the product against real Redis and the wire-level
 * simulators; `deploy` checks the chart and the image; `browser` drives Chromium. Every project
 * takes the settings below (`extends: true`).
 */
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    reporters: ["default"],
    projects: [
      { extends: true, test: { name: "unit", include: ["test/unit/**/*.test.ts"] } },
      {
        extends: true,
        test: { name: "simulator", include: ["test/{integration,e2e,faults,security}/**/*.test.ts"] },
      },
      { extends: true, test: { name: "deploy", include: ["test/deploy/**/*.test.ts"] } },
      { extends: true, test: { name: "browser", include: ["test/browser/**/*.test.ts"] } },
    ],
  },
});
