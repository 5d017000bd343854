import type { ChatRequest } from "./chat-request.js";
import { type ConversationView, WORKING_TOOLS } from "./conversation.js";
import type { Policy } from "./model-name.js";
import { exampleFromSchema } from "./schema-example.js";

/**
 * What a policy decided to answer, before it is put on the wire (where the model name's faults
 * may still cut, abort or refuse it: simulator.ts, sse.ts).
 * `form` says how a call is written: as a proper tool call, as text in `content`
 * (`textcall`), with its arguments JSON-encoded twice (`stringified`), or cut mid-string
 * (`truncated`).
 */
export type Plan =
  | { kind: "text"; text: string }
  | { kind: "call"; name: string; arguments: unknown; form: CallForm };

/** How a planned call is written on the wire. */
export type CallForm = "tool_call" | "textcall" | "stringified" | "truncated";

/** The text the `silent` policy answers with (field case C5). */
export const SILENT_TEXT = "I have finished the review.";

/** The tool the `inventor` policy calls (field case C2), unless the tools block has one by that name. */
export const INVENTED_TOOL = "run_tests";

// Working-tool calls that read and never write, with arguments that make sense in any cwd.
const WORK_ARGS: Record<string, Record<string, unknown>> = {
  ls: { path: "." },
  read: { path: "README.md" },
  // A worker with write access leaves a file (issue 28: the coder's commit on a Repo Slot).
  write: { path: "jr2-worker.txt", content: "written by model-sim's worker\n" },
  grep: { pattern: "TODO" },
  find: { pattern: "*.md" },
};

function text(value: string): Plan {
  return { kind: "text", text: value };
}

function call(view: ConversationView, name: string, form: CallForm = "tool_call"): Plan {
  return { kind: "call", name, arguments: exampleFromSchema(view.parameters.get(name)), form };
}

/** Calls the first tool the newest "Allowed now:" line lists that is in the tools block. */
function obedient(view: ConversationView): Plan {
  if (view.allowed === null) return text('I see no "Allowed now" line, so I pick nothing.');
  if (view.spent) return text("My pick was delivered. I stop here.");
  const pick = view.allowed.find((name) => view.toolNames.includes(name));
  if (pick === undefined) return text("Nothing is allowed now, so I stop here.");
  return call(view, pick);
}

function workArguments(view: ConversationView, name: string): Record<string, unknown> {
  const schema = view.parameters.get(name) as { properties?: Record<string, unknown> } | undefined;
  const base = exampleFromSchema(schema) as Record<string, unknown>;
  const hints = Object.entries(WORK_ARGS[name] ?? {}).filter(([key]) => key in (schema?.properties ?? {}));
  const args = { ...base, ...Object.fromEntries(hints) };
  // Each write of a conversation says which it is, so a later Turn's write is a change (a commit).
  if (name === "write" && "content" in args) {
    const n = view.calls.filter((past) => past.name === "write").length + 1;
    args.content = `written by model-sim's worker (write ${n})\n`;
  }
  return args;
}

/** A tool `worker` calls: a reading Working tool, or an MCP tool (`mcp__<server>__<tool>`, issue 29). */
function isWork(name: string): boolean {
  return name in WORK_ARGS || name.startsWith("mcp__");
}

/**
 * `worker:N`: N calls of reading Working tools and MCP tools (in tools-block order, round robin)
 * after the newest user message, then obedient.
 */
function worker(view: ConversationView, steps: number): Plan {
  const working = view.toolNames.filter(isWork);
  const since = view.callsSinceUser.filter(
    (past) => WORKING_TOOLS.has(past.name) || isWork(past.name),
  ).length;
  if (view.spent || working.length === 0 || since >= steps) return obedient(view);
  const name = working[since % working.length]!;
  return { kind: "call", name, arguments: workArguments(view, name), form: "tool_call" };
}

/**
 * What `gitworker` runs through the Working tools' `bash` (ADR-0229): the Agent's own git in its
 * sandbox — the Worktree's status (a file it wrote shows as changed until the Turn's commit) and
 * the branch's last commit. Reads only: the repository is mounted read-only in the sandbox.
 */
export const GIT_COMMAND = "git status --short --branch && git log -1 --oneline";

/**
 * `gitworker:N`: `worker:N`'s calls, then one `bash` call of {@link GIT_COMMAND} after the newest
 * user message (when the tools block has `bash`: a writing Agent), then obedient.
 */
