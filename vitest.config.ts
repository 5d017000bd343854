import { defineConfig } from "vitest/config";

// Unit tests run in parallel; integration and conformance files run one at a time
// (2 cores, real processes and ports) — SPEC §11.
const shared = { resolve: { conditions: ["source"] }, ssr: { resolve: { conditions: ["source"] } } };
// A dependency that ships TypeScript under the `source` condition (eventsource-parser, pulled in
// by the MCP SDK, issue 29) is transformed by vite instead of loaded by Node as `.ts`.
const server = { deps: { inline: [/eventsource-parser/, /@modelcontextprotocol\/sdk/, /eventsource\//] } };

export default defineConfig({
  test: {
    projects: [
      {
        ...shared,
        test: {
          name: "unit",
          server,
          include: ["packages/*/test/**/*.test.ts"],
          exclude: [
            "packages/*/test/integration/**",
            // Real bwrap, real Turns, wall-time cases: run one file at a time (issue 26).
            "packages/harness/test/sandbox-escapes/**",
            "packages/conformance/test/*.test.ts",
            "**/node_modules/**",
          ],
          testTimeout: 20_000,
        },
      },
      {
        ...shared,
        test: {
          name: "integration",
          server,
          include: [
            "packages/*/test/integration/**/*.test.ts",
            "packages/harness/test/sandbox-escapes/**/*.test.ts",
          ],
          exclude: ["packages/conformance/**", "**/node_modules/**"],
          fileParallelism: false,
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
      {
        ...shared,
        test: {
          name: "conformance",
          server,
          // The tier's pure assertions (test/unit) run with the unit tests.
          include: ["packages/conformance/test/*.test.ts"],
          fileParallelism: false,
          testTimeout: 180_000,
          hookTimeout: 300_000,
        },
      },
    ],
  },
});
