/**
 * Regression M3 (ADR-0235), real bwrap: every absolute path named in a stdio MCP server's args
 * was bound read-only into its sandbox (`installedPaths`) — `args: [..., "/"]` let the server read
 * the git token file and another run's repository, and its stderr carrying the token reached a
 * warn line. Root cause: no guard on what a bind may hold. Now `/`, the work root other than the
 * run's own Worktree, the Harness's data directory and the credential files are refused (the
 * server is down with the reason), and the git token is in the MCP redactor.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { gitTokenValues } from "../../src/tools/mcp/header-secrets.js";
import { openMcpSession } from "../../src/tools/mcp/mcp-session.js";
import { memorySnapshotStore } from "../../src/tools/mcp/snapshot-store.js";
import { createRedactor, withSecretValues } from "../../src/tools/secret-redaction.js";
import { noSandbox, probe } from "./escape-harness.js";

// Outside /tmp: /tmp, /run and /home are private tmpfs in the sandbox, so only a bind reaches these.
const base = mkdtempSync("/var/tmp/jr2-mcp-binds-");
const workRoot = join(base, "work");
const own = join(workRoot, "run1", "ws", "slot");
const other = join(workRoot, ".repos", "run2");
const secrets = join(base, "secrets");
const tokenFile = join(secrets, "git-token");
const TOKEN = "ghp_SECRETTOKEN1234567890abcdef";
mkdirSync(own, { recursive: true });
mkdirSync(other, { recursive: true });
mkdirSync(secrets, { recursive: true });
writeFileSync(join(other, "HEAD"), "other-run\n");
writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
afterAll(() => rmSync(base, { recursive: true, force: true }));

const environment = {
  PATH: "/usr/bin:/bin",
  JR2_WORK_ROOT: workRoot,
  JR2_GIT_TOKEN_FILE: tokenFile,
  JR2_HARNESS_DATA_DIR: join(base, "data"),
};
const script = `cat ${tokenFile} >&2; cat ${join(other, "HEAD")} >&2; exit 1`;

const run = async (extra: string[]) => {
  if (!probe.ok) throw new Error("unreachable");
  const trouble: string[] = [];
  const s = await openMcpSession({
    iid: `r/${Math.random()}`,
    servers: { x: { command: "/bin/sh", args: ["-c", script, ...extra] } },
    cwd: own,
    access: "read",
    store: memorySnapshotStore(),
    context: {
      sandbox: { mode: "on", bwrap: probe.bwrap, user: probe.user, memory: probe.memory },
      environment,
      secrets: withSecretValues(createRedactor([]), gitTokenValues(environment)),
      onTrouble: (m) => trouble.push(m),
    },
    timeouts: { startMs: 5000, listMs: 1000 },
  });
  await s.close();
  return { reason: s.down[0]?.reason ?? "(up)", said: trouble.join("\n") };
};

describe.skipIf(noSandbox)("a stdio MCP server's args bind nothing the Harness keeps (M3)", () => {
  it.each([
    ["/", "/", "that is the whole host"],
    ["the git token file", tokenFile, "lies inside"],
    ["a directory holding the token file", base, "holds"],
    ["another run's repository", other, "lies inside"],
    ["the Harness's data directory", join(base, "data"), "lies inside"],
  ])("refuses %s: the server is down with the reason and read nothing", async (_what, path, why) => {
    if (path === join(base, "data")) mkdirSync(path, { recursive: true });
    const { reason, said } = await run([path]);
    expect(reason).toContain("would bind");
    expect(reason).toContain(why);
    expect(said).not.toContain("ghp_");
    expect(said).not.toContain("other-run");
  });

  it("the run's own Worktree may be named; what the server prints of the git token is redacted", async () => {
    writeFileSync(join(own, "notes"), "mine\n");
    const leak = await run([own]);
    expect(leak.reason).not.toContain("would bind");
    expect(leak.said).not.toContain("other-run");
    expect(leak.said).not.toContain(TOKEN);
    const redactor = withSecretValues(createRedactor([]), gitTokenValues(environment));
    expect(redactor.redact(`token: ${TOKEN}`)).not.toContain(TOKEN);
  });
});
