/**
 * What the `jr2` CLI says about itself, as a newcomer meets it: `--version` prints the version;
 * `jr2` with no command is a usage error (the usage on stderr, exit 2) as a wrong command is —
 * before, it printed the usage and exited 0, so a script calling it wrongly passed; and the
 * commands its hints and usage name are the ones the user can paste: `pnpm jr2 …` when run as the
 * README runs it (`pnpm jr2`), `jr2 …` when run as the package's bin (the images' `jr2`).
 * Needs the built CLI (`pnpm build`).
 */
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

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
});
