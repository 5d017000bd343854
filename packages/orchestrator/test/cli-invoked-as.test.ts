/**
 * The CLI's hints name the command as the user runs it (newcomer findings): `pnpm jr2` under the
 * README's `pnpm jr2` and `pnpm start`, and under the quickstart, which runs `start.mjs` by node
 * (no pnpm lifecycle event) and so says it through `JR2_CLI_INVOKED_AS`; `jr2` as the images' bin.
 */
import { describe, expect, it } from "vitest";
import { invokedAs } from "../src/cli/invocation.js";

describe("the command the CLI's hints name", () => {
  it("is `pnpm jr2` under pnpm's jr2 or start script, and as the quickstart's start.mjs says", () => {
    expect(invokedAs({ npm_lifecycle_event: "jr2" })).toBe("pnpm jr2");
    expect(invokedAs({ npm_lifecycle_event: "start" })).toBe("pnpm jr2");
    expect(invokedAs({ JR2_CLI_INVOKED_AS: "pnpm jr2" })).toBe("pnpm jr2");
  });
  it("is `jr2` for the bin run directly", () => {
    expect(invokedAs({})).toBe("jr2");
  });
});
