/**
 * `jr2 history <runId>` and `jr2 fork <runId> --at <version|state> [--context JSON]`
 * (issue 13 items 1, 2, ADR-0270): a run's saved versions, and a new run forked from one.
 * Read `GET /runs/:runId/history(/:version)`, send `POST /runs/:runId/fork`. `--at <state>`
 * picks the newest version whose state value contains that state — the root's value, or a
 * nested Machine's (a `workspace()` body's) in the version's snapshot.
 * @see SPEC §4.1, §8
 */
import { parseArgs } from "node:util";
import type { ForkAnswer, RunHistory, RunVersion, RunVersionSummary, VersionCause } from "@jr2/wire";
import { type CliTarget, call, resolveTarget, TARGET_OPTIONS } from "./client.js";
import { formatValue } from "./feed-printer.js";
import { followRun } from "./follow-run.js";
import { parseGateAnswers } from "./gate-answers.js";
import { stateLine } from "./history-states.js";
import { JR2 } from "./invocation.js";

export const historyUsage = `${JR2} history <runId> [--json] [--url URL] [--token T]`;
export const forkUsage = `${JR2} fork <runId> --at <version|state> [--context JSON] [--follow] [--answer-gates [GATE=]EVENT[:JSON][,…]] [--url URL] [--token T]`;

/** `jr2 history`: one line per kept version. @returns 0, or throws (main prints it) */
export async function historyCommand(
  args: string[],
  out: NodeJS.WritableStream = process.stdout,
): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { ...TARGET_OPTIONS, json: { type: "boolean", default: false } },
  });
  const runId = positionals[0];
  if (!runId) throw new Error(`missing <runId>; list runs with \`${JR2} runs\`\nusage: ${historyUsage}`);
  const target = resolveTarget(values, process.env);
  const history = await call<RunHistory>(target, "GET", historyPath(runId));
  if (values.json) out.write(`${JSON.stringify(history, null, 2)}\n`);
  else out.write(formatHistory(history, await versionStates(target, history)));
  return 0;
}

/**
 * Each version's state with its nested Machines' (`working › implement`): the list carries the
 * root's value only, so each version is read whole (a few at a time). A version gone meanwhile
 * (folded as the run settled) keeps the root's value.
 */
async function versionStates(target: CliTarget, history: RunHistory): Promise<Map<number, string>> {
  const states = new Map<number, string>();
  const queue = [...history.versions];
  const reader = async () => {
    for (let v = queue.shift(); v; v = queue.shift()) {
      const whole = await call<RunVersion>(target, "GET", `${historyPath(history.runId)}/${v.version}`).catch(
        () => undefined,
      );
      if (whole) states.set(v.version, stateLine(v.value, whole.snapshot));
    }
  };
  await Promise.all(Array.from({ length: Math.min(4, queue.length) }, reader));
  return states;
}

/**
 * `jr2 fork`: forks and says where the fork is and where its files start (Repo Slots at the version's commits); with
 * `--follow`, follows the new run as `jr2 follow` does (answering Gates from `--answer-gates`).
 * @returns 0, or with `--follow` the new run's exit code by its outcome (ADR-0062)
 */
export async function forkCommand(
  args: string[],
  out: NodeJS.WritableStream = process.stdout,
): Promise<number> {
  const { values, positionals } = parseArgs({
    args: negativeAtJoined(args),
    allowPositionals: true,
    options: {
      ...TARGET_OPTIONS,
      at: { type: "string" },
      context: { type: "string" },
      follow: { type: "boolean" },
      "answer-gates": { type: "string", multiple: true },
    },
  });
  if (values["answer-gates"] !== undefined && !values.follow)
    throw new Error("--answer-gates answers Gates while following: add --follow");
  const answers = parseGateAnswers(values["answer-gates"] ?? []);
  const runId = positionals[0];
  if (!runId) throw new Error(`missing <runId>; list runs with \`${JR2} runs\`\nusage: ${forkUsage}`);
  if (!values.at)
    throw new Error(
      `missing --at <version|state>; \`${JR2} history ${runId}\` lists them\nusage: ${forkUsage}`,
    );
  const context = values.context === undefined ? undefined : parseContext(values.context);
  const target = resolveTarget(values, process.env);
  const at = await versionAt(target, runId, values.at);
  const answer = await call<ForkAnswer>(target, "POST", `/runs/${encodeURIComponent(runId)}/fork`, {
    at,
    ...(context === undefined ? {} : { context }),
  });
  out.write(formatFork(answer));
  return values.follow ? followRun(target, answer.runId, answers, out) : 0;
}

