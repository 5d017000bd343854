/**
 * `pnpm start`'s banner (scripts/start-banner.mjs) names the roots a local `repo` input must be
 * under (newcomer review, session 10): the data dir's `repos` and each JR2_REPO_ROOTS entry,
 * and how to add one. Before, a run on one's own repository was refused at start and the banner
 * never said which roots the Harness reads.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";

interface BannerModule {
  bannerText(stack: {
    urls: { orchestrator: string; harness: string; sim: string };
    modelLines: string[];
    simulated: boolean;
    dataDir: string;
    repoRoot: string;
    repoRoots: string[];
    workflows: string[];
  }): string;
}

// A plain .mjs script, loaded as start.mjs loads it.
const bannerUrl = new URL("../../../scripts/start-banner.mjs", import.meta.url).href;

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("pnpm start's banner", () => {
  it("lists every repository root a local `repo` input may be under, and how to add one", async () => {
    const { bannerText } = (await import(bannerUrl)) as BannerModule;
    const dataDir = mkdtempSync(join(tmpdir(), "jr2-banner-"));
    dirs.push(dataDir);
    const repoRoot = join(dataDir, "repos");
    const text = bannerText({
      urls: {
        orchestrator: "http://127.0.0.1:7400",
        harness: "http://127.0.0.1:7401",
        sim: "http://127.0.0.1:7402",
      },
      modelLines: ["coder → model-sim policy `gitworker:2`"],
      simulated: true,
      dataDir,
      repoRoot,
      repoRoots: [repoRoot, "/home/me/code"],
      workflows: ["review"],
    });
    expect(text).toContain(`  Repositories  ${repoRoot}\n                /home/me/code\n`);
    expect(text).toContain("a local `repo` input must be under one of these; more: JR2_REPO_ROOTS=");
    // The start line's sample repository is under the first root.
    expect(text).toContain(`"repo":"${join(repoRoot, "sample")}"`);
  });
});
