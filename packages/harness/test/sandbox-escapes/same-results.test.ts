/**
 * The sandbox changes nothing the model reads when nothing is refused (issue 26; the request-bytes
 * pins in test/integration/house/ hold): each Working tool's result — and its error for a missing
 * file or path — is the same text with the sandbox as without it, on the same directory.
 * (`find` is left out: without the sandbox pi runs `fd` with flags Debian's fd-find may lack;
 * inside it `fd --glob` answers.)
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { WorkingSandbox } from "../../src/tools/sandbox/working-sandbox.js";
import { createRedactor } from "../../src/tools/secret-redaction.js";
import { createWorkingTools } from "../../src/tools/working-tools.js";
import { noSandbox, probe } from "./escape-harness.js";

const CALLS: Array<[string, Record<string, unknown>]> = [
  ["read", { path: "README.md" }],
  ["read", { path: "missing.md" }],
  ["read", { path: "no-dir/x" }],
  ["grep", { pattern: "TODO" }],
  ["grep", { pattern: "x", path: "nope" }],
  ["ls", { path: "." }],
  ["ls", { path: "nope" }],
  ["edit", { path: "missing.txt", edits: [{ oldText: "a", newText: "b" }] }],
  ["bash", { command: "cat README.md; ls; echo $HOME >/dev/null; exit 3", timeout: 30 }],
];

describe.skipIf(noSandbox)("what the model reads, with and without the sandbox", () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  /** A fresh run directory with the same files at the same path for each mode. */
  const results = async (sandbox: WorkingSandbox | undefined, cwd: string) => {
    rmSync(cwd, { recursive: true, force: true });
    mkdirSync(join(cwd, "src"), { recursive: true });
    chmodSync(cwd, 0o755);
    writeFileSync(join(cwd, "README.md"), "# demo\nTODO: write docs\n");
    writeFileSync(join(cwd, "src", "a.js"), "// TODO: implement\nexport const a = 1;\n");
    const tools = await createWorkingTools("write", cwd, createRedactor([]), sandbox && { sandbox });
    const out: string[] = [];
    for (const [name, args] of CALLS) {
      const tool = tools.find((t) => t.name === name)!;
      try {
        const r = await tool.execute("call-1", args as never, undefined);
        out.push(`${name}: ${r.content.map((c) => (c.type === "text" ? c.text : c.type)).join("")}`);
      } catch (err) {
        out.push(`${name} threw: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    return out;
  };

  it("is the same text for every tool, found or missing", async () => {
    if (!probe.ok) throw new Error("unreachable");
    const base = mkdtempSync(join(tmpdir(), "jr2-same-"));
    chmodSync(base, 0o755);
    dirs.push(base);
    const cwd = join(base, "run");
    const plain = await results(undefined, cwd);
    const sandboxed = await results(
      { mode: "on", bwrap: probe.bwrap, user: probe.user, memory: probe.memory },
      cwd,
    );
    expect(sandboxed).toEqual(plain);
    // Not vacuous: the calls found things and missed things.
    expect(plain.join("\n")).toContain("TODO: write docs");
    expect(plain.join("\n")).toContain("no such file or directory");
  });
});
