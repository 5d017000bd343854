import { existsSync, readdirSync, statSync } from "node:fs";
import { basename, dirname, extname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Jr2Error } from "@jr2/wire";
import { createJiti } from "jiti";
import type { AnyStateMachine } from "xstate";
import { modelOf } from "./menu.js";
import type { WorkflowTable } from "./run-host.js";

/** Options of {@link loadWorkflows}. */
export interface LoadWorkflowsOptions {
  /**
   * Module ids a workflow imports that must resolve to the host's own instances (the Machine's
   * WeakMap-kept walk and the run binding live in them). Default: `@jr2/orchestrator` → this
   * package's entry, and `zod`, `xstate` → the host's copies.
   */
  aliases?: Record<string, string>;
  /** Is this export a jr2 Machine? Default: built by `jr2Setup(...).createMachine`. */
  isMachine?: (value: unknown) => boolean;
}

const MODULE_FILE = /^(?!.*\.(d|test|spec)\.[cm]?[jt]s$).+\.(ts|js|mts|mjs)$/;

/**
 * Loads every workflow module of a folder with jiti (TypeScript without a build step, SPEC
 * §13): one workflow per `*.ts` / `*.js` file (`.d.ts` and tests skipped), named by the file's
 * base name, whose module exports `machine` (or a default export) built by `jr2Setup`.
 * jiti does not type-check; CI runs `tsc --noEmit` over workflows.
 * @returns name → Machine, in file-name order.
 * @throws Jr2Error `JR2_ERR_WORKFLOW_LOAD_FAILED` naming the folder or the file (missing folder,
 *   a module that throws, exports no Machine, or shares its base name with another file)
 * @see SPEC §4.1, §13 "Loading TypeScript workflows"
 */
export async function loadWorkflows(dir: string, options: LoadWorkflowsOptions = {}): Promise<WorkflowTable> {
  const folder = resolve(dir);
  if (!existsSync(folder) || !statSync(folder).isDirectory()) {
    throw new Jr2Error("JR2_ERR_WORKFLOW_LOAD_FAILED", { file: folder, detail: "no such folder" });
  }
  const isMachine = options.isMachine ?? isJr2Machine;
  const jiti = jitiFor(folder, options);
  const workflows = new Map<string, AnyStateMachine>();
  const fileOf = new Map<string, string>();
  const files = readdirSync(folder)
    .filter((name) => MODULE_FILE.test(name))
    .sort();
  for (const name of files) {
    const file = join(folder, name);
    const workflow = basename(name, extname(name));
    const earlier = fileOf.get(workflow);
    if (earlier) {
      throw new Jr2Error("JR2_ERR_WORKFLOW_LOAD_FAILED", {
        file,
        detail: `workflow name \`${workflow}\` is taken by ${earlier}; one module per name`,
      });
    }
    const machine = await importMachine(jiti, file, isMachine);
    workflows.set(workflow, machine);
    fileOf.set(workflow, file);
  }
  return workflows;
}

/**
 * Loads one workflow module (the `jr2 menu` authoring aid); its name is the file's base name.
 * @throws Jr2Error `JR2_ERR_WORKFLOW_LOAD_FAILED` naming the file
 */
export async function loadWorkflowFile(
  file: string,
  options: LoadWorkflowsOptions = {},
): Promise<{ name: string; machine: AnyStateMachine }> {
  const path = resolve(file);
  if (!existsSync(path))
    throw new Jr2Error("JR2_ERR_WORKFLOW_LOAD_FAILED", { file: path, detail: "no such file" });
  const machine = await importMachine(
    jitiFor(dirname(path), options),
    path,
    options.isMachine ?? isJr2Machine,
  );
  return { name: basename(path, extname(path)), machine };
}

type Jiti = ReturnType<typeof createJiti>;

function jitiFor(folder: string, options: LoadWorkflowsOptions): Jiti {
  return createJiti(join(folder, "index.js"), {
    alias: options.aliases ?? defaultAliases(),
    interopDefault: false,
    moduleCache: true,
    fsCache: false,
  });
}

function isJr2Machine(value: unknown): boolean {
  return modelOf(value) !== undefined;
}

/** Imports `file` and returns its `machine` (or default) export. */
async function importMachine(
  jiti: Jiti,
  file: string,
  isMachine: (value: unknown) => boolean,
): Promise<AnyStateMachine> {
  let exports: Record<string, unknown>;
  try {
    exports = (await jiti.import(file)) as Record<string, unknown>;
  } catch (error) {
    throw new Jr2Error(
      "JR2_ERR_WORKFLOW_LOAD_FAILED",
      { file, detail: error instanceof Error ? error.message : String(error) },
      error,
    );
  }
  const machine = exports.machine ?? exports.default;
  if (!isMachine(machine)) {
    throw new Jr2Error("JR2_ERR_WORKFLOW_LOAD_FAILED", {
      file,
      detail: "export `machine` (or a default export) built by jr2Setup(...).createMachine(...)",
    });
  }
  return machine as AnyStateMachine;
}

/** The host's own entry and copies of zod and xstate, so a workflow shares their instances. */
function defaultAliases(): Record<string, string> {
  const aliases: Record<string, string> = {};
  const entry = ["index.js", "index.ts"]
    .map((f) => fileURLToPath(new URL(`./${f}`, import.meta.url)))
    .find(existsSync);
  if (entry) aliases["@jr2/orchestrator"] = entry;
  for (const id of ["zod", "zod/v4", "xstate"]) {
    try {
      aliases[id] = fileURLToPath(import.meta.resolve(id));
    } catch {
      // Left to jiti's own resolution from the workflow's folder.
    }
  }
  return aliases;
}
