/**
 * What the `jr2` CLI says about itself, as a newcomer meets it: `--version` prints the version;
 * `jr2` with no command is a usage error (the usage on stderr, exit 2) as a wrong command is —
 * before, it printed the usage and exited 0, so a script calling it wrongly passed; and the
 * commands its hints and usage name are the ones the user can paste: `pnpm jr2 …` when run as the
 * README runs it (`pnpm jr2`), `jr2 …` when run as the package's bin (the images' `jr2`) — also
 * in what the Orchestrator answers: `fork --at 99` names `pnpm jr2 history <run>` under `pnpm jr2`
 * (before, the error's `jr2 history` was printed as it came), and the store's errors name
 * `pnpm jr2 store check`. Needs the built CLI (`pnpm build`).
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listeningUrl } from "./listening-url.js";

const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));
const cli = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));
const version = (
  JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }
).version;

interface Ran {
  code: number | null;
  out: string;
  err: string;
}

/** Runs `file args` in the repo root; never rejects (the exit code is part of the answer). */
function run(file: string, args: string[], env: NodeJS.ProcessEnv): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(file, args, { cwd: repoRoot, env, timeout: 60_000 }, (error, out, err) => {
      const code = error ? (typeof error.code === "number" ? error.code : null) : 0;
      resolve({ code, out, err });
    });
  });
}

/** The environment of a user's shell: no pnpm script around it. */
function shellEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const key of Object.keys(env)) if (key.startsWith("npm_")) delete env[key];
  return env;
}

const jr2 = (args: string[]) => run(process.execPath, [cli, ...args], shellEnv());
const pnpmJr2 = (args: string[]) => run("pnpm", ["-s", "jr2", ...args], shellEnv());

