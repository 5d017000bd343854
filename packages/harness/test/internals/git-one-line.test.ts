/** git's stderr in a coded error reads as one line of sentences (issue 28; newcomer review, session 10). */
import { describe, expect, it } from "vitest";
import { oneLine } from "../../src/workspace/git/git-command.js";

describe("git's stderr as one line", () => {
  it("joins git's messages with `; ` and the lines it wrapped with a space, dropping blank lines", () => {
    const stderr =
      "fatal: '/srv/app' does not appear to be a git repository\nfatal: Could not read from remote repository.\n\nPlease make sure you have the correct access rights\nand the repository exists.\n";
    expect(oneLine(stderr)).toBe(
      "fatal: '/srv/app' does not appear to be a git repository; fatal: Could not read from remote repository. Please make sure you have the correct access rights and the repository exists.",
    );
    expect(oneLine(" \n")).toBe("(no output)");
    expect(oneLine("x".repeat(700))).toBe(`${"x".repeat(600)}…`);
  });
});
