/**
 * The publish hook's result as `jr2 show` and `jr2 follow` print it (ADR-0226, ADR-0290;
 * newcomer review, session 10): a hook that FAILED after printing a pull request's URL was shown
 * as `exit 1 (failed; the push stands): https://…` — the URL read as the hook's result. Now a
 * failed hook says FAILED with its exit and its first line that is not a URL, and no URL as a
 * result; a hook that succeeded still shows the URL it printed.
 */
import type { RunFeedEvent, RunRepos } from "@jr2/wire";
import { describe, expect, it } from "vitest";
import { formatFeedEvent } from "../src/cli/feed-printer.js";
import { repoLines } from "../src/cli/show-command.js";

type Hook = NonNullable<RunRepos["repos"][number]["hook"]>;
const PR = "https://forge.example/alice/app/pulls/7";
const failed: Hook = {
  exit: 1,
  timedOut: false,
  ms: 1200,
  tail: [PR, "gh: could not add label 'jr2': not found"],
  url: PR,
};
const succeeded: Hook = { exit: 0, timedOut: false, ms: 900, tail: ["pull request opened", PR], url: PR };

const repo = (hook: Hook): RunRepos["repos"][number] => ({
  workspace: "code",
  slot: "app",
  path: "/work/run-1/code/app",
  branch: "jr2/review/run-1",
  base: "0123456789abcdef0123",
  pushed: { commit: "fedcba9876543210fedc", url: "https://git.home/alice/app.git" },
  hook,
});
/** The branch view's `hook` line (the first; the hook's output lines follow it, `    | …`). */
const hookLine = (hook: Hook) => repoLines([repo(hook)]).find((l) => l.startsWith("  hook "));
const pushedLine = (hook: Hook) =>
  formatFeedEvent(
    {
      seq: 4,
      at: "2026-12-01T09:00:00.000Z",
      type: "repo-slot",
      event: "pushed",
      workspace: "code",
      slot: "app",
      branch: "jr2/review/run-1",
      commit: "fedcba9876543210fedc",
      url: "https://git.home/alice/app.git",
      hook,
    } as RunFeedEvent,
    "run-1",
  );

describe("a failed publish hook in jr2 show and jr2 follow", () => {
  it("jr2 show says FAILED with the exit and first line, and no URL as the hook's result", () => {
    expect(hookLine(failed)).toBe(
      "  hook    FAILED in 1.2 s, the push stands: exit 1: gh: could not add label 'jr2': not found",
    );
    // The URL is still among the output lines the view shows, as output, not as a result.
    expect(repoLines([repo(failed)])).toContain(`    | ${PR}`);
  });

  it("a timed-out or killed hook failed too; one that printed nothing says only how", () => {
    expect(hookLine({ ...failed, exit: null, timedOut: true, ms: 30_000 })).toBe(
      "  hook    FAILED in 30.0 s, the push stands: timed out (killed): gh: could not add label 'jr2': not found",
    );
    expect(hookLine({ exit: null, signal: "SIGTERM", timedOut: false, ms: 10, tail: [], url: PR })).toBe(
      "  hook    FAILED in 0.0 s, the push stands: killed by SIGTERM",
    );
  });

  it("a hook that succeeded shows the URL it printed", () => {
    expect(hookLine(succeeded)).toBe(`  hook    exit 0 in 0.9 s: ${PR}`);
  });

  it("jr2 follow's pushed line: the URL for a hook that succeeded, FAILED and no URL for one that failed", () => {
    expect(pushedLine(succeeded)).toContain(`; publish hook exit 0 (${PR})`);
    expect(pushedLine(failed)).toMatch(
      /; publish hook FAILED \(exit 1: gh: could not add label 'jr2': not found\); the push stands$/,
    );
    expect(pushedLine(failed)).not.toContain(PR);
  });
});