function gitworker(view: ConversationView, steps: number): Plan {
  if (view.spent) return obedient(view);
  const working = view.toolNames.filter(isWork);
  const done = view.callsSinceUser.filter((past) => isWork(past.name)).length;
  if (working.length > 0 && done < steps) {
    const name = working[done % working.length]!;
    return { kind: "call", name, arguments: workArguments(view, name), form: "tool_call" };
  }
  const ran = view.callsSinceUser.some((past) => past.name === "bash");
  if (ran || !view.toolNames.includes("bash")) return obedient(view);
  const schema = view.parameters.get("bash");
  const args = { ...(exampleFromSchema(schema) as Record<string, unknown>), command: GIT_COMMAND };
  return { kind: "call", name: "bash", arguments: args, form: "tool_call" };
}

/** Picks a Menu tool outside the newest Allowed list until one such pick is in the history. */
function disobedient(view: ConversationView): Plan {
  const refusedBefore = view.calls.some(
    (past) =>
      past.allowedInForce !== null &&
      !past.allowedInForce.includes(past.name) &&
      !WORKING_TOOLS.has(past.name),
  );
  if (refusedBefore || view.allowed === null || view.spent) return obedient(view);
  const allowed = view.allowed;
  const wrong = view.toolNames.find((name) => !WORKING_TOOLS.has(name) && !allowed.includes(name));
  return wrong === undefined ? obedient(view) : call(view, wrong);
}

/**
 * `stubborn`: never recovers — alternates between two Menu picks outside the newest Allowed list,
 * answer after answer (issue 25 §11: the refusal budget must stop it); obedient only when the
 * Menu holds no such pick.
 */
function stubborn(view: ConversationView): Plan {
  if (view.allowed === null || view.spent) return obedient(view);
  const allowed = view.allowed;
  const wrong = view.toolNames
    .filter((name) => !WORKING_TOOLS.has(name) && !allowed.includes(name))
    .slice(0, 2);
  const name = wrong[view.assistantAnswers % Math.max(1, wrong.length)];
  return name === undefined ? obedient(view) : call(view, name);
}

/** Calls a tool the tools block lacks until one such call is in the history. */
function inventor(view: ConversationView): Plan {
  const inventedBefore = view.calls.some((past) => !view.toolNames.includes(past.name));
  if (inventedBefore || view.spent) return obedient(view);
  const name = view.toolNames.includes(INVENTED_TOOL) ? `${INVENTED_TOOL}_sim` : INVENTED_TOOL;
  return { kind: "call", name, arguments: {}, form: "tool_call" };
}

/** `script:a,b`: the next listed pick not yet made in this conversation, when it is allowed. */
function script(view: ConversationView, picks: readonly string[]): Plan {
  let next = 0;
  for (const past of view.calls) if (past.name === picks[next]) next++;
  const pick = picks[next];
  const ready =
    pick !== undefined && !view.spent && view.allowed?.includes(pick) && view.toolNames.includes(pick);
  return ready ? call(view, pick) : obedient(view);
}

function withForm(plan: Plan, form: CallForm): Plan {
  return plan.kind === "call" ? { ...plan, form } : plan;
}

/**
 * Decide one answer from the request alone (no state between requests: deterministic).
 *
 * `tool_choice: "none"` always gets text; a named `tool_choice` always gets that call.
 *
 * @see SPEC §9, README "Policies"
 */
export function decide(policy: Policy, view: ConversationView, request: ChatRequest): Plan {
  const choice = request.tool_choice;
  if (choice === "none" || view.toolNames.length === 0)
    return text("I answer in text: no tool can be called.");
  if (typeof choice === "object" && choice !== null) return call(view, choice.function.name);
  switch (policy.kind) {
    case "obedient":
    case "slow":
      return obedient(view);
    case "worker":
      return worker(view, policy.steps);
    case "gitworker":
      return gitworker(view, policy.steps);
    case "disobedient":
      return disobedient(view);
    case "stubborn":
      return stubborn(view);
    case "inventor":
      return inventor(view);
    case "silent":
      return view.assistantAnswers < policy.answers ? text(SILENT_TEXT) : obedient(view);
    case "script":
      return script(view, policy.picks);
    case "textcall":
      return view.assistantAnswers < policy.answers ? withForm(obedient(view), "textcall") : obedient(view);
    case "stringified":
      return withForm(obedient(view), "stringified");
    case "truncated":
      return withForm(obedient(view), "truncated");
  }
}
