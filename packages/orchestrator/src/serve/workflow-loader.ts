import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, extname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Jr2Error } from "@jr2/wire";
import { createJiti } from "jiti";
import type { AnyStateMachine } from "xstate";
import { checkTurnInputsAtLoad } from "../authoring/turn-input-check.js";
import { modelOf } from "../menu/menu.js";
import { recordSourceDigest, sourceDigestOfBytes } from "../menu/source-digests.js";
import type { WorkflowTable } from "../runs/run-host.js";
import { DEFAULT_WORKFLOW_LOAD_TIMEOUT_MS } from "./config.js";

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
  /**
   * How long one module may take to load, in ms (its top-level awaits included); past it the
   * load fails naming the file. Default {@link DEFAULT_WORKFLOW_LOAD_TIMEOUT_MS}; 0 = no limit.
   */
  loadTimeoutMs?: number;
  /** Told `loading workflow <file>` before each module, so a hang names its module. */
  logger?: { info(fields: Record<string, unknown>, message: string): void };
}

const MODULE_FILE = /^(?!.*\.(d|test|spec)\.[cm]?[jt]s$).+\.(ts|js|mts|mjs)$/;

/**
 * Loads every workflow module of a folder with jiti (TypeScript without a build step, SPEC
 * §13): one workflow per `*.ts` / `*.js` file (`.d.ts` and tests skipped), named by the file's
 * base name, whose module exports `machine` (or a default export) built by `jr2Setup`.
 * jiti does not type-check; CI runs `tsc --noEmit` over workflows.
 * @returns name → Machine, in file-name order.
 * @throws Jr2Error `JR2_ERR_WORKFLOW_LOAD_FAILED` naming the folder or the file (missing folder,
 *   a module that throws, does not finish loading within `loadTimeoutMs`, exports no Machine,
 *   or shares its base name with another file)
 * @see SPEC §4.1, §13 "Loading TypeScript workflows"
 */
