/**
 * Issue 14: the dependency direction is enforced, not described. `pnpm deps` (a step of
 * `pnpm test`) runs dependency-cruiser over every package's src with `.dependency-cruiser.cjs`;
 * these tests show the same rules refuse a wrong-way import and an import circle, accept
 * today's tree, and that every Orchestrator source file sits in a layer folder (ADR-0070).
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
  forbidden: unknown[];
  options: Record<string, unknown>;
};
const { LAYERS, layerRules } = require(join(repoRoot, "packages/orchestrator/dependency-rules.cjs")) as {
  LAYERS: Record<string, string[]>;
  layerRules(src: string): unknown[];
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

const fixture = "packages/orchestrator/test/house/fixtures/wrong-way/src";
const short = (v: IViolation) => ({ rule: v.rule.name, from: v.from, to: v.to });

describe("the dependency direction (issue 14, ADR-0070)", () => {
  it("refuses a menu/ module that imports runs/, naming the rule, the importer and the import", async () => {
    const found = await violationsOf([fixture], [...layerRules(fixture), ...config.forbidden.slice(0, 1)]);
    expect(found.map(short)).toContainEqual({
      rule: "layer-menu",
      from: `${fixture}/menu/decide.ts`,
      to: `${fixture}/runs/run-host.ts`,
    });
    // built.ts and unresolvable.ts reach no layer: only decide.ts breaks the layer table.
    expect(found.filter((v) => v.rule.name.startsWith("layer-")).map(short)).toHaveLength(1);
  });

  it("refuses an import circle, even inside one layer", async () => {
    const found = await violationsOf([fixture], config.forbidden);
    const circles = found.filter((v) => v.rule.name === "no-circular");
    expect(circles).toHaveLength(1);
    expect([`${fixture}/turns/a.ts`, `${fixture}/turns/b.ts`]).toContain(circles[0]!.from);
    expect([`${fixture}/turns/a.ts`, `${fixture}/turns/b.ts`]).toContain(circles[0]!.to);
  });

  it("refuses an import of a built file and an import it cannot resolve", async () => {
    // The repository's two rules, pointed at the fixture's src instead of packages/*/src.
    const forFixture = (config.forbidden as Array<{ name: string; from: object }>)
      .filter((r) => r.name === "not-to-dist" || r.name === "not-to-unresolvable")
      .map((r) => ({ ...r, from: { path: `^${fixture}/` } }));
    const found = await violationsOf([fixture], forFixture);
    expect(found.map((v) => ({ rule: v.rule.name, from: v.from }))).toEqual(
      expect.arrayContaining([
        { rule: "not-to-dist", from: `${fixture}/menu/built.ts` },
        { rule: "not-to-unresolvable", from: `${fixture}/menu/unresolvable.ts` },
      ]),
    );
  });

  it("accepts every package's src as it is", async () => {
    const found = await violationsOf(["packages/*/src"], config.forbidden);
    expect(found.map(short)).toEqual([]);
  }, 60_000);

  it("every Orchestrator source file lives in a layer folder, or is the entry", () => {
    const src = join(repoRoot, "packages/orchestrator/src");
    const files = readdirSync(src, { recursive: true, withFileTypes: true })
      .filter((d) => d.isFile() && /\.[cm]?tsx?$/.test(d.name))
      .map((d) => relative(src, join(d.parentPath, d.name)));
    const outside = files.filter((f) => f !== "index.ts" && !(f.split("/")[0]! in LAYERS));
    expect(outside).toEqual([]);
  });
});