/**
 * The fork's answer in words: where it came from, where its files start, how to follow it.
 * Only what the run has (ADR-0228): its Repo Slots' commits, and a plain workspace's empty
 * directory only when the run has one (`plainWorkspaces`; an older Orchestrator's answer, without
 * it, is read as before: empty plain directories beside the slots).
 */
export function formatFork(answer: ForkAnswer): string {
  const { runId, forkedFrom } = answer;
  const repos = Object.entries(answer.repos ?? {});
  const plain = answer.plainWorkspaces;
  const lines: string[] = [];
  if (repos.length > 0)
    lines.push(
      `  its Repo Slots start at version ${forkedFrom.version}'s commits: ${repos.map(([slot, commit]) => `${slot} @ ${commit.slice(0, 12)}`).join(", ")}`,
    );
  if (plain === undefined)
    lines.push(
      repos.length > 0
        ? `  a plain workspace directory (no Repo Slot) starts empty under ${runId}`
        : `  it has no Repo Slots: its plain workspace directory starts empty under ${runId} (files are carried only by Repo Slots)`,
    );
  else if (plain.length > 0)
    lines.push(
      `  its plain workspace${plain.length === 1 ? "" : "s"} ${plain.map((w) => `\`${w}\``).join(", ")} (no Repo Slot) start${plain.length === 1 ? "s" : ""} with an empty directory under ${runId}${repos.length > 0 ? "" : " (files are carried only by Repo Slots)"}`,
    );
  const files = lines.map((l) => `${l}\n`).join("");
  return `forked ${forkedFrom.runId}@${forkedFrom.version} → ${runId}\n${files}  follow it: ${JR2} follow ${runId}\n`;
}

/**
 * The history as a table: version, time, status, state, cause. `states`: each version's state with
 * its nested Machines' ({@link stateLine}); a version missing from it shows the root's value.
 */
export function formatHistory(history: RunHistory, states: ReadonlyMap<number, string> = new Map()): string {
  const head = `${history.runId}: ${history.versions.length} version${history.versions.length === 1 ? "" : "s"} kept\n`;
  const rows = history.versions.map(
    (v) =>
      `  ${String(v.version).padStart(4)}  ${v.at.slice(11, 19)}  ${v.status.padEnd(9)} ${(states.get(v.version) ?? formatValue(v.value)).padEnd(24)} ${formatCause(v.cause)}${formatFiles(v.workspace)}`,
  );
  return `${head}${rows.length > 0 ? `     v  at        status    state                    cause\n${rows.join("\n")}\n` : ""}`;
}

/**
 * A version's files (issue 28): each Repo Slot's commit as `  [code/app @ 1a2b3c4d5e6f]`, what a fork
 * or a retry from it checks out; "" for a version without Repo Slot commits.
 */
export function formatFiles(workspace: Readonly<Record<string, string>> | undefined): string {
  const slots = Object.entries(workspace ?? {});
  if (slots.length === 0) return "";
  return `  [${slots.map(([slot, commit]) => `${slot} @ ${commit.slice(0, 12)}`).join(", ")}]`;
}

/** A version's cause in a few words. */
export function formatCause(cause: VersionCause): string {
  switch (cause.kind) {
    case "pick":
      return `pick ${cause.name} (${cause.child})`;
    case "gate":
      return `Gate ${cause.gate} ← ${cause.event} (by ${cause.by})`;
    case "timer":
      return `timer ${cause.after}`;
    case "fault":
      return `fault${cause.child ? ` (${cause.child})` : ""}: ${cause.reason}`;
    case "settled":
      return `settled ${cause.status}`;
    case "admission":
      return `Turn admitted (${cause.child})`;
    case "fork":
      return `forked from ${cause.from.runId}@${cause.from.version} (by ${cause.by})`;
    case "resume":
      return `resumed, drift accepted (by ${cause.by})`;
    case "retry":
      return `retried ${cause.child} from version ${cause.from} (by ${cause.by})`;
    case "start":
      // A Machine fault in the initial macrostep, retried: started again from the input (ADR-0272).
      return cause.by ? `started again from its input (retry by ${cause.by})` : "start";
    default:
      return cause.kind;
  }
}

/**
 * The version `at` names: a number as it is; a state name → the newest version whose state
 * value (the root's, then a nested Machine's) contains it.
 * @throws Error naming the state and the states the history holds
 */
export async function versionAt(target: CliTarget, runId: string, at: string): Promise<number> {
  if (/^\d+$/.test(at) && Number(at) >= 1) return Number(at);
  // `--at 0`, `--at -1`: the server's `body/at: Too small` or node's "ambiguous" said nothing of what works.
  if (/^-?\d+(\.\d+)?$/.test(at)) throw new Error(atAccepts(runId, `\`--at ${at}\` is no version`));
  const { versions } = await call<RunHistory>(target, "GET", historyPath(runId));
  const newestFirst = [...versions].reverse();
  const byRoot = newestFirst.find((v) => statesOf(v.value).has(at));
  if (byRoot) return byRoot.version;
  // Every state that would have matched, the nested Machines' (`implement`) with the root's.
  const seen = new Set(versions.flatMap((v: RunVersionSummary) => [...statesOf(v.value)]));
  for (const v of newestFirst) {
    const whole = await call<RunVersion>(target, "GET", `${historyPath(runId)}/${v.version}`);
    const nested = nestedValues(whole.snapshot).map((value) => statesOf(value));
    if (nested.some((states) => states.has(at))) return v.version;
    for (const states of nested) for (const state of states) seen.add(state);
  }
  // Plain names: each dotted form (`working.idle`) works too, but lengthens the list.
  const names = [...seen].filter((s) => !s.includes(".")).join(", ");
  throw new Error(
    atAccepts(
      runId,
      `no kept version of ${runId} is in state \`${at}\` (its versions' states: ${names || "none"})`,
    ),
  );
}

