/**
 * One rule for credentials written into URLs (ADR-0213, ADR-0297): what the Harness refuses as a
 * Repo Slot URL and the Orchestrator refuses in run input and fork context.
 */
import { describe, expect, it } from "vitest";
import { credentialInJson, credentialInUrl } from "../src/index.js";

describe("credentials in URLs", () => {
  it("names a credential query parameter, a password, and (for an https slot) a user; never quotes it", () => {
    expect(credentialInUrl("https://git.home/a.git?ACCESS_TOKEN=x")).toBe(
      "the `ACCESS_TOKEN=` query parameter",
    );
    expect(credentialInUrl("https://s3.example/o?X-Amz-Signature=x")).toBe(
      "the `X-Amz-Signature=` query parameter",
    );
    expect(credentialInUrl("ssh://git:pw@git.home/a.git")).toBe("a password or token");
    expect(credentialInUrl("https://me@git.home/a.git")).toBeUndefined();
    expect(credentialInUrl("https://me@git.home/a.git", { userIsSecret: true })).toBe("a user name");
    for (const fine of ["https://git.home/a.git?ref=main", "/srv/repos/a", "not a url", "git@host:a.git"])
      expect(credentialInUrl(fine)).toBeUndefined();
  });

  it("finds the first such string anywhere in a JSON value, by its path", () => {
    const input = {
      task: "fix it",
      repos: [{ url: "https://ok/a.git" }, { pushUrl: "https://u:p@h/b.git" }],
    };
    expect(credentialInJson(input)).toEqual({ path: ["repos", 1, "pushUrl"], what: "a password or token" });
    expect(credentialInJson("https://h/a?token=t")).toEqual({
      path: [],
      what: "the `token=` query parameter",
    });
    expect(credentialInJson({ a: [1, null, true, { b: "https://h/a" }] })).toBeUndefined();
  });
});
