#!/usr/bin/env node
import { parseArgs } from "node:util";
import { Jr2Error } from "@jr2/wire";
import { ORCHESTRATOR_VERSION } from "../http/server.js";
import { readServeConfig } from "../serve/config.js";
import { startOrchestrator } from "../serve/main.js";
import { argsMessage } from "./args-message.js";
import { exitQuietlyOnClosedPipe } from "./epipe.js";
import { forkCommand, forkUsage, historyCommand, historyUsage } from "./history-command.js";
import { asInvoked, JR2 } from "./invocation.js";
import { printMenu } from "./menu.js";
import { resumeRetryCommands } from "./resume-retry-commands.js";
import { gateCommand, gateUsage, runCommand, runHelp, runUsage } from "./run-command.js";
import { runsCommands } from "./runs-commands.js";
import { storeCommands } from "./store-commands.js";
import { workflowsCommand, workflowsUsage } from "./workflows-command.js";

/** One `jr2` command: its usage line, what it runs (exit code) and, if more than the usage, its `--help`. */
interface Command {
  usage: string;
  run(args: string[]): Promise<number>;
  help?(args: string[]): Promise<string>;
}

/**
 * The `jr2` command table: `serve` the Orchestrator, print a workflow's `menu`, `run` a
 * workflow (`workflows` lists the served ones and their inputs) and answer a `gate` against a
 * running Orchestrator.
 * @see SPEC §2, issue 2 item 8
 */
const commands: Record<string, Command> = {
  serve: {
    usage: `${JR2} serve [--workflows DIR] [--port N] [--host H] [--harness none|URL] [--dev] [--new-store]`,
    async run(args) {
      const { values } = parseArgs({
        args,
        options: {
          workflows: { type: "string" },
          port: { type: "string" },
          host: { type: "string" },
          harness: { type: "string" },
          dev: { type: "boolean" },
          "new-store": { type: "boolean" },
        },
        strict: true,
      });
      // An empty store where the data dir's marker says one was: started fresh only when asked.
      const { "new-store": newStore, ...flags } = values;
      if (newStore) process.env.JR2_NEW_STORE = "1";
      const config = readServeConfig(process.env, flags);
      const running = await startOrchestrator(config);
      console.log(`jr2 orchestrator listening on ${running.url}`);
      if (running.drifted > 0)
        console.log(
          `${running.drifted} run${running.drifted === 1 ? "" : "s"} drifted (the workflow changed under ${running.drifted === 1 ? "it" : "them"}): ` +
            `list them with \`${JR2} runs --status drifted\`; resume one (\`${JR2} resume <run>\`) or close it (\`${JR2} cancel <run>\`)`,
        );
      const stop = () => {
        running.close().then(
          () => process.exit(0),
          () => process.exit(1),
        );
      };
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
      return await new Promise<number>(() => {});
    },
  },
  menu: {
    usage: `${JR2} menu <workflow-file>`,
    async run(args) {
      const { positionals } = parseArgs({ args, allowPositionals: true, options: {} });
      const file = positionals[0];
      if (!file) throw new Jr2Error("JR2_ERR_CONFIG_INVALID", { detail: "missing <workflow-file>" });
      process.stdout.write(await printMenu(file));
      return 0;
    },
  },
  run: { usage: runUsage, run: (args) => runCommand(args), help: (args) => runHelp(args) },
  workflows: { usage: workflowsUsage, run: (args) => workflowsCommand(args) },
  gate: { usage: gateUsage, run: (args) => gateCommand(args) },
  ...runsCommands,
  history: { usage: historyUsage, run: (args) => historyCommand(args) },
  fork: { usage: forkUsage, run: (args) => forkCommand(args) },
  ...resumeRetryCommands,
  ...storeCommands,
};

function usage(): string {
  return `usage:\n${Object.values(commands)
    .map((c) => `  ${c.usage}`)
    .join("\n")}\n`;
}

/**
 * Runs one `jr2` command line. `--help` prints the usage (0); `--version` prints the package's
 * version (0); no command at all is a usage error like a wrong one: the usage on stderr, exit 2.
 * @returns the process's exit code
 */
async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  const asksHelp = (a: string | undefined) => a === "--help" || a === "-h" || a === "help";
  if (asksHelp(name)) {
    process.stdout.write(usage());
    return 0;
  }
  if (name === "--version" || name === "-v" || name === "version") {
    process.stdout.write(`jr2 ${ORCHESTRATOR_VERSION}\n`);
    return 0;
  }
  if (!name) {
    process.stderr.write(`missing command (\`${JR2} --help\` lists them)\n${usage()}`);
    return 2;
  }
  const command = commands[name];
  if (!command) {
    process.stderr.write(`unknown command \`${name}\`\n${usage()}`);
    return 2;
  }
  if (rest.some((a) => a === "--help" || a === "-h")) {
    // `jr2 run review --help`: the usage and, the Orchestrator asked, the workflow's inputs.
    process.stdout.write(command.help ? asInvoked(await command.help(rest)) : `usage: ${command.usage}\n`);
    return 0;
  }
  try {
    return await command.run(rest);
  } catch (error) {
    const code = error instanceof Jr2Error ? `${error.code}: ` : "";
    // The store's and the Orchestrator's messages quote commands as `jr2 …`: said as the user runs it.
    process.stderr.write(`jr2 ${name}: ${code}${asInvoked(argsMessage(error, command.usage))}\n`);
    // `jr2 run` and `jr2 follow` mark their errors 2 (their 1 means a failed run, ADR-0062).
    const marked = (error as { exitCode?: unknown } | null)?.exitCode;
    return typeof marked === "number" ? marked : 1;
  }
}

// A command whose promise never settles while nothing is left to run — a workflow module's
// top-level await on a promise nothing resolves, with no load limit — would end the process with
// 0 and no word (`jr2 serve` never having listened). `beforeExit` fires exactly then.
let settled = false;
process.on("beforeExit", () => {
  if (settled) return;
  process.stderr.write(
    `jr2 ${process.argv[2] ?? ""}: stopped before finishing: nothing was left to run while it waited ` +
      "(a workflow module's top-level await that never settles? the log names the module being loaded)\n",
  );
  process.exit(1);
});
// `jr2 follow <run> | head -1`: the reader closing the pipe ends the command quietly.
exitQuietlyOnClosedPipe();
main(process.argv.slice(2)).then((code) => {
  settled = true;
  process.exit(code);
});