/** What `--at` accepts, after `what` was refused. */
function atAccepts(runId: string, what: string): string {
  return (
    `${what}; --at takes a version number (1 or more: \`${JR2} history ${runId}\` lists them) ` +
    "or a state name (the newest version in that state)"
  );
}

/**
 * `--at -1` as `--at=-1`: node's parseArgs takes a value starting with `-` for an option and
 * refuses it as "ambiguous"; joined, it reaches {@link versionAt}, which says what --at takes.
 */
function negativeAtJoined(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const next = args[i + 1];
    if (args[i] === "--at" && next !== undefined && /^-\d/.test(next)) {
      out.push(`--at=${next}`);
      i++;
    } else out.push(args[i]!);
  }
  return out;
}

/** Every state a value names: `{ working: "idle" }` → working, idle, working.idle. */
export function statesOf(value: unknown, prefix = ""): Set<string> {
  const found = new Set<string>();
  const add = (name: string) => {
    found.add(name);
    if (prefix) found.add(`${prefix}.${name}`);
  };
  if (typeof value === "string") add(value);
  else if (value && typeof value === "object")
    for (const [k, v] of Object.entries(value)) {
      add(k);
      for (const s of statesOf(v, prefix ? `${prefix}.${k}` : k)) found.add(s);
    }
  return found;
}

/** The state values of the nested Machines in a persisted snapshot (children's `snapshot.value`). */
function nestedValues(snapshot: unknown): unknown[] {
  const children = (snapshot as { children?: Record<string, { snapshot?: unknown }> } | null)?.children ?? {};
  return Object.values(children).flatMap((c) => {
    const s = c.snapshot as { value?: unknown } | undefined;
    return [...(s?.value === undefined ? [] : [s.value]), ...nestedValues(s)];
  });
}

/** `--context`: a JSON object (a merge patch). @throws Error naming the flag */
function parseContext(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new Error(
      `--context is not JSON (${(error as Error).message}); give a JSON object, e.g. '{"task":"…"}'`,
    );
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new Error("--context must be a JSON object (a merge patch of the run's context)");
  return value as Record<string, unknown>;
}

const historyPath = (runId: string) => `/runs/${encodeURIComponent(runId)}/history`;
