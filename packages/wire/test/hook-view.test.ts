/**
 * A publish hook's result in words — `hookView`, what the console's Branches panel, `jr2 show`
 * and `jr2 follow` say (ADR-0226, ADR-0290; newcomer review, session 10): a failed hook that printed a pull request's URL is shown failed with its exit and first
 * line that is not a URL, and the URL is not offered as its result; a hook that succeeded shows it.
 */
import { describe, expect, it } from "vitest";
import { hookView } from "../src/index.js";

const PR = "https://forge.example/alice/app/pulls/7";

describe("a publish hook's result in words", () => {
  it("a failed hook: its exit and first line that is not a URL, and no URL", () => {
    expect(
      hookView({ exit: 1, timedOut: false, ms: 1200, tail: [PR, "gh: could not add label"], url: PR }),
    ).toEqual({ ok: false, status: "exit 1", firstLine: "gh: could not add label" });
    expect(hookView({ exit: null, timedOut: true, ms: 30_000, tail: [], url: PR })).toEqual({
      ok: false,
      status: "timed out (killed)",
    });
    expect(hookView({ exit: null, signal: "SIGTERM", timedOut: false, ms: 5, tail: ["bye"] })).toEqual({
      ok: false,
      status: "killed by SIGTERM",
      firstLine: "bye",
    });
  });

  it("a hook that succeeded: the URL it printed", () => {
    expect(hookView({ exit: 0, timedOut: false, ms: 900, tail: ["opened", PR], url: PR })).toEqual({
      ok: true,
      status: "exit 0",
      url: PR,
    });
  });
});
