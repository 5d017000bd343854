import type { AgentEvent, AgentMessage, AgentTool } from "@mariozechner/pi-agent-core";
import { validateToolArguments } from "@mariozechner/pi-ai";
import { isJr2Result, type ToolDispatch, type ToolOutcome } from "../../presenters/pi/menu-tools.js";
import { callKey } from "../../provider/answer/answer-ingestion.js";
import type { NeverRun } from "../../provider/model-request.js";
import { insideCwd, pathArgument, withBashTimeout } from "../../tools/working-tools.js";
import { type CallFate, notRunFate } from "../../transcript/transcript-answer.js";
import { type NotRunReason, type RunState, textOf } from "./run-state.js";

/**
 * The seat's tool calls: each one pi runs comes here — a pick goes to the Turn (`menuCall`, its
 * receipt comes back), a Working tool runs inside the cwd, and a call that must not run (after
 * the Turn ended, after a runaway, refused at ingestion) gets the Turn's not-run receipt. Where
 * pi answered on its own (unknown tool, schema failure), {@link interceptToolResult} puts the
 * receipt in its place, so pi's text never reaches the model.
 * @see SPEC §7.2 step 4; docs/adr/0151-pi-interception.md
 */

type ToolCall = { toolCallId: string; name: string; args: unknown; signal: AbortSignal | undefined };

/** The seat's {@link ToolDispatch}: reads the run in progress through `current` at each call. */
export function createToolDispatch(
  cwd: string | undefined,
  current: () => RunState | undefined,
): ToolDispatch {
  return async (call, target) => {
    const run = current();
    if (!run) return { text: "", terminate: true };
    const fate = (f: CallFate) => run.fates.set(call.toolCallId, f);
    if (run.turnOver) {
      fate(notRunFate({ reason: "turn-over" }));
      return { text: run.req.hooks.notRun("turn-over", call.name), terminate: true };
    }
    if (run.halt) {
      fate(notRunFate({ reason: "stopped" }));
      return { text: run.req.hooks.notRun("stopped", call.name), terminate: true };
    }
    const never = run.neverRun.get(call.toolCallId);
    if (never) {
      fate(notRunFate(never));
      return { text: notRunText(run, never, call.name) };
    }
    if (target.kind === "working") return runRepeatable(run, cwd, target.tool, call);
    fate({ disposition: "pick" });
    run.workingStreak = undefined;
    const args = run.parsedArgs.has(call.toolCallId) ? run.parsedArgs.get(call.toolCallId) : call.args;
    const out = await run.req.hooks.menuCall({
      name: call.name,
      arguments: args,
      toolCallId: call.toolCallId,
    });
    if (out.turnOver) run.turnOver = true;
    if (out.halt) run.halt = out.halt;
    return { text: out.text, terminate: out.turnOver || out.halt !== undefined };
  };
}

/** The same Working-tool call this many times in a row ends the Turn `runaway`/`tool-loop`. */
export const TOOL_LOOP_LIMIT = 5;
/** …and at this many, its result carries one line saying so (issue 25 §12). */
export const TOOL_LOOP_WARN_AT = 3;

/**
 * A Working tool, counted: the same call (name and normalized arguments) in a row is warned at
 * the {@link TOOL_LOOP_WARN_AT}th (one line appended to its result, menu.ts's words) and halted
 * at the {@link TOOL_LOOP_LIMIT}th before it runs. Picks keep their own rules.
 */
async function runRepeatable(
  run: RunState,
  cwd: string | undefined,
  tool: AgentTool,
  call: ToolCall,
): Promise<ToolOutcome> {
  run.workingNames.add(call.name);
  const key = callKey(call.name, run.parsedArgs.get(call.toolCallId) ?? call.args);
  const count = run.workingStreak?.key === key ? run.workingStreak.count + 1 : 1;
  run.workingStreak = { key, count };
  if (count >= TOOL_LOOP_LIMIT) {
    run.halt = {
      type: "runaway",
      cause: "tool-loop",
      message: `the model made the same call of the Working tool \`${call.name.slice(0, 64)}\` ${count} times in a row (model entry \`${run.req.entry}\`)`,
    };
    run.fates.set(call.toolCallId, notRunFate({ reason: "stopped" }));
    return { text: run.req.hooks.notRun("stopped", call.name), terminate: true };
  }
  // A Working tool's fate is `working` unless runWorkingTool refuses it first.
  run.fates.set(call.toolCallId, { disposition: "working" });
  const out = await runWorkingTool(run, cwd, tool, call);
  if (count !== TOOL_LOOP_WARN_AT) return out;
  run.req.hooks.trouble("warn", "the model made the same Working-tool call 3 times in a row", {
    tool: call.name.slice(0, 64),
  });
  return { ...out, text: `${out.text}\n${run.req.hooks.workingText("repeated", call.name, String(count))}` };
}

