/**
 * The forge link of a pushed Repo Slot branch (issue 28 §5, ADR-0225): the operator's template
 * filled from the slot's URL in its https, ssh://, scp-like and file:// forms, and a bad template
 * refused at start naming the placeholder.
 */
import { describe, expect, it } from "vitest";
import { forgeLink, forgeRepoOf, parseForgeTemplate, redactRepoUrl } from "../src/runs/forge-link.js";
import { readServeConfig } from "../src/serve/config.js";

const TEMPLATE = "https://git.home/{owner}/{repo}/compare/{base}...{branch}";
const slot = (url: string) => ({ url, base: "main", branch: "jr2/review/run-abc" });

describe("forge link", () => {
  it("fills the template from an https URL (credentials, .git and a trailing slash ignored)", () => {
    expect(forgeLink(TEMPLATE, slot("https://x-access-token:s3cret@git.home/alice/app.git/"))).toEqual({
      link: "https://git.home/alice/app/compare/main...jr2/review/run-abc",
    });
    expect(
      forgeLink("https://{host}/{owner}/{repo}/tree/{branch}", slot("https://git.home:8443/team/sub/app")),
    ).toEqual({
      link: "https://git.home:8443/team/sub/app/tree/jr2/review/run-abc",
    });
  });

  it("reads ssh:// (its port is no web port) and scp-like URLs", () => {
    expect(forgeRepoOf("ssh://git@git.home:2222/alice/app.git")).toEqual({
      host: "git.home",
      owner: "alice",
      repo: "app",
    });
    expect(forgeRepoOf("git@git.home:alice/app.git")).toEqual({
      host: "git.home",
      owner: "alice",
      repo: "app",
    });
    expect(forgeLink(TEMPLATE, slot("git.home:group/sub/app"))).toEqual({
      link: "https://git.home/group/sub/app/compare/main...jr2/review/run-abc",
    });
  });

  it("gives no link for a local repository or an URL naming no owner, and says why", () => {
    expect(forgeLink(TEMPLATE, slot("file:///srv/repos/app"))).toEqual({
      reason: "a local repository (a path or file://) has no forge page",
    });
    expect(forgeLink(TEMPLATE, slot("/srv/repos/app.git"))).toMatchObject({
      reason: expect.stringContaining("local"),
    });
    expect(forgeLink(TEMPLATE, slot("https://git.home/app.git"))).toMatchObject({
      reason: expect.stringContaining("names no owner and repository"),
    });
    expect(forgeLink(TEMPLATE, slot("git://git.home/alice/app"))).toMatchObject({
      reason: expect.stringContaining("git://"),
    });
  });

  it("path-escapes each value, so an owner, a repo or a branch cannot leave its place in the link", () => {
    const made = forgeLink(TEMPLATE, {
      url: "https://git.home/al%3Fice/a%23pp.git",
      base: "release 1",
      branch: "jr2/x/run-1",
    });
    expect(made).toEqual({ link: "https://git.home/al%3Fice/a%23pp/compare/release%201...jr2/x/run-1" });
    expect(forgeRepoOf("evil@host@other:alice/app")).toMatchObject({ reason: expect.any(String) });
  });

  it("refuses a template naming an unknown placeholder, unmatched braces, or no http(s) URL", () => {
    expect(parseForgeTemplate(TEMPLATE)).toBe(TEMPLATE);
    expect(() => parseForgeTemplate("https://git.home/{owner}/{project}")).toThrow(
      /\{project\}.*\{host\} \{owner\}/,
    );
    expect(() => parseForgeTemplate("https://git.home/{owner/{repo}")).toThrow(/\{owner\/\{repo\}|unmatched/);
    expect(() => parseForgeTemplate("javascript:alert({repo})")).toThrow(/http\(s\) URL/);
  });

  it("jr2 serve refuses a bad template at start with JR2_ERR_CONFIG_INVALID naming the placeholder", () => {
    const env = { JR2_FORGE_URL_TEMPLATE: "https://git.home/{owner}/{repository}" };
    expect(() => readServeConfig(env, { dev: true })).toThrow(/\{repository\}/);
    try {
      readServeConfig(env, { dev: true });
    } catch (error) {
      expect((error as { code?: string }).code).toBe("JR2_ERR_CONFIG_INVALID");
    }
    expect(readServeConfig({ JR2_FORGE_URL_TEMPLATE: TEMPLATE }, { dev: true }).forgeTemplate).toBe(TEMPLATE);
  });

  it("redacts a password and query values in a URL shown to a person", () => {
    expect(redactRepoUrl("https://bob:pw@git.home/a/b.git?token=x")).toBe(
      "https://bob:***@git.home/a/b.git?token=***",
    );
  });
});
