/**
 * The CLI's hints name the command as the user runs it (newcomer findings): `pnpm jr2` under the
 * README's `pnpm jr2` and `pnpm start`, and under the quickstart, which runs `start.mjs` by node
 * (no pnpm lifecycle event) and so says it through `JR2_CLI_INVOKED_AS`; `jr2` as the images' bin.
 */
import { describe, expect, it } from "vitest";
import { asInvoked, invokedAs } from "../src/cli/invocation.js";

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

describe("the commands an Orchestrator's message quotes", () => {
  const message =
    "run `r1` has no version 9 (`jr2 history r1` or `GET /runs/r1/history` lists them); see `jr2 show r1`";
  it("are said as the user runs the CLI: each backquoted `jr2 …`, once", () => {
    const said = asInvoked(message, "pnpm jr2");
    expect(said).toBe(
      "run `r1` has no version 9 (`pnpm jr2 history r1` or `GET /runs/r1/history` lists them); see `pnpm jr2 show r1`",
    );
    expect(asInvoked(said, "pnpm jr2")).toBe(said);
  });
  it("stay as they are for the bin, and a jr2 outside backquotes (a path, a word) is not a command", () => {
    expect(asInvoked(message, "jr2")).toBe(message);
    const other = "the data dir .data/jr2.env; jr2 never checks submodules out";
    expect(asInvoked(other, "pnpm jr2")).toBe(other);
  });
});