/** A Working tool: arguments checked against its schema, its path kept inside `cwd`, then run. */
async function runWorkingTool(
  run: RunState,
  cwd: string | undefined,
  tool: AgentTool,
  call: ToolCall,
): Promise<ToolOutcome> {
  const hooks = run.req.hooks;
  let args: unknown;
  try {
    args = validateToolArguments(tool, {
      type: "toolCall",
      id: call.toolCallId,
      name: call.name,
      arguments: call.args as Record<string, unknown>,
    });
  } catch (err) {
    const problems = String(err instanceof Error ? err.message : err)
      .split("\n")
      .filter((l) => l.startsWith("  - "))
      .map((l) => l.slice(4));
    const detail = problems.join("; ") || "invalid";
    run.fates.set(call.toolCallId, notRunFate({ reason: "refused-arguments", detail }));
    return { text: hooks.workingText("arguments", call.name, detail) };
  }
  const path = pathArgument(call.name, args);
  if (cwd !== undefined && path !== undefined && !insideCwd(cwd, path)) {
    run.fates.set(call.toolCallId, notRunFate({ reason: "outside-cwd", path }));
    return { text: hooks.workingText("outside-cwd", call.name, path) };
  }
  try {
    const result = await tool.execute(
      call.toolCallId,
      withBashTimeout(call.name, args) as never,
      call.signal,
    );
    return { text: textOf(result as AgentMessage) || "(no output)", details: result.details };
  } catch (err) {
    return {
      text: hooks.workingText("failed", call.name, err instanceof Error ? err.message : String(err)),
    };
  }
}

/** The receipt for a call ingestion refused (cut off, not JSON, not an object), logged at warn. */
function notRunText(run: RunState, never: NeverRun, name: string): string {
  const merged = never.reason === "merged";
  run.req.hooks.trouble(
    "warn",
    merged
      ? `${never.count} tool calls arrived merged into one: the server sent neither an index nor an id to tell them apart`
      : "a tool call of the model was not run",
    { tool: name.slice(0, 64), reason: never.reason },
  );
  if (never.reason === "truncated" || never.reason === "duplicate" || never.reason === "merged")
    return run.req.hooks.notRun(never.reason, name);
  return run.req.hooks.notRun(never.reason, name, {
    sent: never.sent,
    ...(never.reason === "not-object" ? { kind: never.kind } : {}),
  });
}

/**
 * On pi's `tool_execution_end`: a result pi wrote itself gets the Turn's receipt instead (an
 * unknown tool is logged at warn); the result joins the answer's batch, and once the Turn ended
 * or a runaway halted the run, every result of the batch ends pi's loop.
 */
export function interceptToolResult(
  run: RunState,
  event: Extract<AgentEvent, { type: "tool_execution_end" }>,
  toolNames: ReadonlySet<string>,
): void {
  const result = event.result as { content: unknown; terminate?: boolean; details?: unknown };
  if (!isJr2Result(event.result)) {
    // pi's own text (unknown tool, schema failure) never reaches the model (§7.2 step 4).
    const reason: NotRunReason = toolNames.has(event.toolName) ? "stopped" : "unknown-tool";
    if (reason === "unknown-tool") {
      run.req.hooks.trouble("warn", "the model called a tool that is not in its tools block", {
        tool: event.toolName.slice(0, 64),
      });
      const halt = run.turnOver ? undefined : run.req.hooks.invented?.(event.toolName);
      if (halt) run.halt ??= halt;
    }
    const text = run.turnOver
      ? run.req.hooks.notRun("turn-over", event.toolName)
      : run.req.hooks.notRun(reason, event.toolName);
    run.fates.set(
      event.toolCallId,
      notRunFate({ reason: run.turnOver ? "turn-over" : (reason as "stopped" | "unknown-tool") }),
    );
    result.content = [{ type: "text", text }];
  }
  run.batch.push(result);
  // A Turn that ended (or a runaway) ends pi's loop even if other calls shared the batch.
  if (run.turnOver || run.halt) for (const r of run.batch) r.terminate = true;
}
