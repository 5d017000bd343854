import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// The README's "Writing a workflow" example is a contract with newcomers: the built `jr2 menu`
// must load it as is and show the Menu the README describes.
const root = fileURLToPath(new URL("../../../../", import.meta.url));
const readme = readFileSync(join(root, "README.md"), "utf8");
const cli = join(root, "packages/orchestrator/dist/cli/main.js");

describe("the README's workflow example", () => {
  it("loads with the built jr2 and has the Menu the README describes", () => {
    const section = readme.slice(readme.indexOf("## Writing a workflow"));
    const code = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
    expect(code, "a ```ts block under ## Writing a workflow").toBeDefined();
    const dir = mkdtempSync(join(tmpdir(), "jr2-readme-"));
    try {
      const file = join(dir, "tiny-review.ts");
      writeFileSync(file, code!);
      const out = execFileSync(process.execPath, [cli, "menu", file], { encoding: "utf8" });
      expect(out).toContain("Agent reviewer");
      expect(out).toContain("Menu: approve, request_changes");
      expect(out).not.toMatch(/warn/i);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