describe.skipIf(!existsSync(cli))("the jr2 CLI as a newcomer runs it", () => {
  it("`jr2 --version` prints the package's version and exits 0", async () => {
    const ran = await jr2(["--version"]);
    expect(ran).toMatchObject({ code: 0, out: `jr2 ${version}\n` });
  });

  it("`jr2` with no command prints the usage on stderr and exits 2, as a wrong command does", async () => {
    const none = await jr2([]);
    expect(none.code).toBe(2);
    expect(none.out).toBe("");
    expect(none.err).toContain("missing command");
    expect(none.err).toContain("\n  jr2 run <workflow>");
    const wrong = await jr2(["rnu"]);
    expect(wrong.code).toBe(2);
    expect(wrong.err).toContain("unknown command `rnu`");
    const help = await jr2(["--help"]);
    expect(help.code).toBe(0);
    expect(help.out).toContain("\n  jr2 run <workflow>");
  });

  it("under `pnpm jr2` (the README's way) its hints and usage say `pnpm jr2 …`; run directly, `jr2 …`", async () => {
    const viaPnpm = await pnpmJr2(["show"]);
    expect(viaPnpm.code).toBe(1);
    expect(viaPnpm.err).toContain("missing <runId>; list runs with `pnpm jr2 runs`");
    const usage = await pnpmJr2([]);
    expect(usage.code).toBe(2);
    expect(usage.err).toContain("`pnpm jr2 --help` lists them");
    expect(usage.err).toContain("\n  pnpm jr2 run <workflow>");
    expect(usage.err).not.toMatch(/^ {2}jr2 /m);

    const direct = await jr2(["show"]);
    expect(direct.code).toBe(1);
    expect(direct.err).toContain("missing <runId>; list runs with `jr2 runs`");
    expect(direct.err).not.toContain("pnpm jr2");
  });

  it("the store's own errors name its commands as the user runs the CLI (`pnpm jr2 store check`)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "jr2-cli-invocation-store-"));
    try {
      const file = join(dir, "jr2.sqlite");
      writeFileSync(file, "not a database\n");
      const viaPnpm = await pnpmJr2(["store", "check", "--file", file]);
      expect(viaPnpm.code).toBe(1);
      expect(viaPnpm.err).toContain("the file is not a SQLite database");
      expect(viaPnpm.err).toContain("`pnpm jr2 store check` reads it");
      expect(viaPnpm.err).toContain("run `pnpm jr2 serve --new-store`");
      expect(viaPnpm.err).not.toContain("`jr2 ");
      const direct = await jr2(["store", "check", "--file", file]);
      expect(direct.err).toContain("`jr2 store check` reads it");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.skipIf(!existsSync(cli))("the Orchestrator's hints, as the CLI prints them", () => {
  const TOKEN = "cli-invocation-token-8d2f41c7";
  const workflowsDir = fileURLToPath(new URL("../fixtures/plain-review/", import.meta.url));
  let dataDir: string;
  let server: ChildProcess | undefined;
  let url: string;
  let runId: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "jr2-cli-invocation-"));
    const child = spawn(process.execPath, [cli, "serve", "--harness", "none", "--port", "0"], {
      cwd: repoRoot,
      env: {
        ...shellEnv(),
        JR2_INSTANCE_TOKEN: TOKEN,
        JR2_DATA_DIR: dataDir,
        JR2_WORKFLOWS_DIR: workflowsDir,
        JR2_LOG_LEVEL: "warn",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    server = child;
    url = await listeningUrl(child);
    const started = await fetch(`${url}/workflows/review/runs`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ input: { task: "the parser" } }),
    });
    runId = ((await started.json()) as { runId: string }).runId;
  });
  afterAll(() => {
    server?.kill("SIGTERM");
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it("a version not found names `pnpm jr2 history <run>` under `pnpm jr2`, `jr2 history <run>` run directly", async () => {
    const args = ["fork", runId, "--at", "99", "--url", url, "--token", TOKEN];
    const viaPnpm = await pnpmJr2(args);
    expect(viaPnpm.code).toBe(1);
    expect(viaPnpm.err).toContain(`has no version 99`);
    expect(viaPnpm.err).toContain(`(\`pnpm jr2 history ${runId}\` or`);
    expect(viaPnpm.err).not.toContain("`jr2 ");

    const direct = await jr2(args);
    expect(direct.code).toBe(1);
    expect(direct.err).toContain(`(\`jr2 history ${runId}\` or`);
  });

  it("`jr2 workflows` lists each served workflow's input keys; `jr2 run <workflow> --help` shows that workflow's", async () => {
    const target = ["--url", url, "--token", TOKEN];
    const listed = await jr2(["workflows", ...target]);
    expect(listed.code).toBe(0);
    expect(listed.out).toMatch(
      /^review\n {2}input \(--input JSON, keys\):\n {4}task {2}string, optional, default "a hello\(\) function/m,
    );
    expect(listed.out).toContain("  start: jr2 run review --follow\n");
    expect(listed.out).toMatch(/^triage\n/m);

    const help = await pnpmJr2(["run", "review", "--help", ...target]);
    expect(help.code).toBe(0);
    expect(help.out).toContain("usage: pnpm jr2 run <workflow>");
    expect(help.out).toContain('    task  string, optional, default "a hello() function');
    expect(help.out).not.toMatch(/^triage/m);

    const unknown = await jr2(["workflows", "reveiw", ...target]);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain("no workflow `reveiw` is served (served: review, triage)");
  });

  it("`fork --at` a state no version is in lists the states that would work, the nested Machine's too", async () => {
    const ran = await jr2(["fork", runId, "--at", "nosuchstate", "--url", url, "--token", TOKEN]);
    expect(ran.code).toBe(1);
    // `implement` is the workspace body's state: `--at implement` works, so it is listed.
    expect(ran.err).toMatch(/is in state `nosuchstate` \(its versions' states: [^)]*\bimplement\b/);
    expect(ran.err).toMatch(/its versions' states: [^)]*\bworking\b/);
  });

  it("`fork --at 0` and `--at -1` say what --at takes (before: the server's `Too small`, node's `ambiguous`)", async () => {
    for (const at of ["0", "-1"]) {
      const ran = await jr2(["fork", runId, "--at", at, "--url", url, "--token", TOKEN]);
      expect(ran.code).toBe(1);
      expect(ran.err).toContain(`\`--at ${at}\` is no version; --at takes a version number (1 or more`);
      expect(ran.err).toContain(`\`jr2 history ${runId}\` lists them) or a state name`);
      expect(ran.err).not.toMatch(/Too small|ambiguous/);
    }
  });
});
