// `pnpm start`'s words once the stack is up (scripts/start.mjs): the banner, with a "Start a
// run" line that works as printed, and `--run`: one run followed to its end (`review` given
// the sample repository), then what it pushed to the sample's bare remote.
import { spawn } from "node:child_process";
import { ensureSampleRepo, git } from "./sample-repo.mjs";

/**
 * The banner's "Start a run" line: a command that works as printed (newcomer, session 7: a
 * workflow on a Repo Slot needs its repository as input). The example `review` (on a Repo Slot,
 * ADR-0228) gets the sample repository and its bare remote (made once); else the first workflow.
 */
function startLine(workflows, repoRoot) {
  if (workflows.includes("review")) {
    const sample = ensureSampleRepo(repoRoot);
    return `pnpm jr2 run review --input '${JSON.stringify({ repo: sample.repo, pushUrl: sample.remote })}' --follow`;
  }
  return `pnpm jr2 run ${workflows[0] ?? "<workflow>"} --follow`;
}

/**
 * Prints the banner ({@link bannerText}).
 * @param {Parameters<typeof bannerText>[0]} stack
 */
export function printBanner(stack) {
  console.log(bannerText(stack));
}

/**
 * The banner: where each service listens, the models, the data dir, the repository roots a
 * local `repo` input must be under (`repoRoots`: the Harness's JR2_REPO_ROOTS, `repoRoot`
 * first), the workflows and the commands to start a run, answer a Gate and list runs.
 * @param {{ urls: { orchestrator: string, harness: string, sim: string }, modelLines: string[],
 *   simulated: boolean, dataDir: string, repoRoot: string, repoRoots: string[], workflows: string[] }} stack
 * @returns {string}
 */
export function bannerText({ urls, modelLines, simulated, dataDir, repoRoot, repoRoots, workflows }) {
  // Newcomer review, session 10: a run on one's own repository was refused at start, and
  // nothing said which local roots the Harness reads.
  const roots = repoRoots.join("\n                ");
  return `jr2 is up.
  Orchestrator  ${urls.orchestrator}   (OpenAPI: ${urls.orchestrator}/openapi.json)
  Harness       ${urls.harness}
  Models        ${modelLines.join("\n                ") || "(none: JR2_MODELS is empty)"}${simulated ? `\n                (model-sim is a SIMULATOR, not a model: ${urls.sim})` : ""}
  Data          ${dataDir}   (logs: *.log; the CLI reads jr2.env from here)
  Repositories  ${roots}
                (a local \`repo\` input must be under one of these; more: JR2_REPO_ROOTS=/path[:/path…] pnpm start)

  Workflows     ${workflows.join(", ") || "(none loaded: see orchestrator.log)"}

Start a run:    ${startLine(workflows, repoRoot)}
Answer a Gate:  pnpm jr2 gate <runId> <gateId> <event>
List runs:      pnpm jr2 runs      Cancel: pnpm jr2 cancel <runId>
(from another shell with JR2_DATA_DIR=${dataDir} if you set it)
`;
}

/**
 * `pnpm start --run <workflow>`: runs the CLI's `run --follow --answer-gates` against the stack
 * (`review` with no --input: the sample repository and its bare remote, made once); when it
 * exits, shows what that run pushed and calls `stop` with its exit code.
 * @param {{ run: string, input?: string, gate?: string }} args
 * @param {{ cli: string, repoRoot: string, env: Record<string, string>, stop: (code: number) => void }} stack
 */
export function followFirstRun(args, { cli: cliFile, repoRoot, env, stop }) {
  const cliArgs = ["run", args.run, "--follow", "--answer-gates", args.gate];
  // `review` with no --input: the sample repository and its bare remote (made once).
  const sample = args.run === "review" && !args.input ? ensureSampleRepo(repoRoot) : undefined;
  if (sample) cliArgs.push("--input", JSON.stringify({ repo: sample.repo, pushUrl: sample.remote }));
  if (args.input) cliArgs.push("--input", args.input);
  const cli = spawn(process.execPath, [cliFile, ...cliArgs], {
    // Its hints name `pnpm jr2`, the way this user goes on (the quickstart runs start.mjs by node).
    env: { ...process.env, ...env, JR2_CLI_INVOKED_AS: "pnpm jr2" },
    stdio: "inherit",
  });
  cli.on("exit", (code) => {
    if (sample) showPushed(sample.remote);
    stop(code ?? 1);
  });
}

/** After a `review` run on the sample: the branches the run pushed to the sample's bare remote, and their log. */
function showPushed(remote) {
  try {
    const branches = git(remote, "for-each-ref", "--format=%(refname:short)", "refs/heads/jr2/")
      .split("\n")
      .filter(Boolean);
    if (branches.length === 0) return console.log(`\nnothing was pushed to ${remote}`);
    const branch = branches.at(-1);
    console.log(`\npushed to ${remote}: ${branch}\n$ git -C ${remote} log --format='%h %an: %s' ${branch}`);
    console.log(git(remote, "log", "--format=%h %an: %s", branch));
  } catch (error) {
    console.error(`jr2: reading ${remote}: ${error.message}`);
  }
}
