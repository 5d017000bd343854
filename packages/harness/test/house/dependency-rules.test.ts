/**
 * Issue 23: the Harness's folder table (ADR-0160) is enforced, not described. `pnpm deps` (a step
 * of `pnpm test`) runs dependency-cruiser over every package's src with `.dependency-cruiser.cjs`,
 * which includes `harnessLayerRules` (packages/harness/dependency-rules.cjs); these tests run
 * the same rules over a fixture tree that breaks them — `provider/` importing `wire/`, a circle,
 * a value import where only types are allowed, an engine-neutral file reaching into `engine/pi/`,
 * a file outside every folder — and over today's src, which they accept.
 */
import { readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { cruise, type ICruiseResult, type IViolation } from "dependency-cruiser";
import { describe, expect, it } from "vitest";

const require = createRequire(import.meta.url);
const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));
const config = require(join(repoRoot, ".dependency-cruiser.cjs")) as {
  forbidden: Array<{ name: string }>;
  options: Record<string, unknown>;
};
const { LAYERS, harnessLayerRules } = require(join(repoRoot, "packages/harness/dependency-rules.cjs")) as {
  LAYERS: Record<string, string[]>;
  harnessLayerRules(src: string): Array<{ name: string }>;
};

async function violationsOf(paths: string[], forbidden: unknown[]): Promise<IViolation[]> {
  const previous = process.cwd();
  process.chdir(repoRoot); // the rules' paths are relative to the repository root
  try {
    const result = await cruise(paths, {
      ...(config.options as object),
      ruleSet: { forbidden } as never,
      validate: true,
    });
    return (result.output as ICruiseResult).summary.violations;
  } finally {
    process.chdir(previous);
  }
}

const fixture = "packages/harness/test/house/fixtures/wrong-way/src";
const short = (v: IViolation) => ({ rule: v.rule.name, from: v.from, to: v.to });
const noCircular = config.forbidden.filter((r) => r.name === "no-circular");

describe("the Harness's dependency direction (issue 23, ADR-0160)", () => {
  it("is part of the repository's rules", () => {
    const names = config.forbidden.map((r) => r.name);
    for (const rule of harnessLayerRules("packages/harness/src")) expect(names).toContain(rule.name);
  });

  it("refuses provider/ importing wire/, naming the rule, the importer and the import", async () => {
    const found = await violationsOf([fixture], harnessLayerRules(fixture));
    expect(found.map(short)).toContainEqual({
      rule: "harness-provider",
      from: `${fixture}/provider/request.ts`,
      to: `${fixture}/wire/server.ts`,
    });
    expect(found.find((v) => v.rule.name === "harness-provider")?.rule.name).toBe("harness-provider");
  });

  it("lets telemetry/ import provider/'s types but refuses its code", async () => {
    const found = await violationsOf([fixture], harnessLayerRules(fixture));
    const telemetry = found.filter((v) => v.from === `${fixture}/telemetry/spans.ts`).map(short);
    expect(telemetry).toEqual([
      {
        rule: "harness-telemetry-types-only",
        from: `${fixture}/telemetry/spans.ts`,
        to: `${fixture}/provider/usage.ts`,
      },
    ]);
  });

  it("refuses an engine-neutral file importing engine/pi/, and a file outside every folder", async () => {
    const found = (await violationsOf([fixture], harnessLayerRules(fixture))).map(short);
    expect(found).toContainEqual({
      rule: "harness-seam-neutral",
      from: `${fixture}/engine/neutral.ts`,
      to: `${fixture}/engine/pi/loop.ts`,
    });
    expect(found.map((v) => `${v.rule}:${v.from}`)).toContain(`harness-outside-folders:${fixture}/stray.ts`);
  });

  it("refuses an import circle", async () => {
    const found = await violationsOf([fixture], noCircular);
    const circles = found.filter((v) => v.rule.name === "no-circular");
    expect(circles).toHaveLength(1);
    expect([`${fixture}/turn/a.ts`, `${fixture}/turn/b.ts`]).toContain(circles[0]!.from);
    expect([`${fixture}/turn/a.ts`, `${fixture}/turn/b.ts`]).toContain(circles[0]!.to);
  });

  it("accepts the Harness's src as it is", async () => {
    const found = await violationsOf(["packages/harness/src"], config.forbidden);
    expect(found.map(short)).toEqual([]);
  }, 60_000);

  it("every Harness source file lives in a folder of the table, or is main.ts or index.ts", () => {
    const src = join(repoRoot, "packages/harness/src");
    const files = readdirSync(src, { recursive: true, withFileTypes: true })
      .filter((d) => d.isFile() && /\.[cm]?tsx?$/.test(d.name))
      .map((d) => relative(src, join(d.parentPath, d.name)));
    const outside = files.filter(
      (f) => !["index.ts", "main.ts"].includes(f) && !(f.split("/")[0]! in LAYERS),
    );
    expect(outside).toEqual([]);
  });

  it("no folder directly holds more than 12 files, and no file is over 400 lines", () => {
    const src = join(repoRoot, "packages/harness/src");
    const entries = readdirSync(src, { recursive: true, withFileTypes: true }).filter((d) => d.isFile());
    const perFolder = new Map<string, number>();
    for (const d of entries) perFolder.set(d.parentPath, (perFolder.get(d.parentPath) ?? 0) + 1);
    const crowded = [...perFolder].filter(([, n]) => n > 12).map(([p, n]) => `${relative(src, p)}: ${n}`);
    expect(crowded).toEqual([]);
    const long = entries
      .map((d) => join(d.parentPath, d.name))
      .filter((p) => require("node:fs").readFileSync(p, "utf8").split("\n").length > 400);
    expect(long).toEqual([]);
  });
});