export async function loadWorkflows(dir: string, options: LoadWorkflowsOptions = {}): Promise<WorkflowTable> {
  const folder = resolve(dir);
  if (!existsSync(folder) || !statSync(folder).isDirectory()) {
    throw new Jr2Error("JR2_ERR_WORKFLOW_LOAD_FAILED", { file: folder, detail: "no such folder" });
  }
  const jiti = jitiFor(folder, options);
  const workflows = new Map<string, AnyStateMachine>();
  const fileOf = new Map<string, string>();
  const files = readdirSync(folder)
    .filter((name) => MODULE_FILE.test(name))
    .sort();
  // Names are checked before any module runs: `same.js` + `same.ts` fail on the name, whatever
  // either module would do when loaded.
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
    fileOf.set(workflow, file);
  }
  for (const [workflow, file] of fileOf) {
    const machine = await importMachine(jiti, file, options);
    workflows.set(workflow, machine);
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
  const machine = await importMachine(jitiFor(dirname(path), options), path, options);
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

/**
 * Imports `file` within the load limit and returns its `machine` (or default) export.
 * A refusal thrown while the module runs (e.g. `JR2_ERR_SETUP_*` from createMachine) keeps its
 * code in the load error's detail and in `cause`.
 */
async function importMachine(
  jiti: Jiti,
  file: string,
  options: LoadWorkflowsOptions,
): Promise<AnyStateMachine> {
  options.logger?.info({ file }, `loading workflow ${file}`);
  let exports: Record<string, unknown>;
  try {
    exports = (await withinLimit(
      jiti.import(file),
      options.loadTimeoutMs ?? DEFAULT_WORKFLOW_LOAD_TIMEOUT_MS,
      file,
    )) as Record<string, unknown>;
  } catch (error) {
    if (error instanceof Jr2Error && error.code === "JR2_ERR_WORKFLOW_LOAD_FAILED") throw error;
    const code = codeOf(error);
    const message = error instanceof Error ? error.message : String(error);
    throw new Jr2Error(
      "JR2_ERR_WORKFLOW_LOAD_FAILED",
      { file, detail: code ? `${code}: ${message}` : message, ...(code ? { causeCode: code } : {}) },
      error,
    );
  }
  const machine = exports.machine ?? exports.default;
  if (!(options.isMachine ?? isJr2Machine)(machine)) {
    throw new Jr2Error("JR2_ERR_WORKFLOW_LOAD_FAILED", {
      file,
      detail: `${describeExport(exports)}; export \`machine\` (or a default export) built by jr2Setup(...).createMachine(...)`,
    });
  }
  // The module's bytes as loaded: a run saves their digest beside its fingerprint (ADR-0272).
  recordSourceDigest(machine as AnyStateMachine, sourceDigestOfBytes(readFileSync(file)));
  // Each Agent's authored input mapper, called once on the default context (issue 22 §2).
  let notes: string[];
  try {
    notes = checkTurnInputsAtLoad(basename(file, extname(file)), machine as AnyStateMachine);
  } catch (error) {
    const code = codeOf(error);
    const message = error instanceof Error ? error.message : String(error);
    throw new Jr2Error(
      "JR2_ERR_WORKFLOW_LOAD_FAILED",
      { file, detail: code ? `${code}: ${message}` : message },
      error,
    );
  }
  for (const note of notes) options.logger?.info({ file }, note);
  loadNotes.set(machine as AnyStateMachine, notes);
  return machine as AnyStateMachine;
}

/** What the load check said of a Machine (a check skipped, and why): `jr2 menu` prints them. */
const loadNotes = new WeakMap<AnyStateMachine, string[]>();

/** The load check's notes of `machine` (issue 22 §2); empty when every mapper was called. */
export function loadNotesOf(machine: AnyStateMachine): string[] {
  return loadNotes.get(machine) ?? [];
}

/**
 * Settles with `load`, or fails naming `file` once `ms` pass (0 = no limit). The timer is not
 * unref'd: a module whose top-level await never settles keeps the process alive until it fires,
 * instead of letting the event loop empty and the process end silently.
 */
function withinLimit<T>(load: Promise<T>, ms: number, file: string): Promise<T> {
  if (ms <= 0) return load;
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new Jr2Error("JR2_ERR_WORKFLOW_LOAD_FAILED", {
            file,
            detail: `did not finish loading within ${ms} ms (a top-level await that never settles?); raise JR2_WORKFLOW_LOAD_TIMEOUT_MS if it is only slow`,
          }),
        ),
      ms,
    );
  });
  return Promise.race([load, limit]).finally(() => clearTimeout(timer));
}

/** A jr2 code carried by a thrown error — by shape: the workflow may see another copy of the class. */
function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.startsWith("JR2_ERR_") ? code : undefined;
}

/** What a module exported instead of a jr2 Machine, for the load error. */
function describeExport(exports: Record<string, unknown>): string {
  const name = "machine" in exports ? "`machine`" : "default" in exports ? "the default export" : undefined;
  if (name === undefined) {
    const keys = Object.keys(exports);
    return `found no \`machine\` or default export (exports: ${keys.length ? keys.join(", ") : "none"})`;
  }
  const value = exports.machine ?? exports.default;
  if (typeof (value as { getInitialSnapshot?: unknown } | null)?.getInitialSnapshot === "function") {
    return `${name} is a plain xstate machine (xstate's createMachine or setup), not one built by jr2Setup`;
  }
  return `${name} is ${value === null ? "null" : Array.isArray(value) ? "an array" : typeof value}`;
}

/** The host's own entry and copies of zod and xstate, so a workflow shares their instances. */
function defaultAliases(): Record<string, string> {
  const aliases: Record<string, string> = {};
  const entry = ["index.js", "index.ts"]
    .map((f) => fileURLToPath(new URL(`../${f}`, import.meta.url)))
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
