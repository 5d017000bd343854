import type { ThinkingLevel, Tool } from "@jr2/wire";
import { Agent, type AgentEvent, type AgentMessage, type AgentTool } from "@mariozechner/pi-agent-core";
import { type AssistantMessage, type Model, validateToolArguments } from "@mariozechner/pi-ai";
import { benchNarrowTools, menuForSubmission } from "./bench-narrow.js";
import type { EndpointLimiter } from "./limiter.js";
import { isJr2Result, piTools, presentedTools, type ToolCallKind, type ToolOutcome } from "./menu-tools.js";
import { type AnswerRun, createStreamFn, type NeverRun } from "./model-request.js";
import type { ResolvedRetryPolicy } from "./models.js";
import type { RetryNotice } from "./provider-retry.js";
import type { ReportedUsage } from "./provider-usage.js";
import { EMPTY_ANSWER_MARK, type LintMode } from "./replay-lint.js";
import { isTextCall } from "./text-call.js";
import { insideCwd, pathArgument, withBashTimeout } from "./working-tools.js";

/**
 * The pi engine: one pi-agent-core `Agent` per conversation (a seat). The tools block and the
 * system prompt are fixed when the seat is built; request-shaping options are pinned per seat.
 * Where pi would speak or act on its own (unknown tool, schema failure, `length`-cut calls, a
 * stream without a finish reason, a Turn that ended mid-batch) the seat intercepts (ADR 0151).
 * The model request itself — retries, the replay-lint, ingestion — is model-request.ts's.
 * @see SPEC §7.2, §13; docs/adr/0402-replayed-history.md
 */

/** Everything a seat is built from; fixed for the conversation. */
export interface SeatConfig {
  systemPrompt: string;
  workingTools: readonly AgentTool[];
  menu: readonly Tool[];
  cwd: string | undefined;
  limiter: EndpointLimiter;
  /** Pinned for the conversation (§7.7). */
  temperature: number | undefined;
  /** See model-request.ts `StreamFnConfig.shapePayload`; none by default. */
  shapePayload?: (params: Record<string, unknown>) => void;
  /** The replay-lint's mode; default from the environment (`lintModeFromEnv`). */
  lintMode?: LintMode;
}

/** The Turn's side of a run: pick delivery, texts, boundary reads, observers. From turn.ts. */
export interface RunHooks {
  menuCall(call: {
    name: string;
    arguments: unknown;
    toolCallId: string;
  }): Promise<{ text: string; turnOver: boolean }>;
  /**
   * Receipt text for calls that are never run (unknown tool, cut off, not JSON, not an object,
   * after the end); `detail` carries what the model sent when the history no longer shows it.
   */
  notRun(reason: NotRunReason, name: string, detail?: { sent: string; kind?: string }): string;
  /** After each model answer's tool results: the restatement to steer, if any (§7.5). */
  boundary(modelStopped: boolean): Promise<string | undefined>;
  /** After an answer cut at the output limit with no tool call: the text to steer, if any. */
  outputCut(): string | undefined;
  usage(u: ReportedUsage & { finishReason?: string }): void;
  /** A model request is retried or its endpoint waited for (issue 10 §3). */
  retry(n: RetryNotice): void;
  /** Model-side trouble for the operator's log (never prompt or argument text). */
  trouble(level: "warn" | "error", msg: string, fields?: Record<string, unknown>): void;
  message(role: "user" | "assistant" | "toolResult", text: string): void;
  /** Text for a Working tool's bad arguments / outside-cwd path / failure. */
  workingText(kind: "arguments" | "outside-cwd" | "failed", name: string, detail: string): string;
}

export type NotRunReason = "unknown-tool" | "truncated" | "not-json" | "not-object" | "turn-over" | "stopped";

/** One Submission's run on the seat. */
export interface RunRequest {
  userText: string;
  model: Model<"openai-completions">;
  /** The model entry's name in the table (messages name it). */
  entry: string;
  policy: ResolvedRetryPolicy;
  apiKey: string;
  thinkingLevel: ThinkingLevel;
  maxSteps: number;
  hooks: RunHooks;
  /** The Submission's Allowed picks; read only by the benchmark-only narrowed mode (bench-narrow.ts). */
  allowed?: readonly string[];
}

/** How the run ended (turn.ts maps it to a settlement). */
export type RunOutcome =
  /** `textCall`: the last answer wrote a tool call as text (case C1); nothing was run. */
  | { kind: "completed"; textCall?: boolean }
  | { kind: "failed"; error: { type: string; message: string; cause?: string } }
  | { kind: "aborted" };

/** Answers in a row cut at `maxTokens` that end a Submission (`output-limit`, issue 10 §3). */
export const OUTPUT_CUTS_LIMIT = 2;

/** Per-run bookkeeping, replaced at every run. */
interface RunState extends AnswerRun {
  req: RunRequest;
  turnOver: boolean;
  halt: { type: "runaway"; message: string; cause?: string } | undefined;
  steps: number;
  /** Consecutive answers cut at the output limit. */
  cuts: number;
  callKeys: string[];
  batch: Array<{ terminate?: boolean }>;
}

/** A conversation's pi seat. */
export interface Seat {
  run(req: RunRequest): Promise<RunOutcome>;
  /** Aborts the model request and clears queued steering (§7.2 step 4). */
  abort(): void;
  messages(): AgentMessage[];
}

const textOf = (m: AgentMessage): string => {
  const content = (m as { content?: unknown }).content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((c): c is { type: "text"; text: string } => c?.type === "text")
    .map((c) => c.text)
    .join("");
};

/** Identical consecutive calls that count as runaway (§7.2 step 5). */
export const IDENTICAL_CALLS_LIMIT = 4;

/** Builds a seat. */
export function createSeat(cfg: SeatConfig): Seat {
  let current: RunState | undefined;
  const tools = presentedTools(cfg.workingTools, cfg.menu);
  // BENCHMARK-ONLY (bench-narrow.ts): off by default; when on, the tools block changes per Turn.
  const narrow = benchNarrowTools(process.env);
  const toolsBlock = () =>
    narrow && current
      ? presentedTools(cfg.workingTools, menuForSubmission(cfg.menu, current.req.allowed ?? [], true))
      : tools;

  const dispatch = async (
    call: { toolCallId: string; name: string; args: unknown; signal: AbortSignal | undefined },
    target: ToolCallKind,
  ): Promise<ToolOutcome> => {
    const run = current;
    if (!run || run.turnOver)
      return { text: run ? run.req.hooks.notRun("turn-over", call.name) : "", terminate: true };
    if (run.halt) return { text: run.req.hooks.notRun("stopped", call.name), terminate: true };
    const never = run.neverRun.get(call.toolCallId);
    if (never) return { text: notRunText(run, never, call.name) };
    if (target.kind === "menu") {
      const args = run.parsedArgs.has(call.toolCallId) ? run.parsedArgs.get(call.toolCallId) : call.args;
      const out = await run.req.hooks.menuCall({
        name: call.name,
        arguments: args,
        toolCallId: call.toolCallId,
      });
      if (out.turnOver) run.turnOver = true;
      return { text: out.text, terminate: out.turnOver };
    }
    return runWorkingTool(run, target.tool, call);
  };

  const runWorkingTool = async (
    run: RunState,
    tool: AgentTool,
    call: { toolCallId: string; name: string; args: unknown; signal: AbortSignal | undefined },
  ): Promise<ToolOutcome> => {
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
      return { text: hooks.workingText("arguments", call.name, problems.join("; ") || "invalid") };
    }
    const path = pathArgument(call.name, args);
    if (cfg.cwd !== undefined && path !== undefined && !insideCwd(cfg.cwd, path)) {
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
  };

  const notRunText = (run: RunState, never: NeverRun, name: string): string => {
    run.req.hooks.trouble("warn", "a tool call of the model was not run", {
      tool: name.slice(0, 64),
      reason: never.reason,
    });
    if (never.reason === "truncated") return run.req.hooks.notRun("truncated", name);
    return run.req.hooks.notRun(never.reason, name, {
      sent: never.sent,
      ...(never.reason === "not-object" ? { kind: never.kind } : {}),
    });
  };

  const streamFn = createStreamFn({
    limiter: cfg.limiter,
    temperature: cfg.temperature,
    current: () => current,
    ...(cfg.shapePayload ? { shapePayload: cfg.shapePayload } : {}),
    ...(cfg.lintMode ? { lintMode: cfg.lintMode } : {}),
  });
  const agent = new Agent({
    initialState: { systemPrompt: cfg.systemPrompt, tools: piTools(cfg.workingTools, cfg.menu, dispatch) },
    steeringMode: "all",
    toolExecution: "sequential",
    convertToLlm: (messages) =>
      messages
        .filter((m) => m.role === "user" || m.role === "assistant" || m.role === "toolResult")
        .map((m) => (m.role === "assistant" && isDropped(m) ? emptyAnswer(m) : m)),
    streamFn: (model, context, options) => streamFn(model, { ...context, tools: toolsBlock() }, options),
  });

  const names = new Set(tools.map((t) => t.name));
  agent.subscribe(async (event: AgentEvent) => {
    const run = current;
    if (!run) return;
    switch (event.type) {
      case "message_end": {
        const m = event.message;
        if (m.role === "user" || m.role === "toolResult") run.req.hooks.message(m.role, textOf(m));
        if (m.role === "assistant") onAnswer(run, m);
        return;
      }
      case "tool_execution_end": {
        const result = event.result as { content: unknown; terminate?: boolean; details?: unknown };
        if (!isJr2Result(event.result)) {
          // pi's own text (unknown tool, schema failure) never reaches the model (§7.2 step 4).
          const reason: NotRunReason = names.has(event.toolName) ? "stopped" : "unknown-tool";
          if (reason === "unknown-tool")
            run.req.hooks.trouble("warn", "the model called a tool that is not in its tools block", {
              tool: event.toolName.slice(0, 64),
            });
          const text = run.turnOver
            ? run.req.hooks.notRun("turn-over", event.toolName)
            : run.req.hooks.notRun(reason, event.toolName);
          result.content = [{ type: "text", text }];
        }
        run.batch.push(result);
        // A Turn that ended (or a runaway) ends pi's loop even if other calls shared the batch.
        if (run.turnOver || run.halt) for (const r of run.batch) r.terminate = true;
        return;
      }
      case "turn_end": {
        run.batch = [];
        const m = event.message;
        if (m.role !== "assistant" || m.stopReason === "error" || m.stopReason === "aborted") return;
        if (run.aborted || run.turnOver || run.halt) return;
        const text = await run.req.hooks.boundary(event.toolResults.length === 0);
        if (text !== undefined && !run.aborted && !run.turnOver) {
          agent.steer({ role: "user", content: [{ type: "text", text }], timestamp: Date.now() });
        }
        // An answer cut at the output limit with no call would end the loop: ask once more (the
        // second cut in a row ends the Submission with `output-limit`).
        const cut =
          m.stopReason === "length" && event.toolResults.length === 0 ? run.req.hooks.outputCut() : undefined;
        if (cut !== undefined && !run.aborted && !run.turnOver) {
          agent.steer({ role: "user", content: [{ type: "text", text: cut }], timestamp: Date.now() });
        }
        return;
      }
      default:
        return;
    }
  });

  const onAnswer = (run: RunState, m: AssistantMessage) => {
    run.steps++;
    run.req.hooks.message("assistant", textOf(m));
    if (m.stopReason === "error" || m.stopReason === "aborted") return;
    const calls = m.content.filter((c) => c.type === "toolCall");
    run.cuts = m.stopReason === "length" ? run.cuts + 1 : 0;
    if (run.cuts >= OUTPUT_CUTS_LIMIT) {
      const model = run.req.model;
      run.halt = {
        type: "runaway",
        cause: "output-limit",
        message: `${run.cuts} answers in a row were cut at the output limit (maxTokens ${model.maxTokens} of model entry \`${run.req.entry}\`); raise maxTokens in JR2_MODELS, or leave room for thinking`,
      };
      return;
    }
    for (const c of calls) run.callKeys.push(`${c.name}\u0000${JSON.stringify(c.arguments)}`);
    const lastKeys = run.callKeys.slice(-IDENTICAL_CALLS_LIMIT);
    if (
      lastKeys.length === IDENTICAL_CALLS_LIMIT &&
      lastKeys.every((k) => k === lastKeys[0]) &&
      calls.length > 0
    ) {
      run.halt = { type: "runaway", message: `${IDENTICAL_CALLS_LIMIT} identical consecutive tool calls` };
    } else if (run.steps >= run.req.maxSteps && calls.length > 0) {
      run.halt = { type: "runaway", message: `step budget of ${run.req.maxSteps} model requests spent` };
    }
  };

  return {
    async run(req) {
      const hooks = req.hooks;
      current = {
        req,
        entry: req.entry,
        policy: req.policy,
        apiKey: req.apiKey,
        aborted: false,
        turnOver: false,
        halt: undefined,
        steps: 0,
        cuts: 0,
        callKeys: [],
        parsedArgs: new Map(),
        neverRun: new Map(),
        batch: [],
        failure: undefined,
        usage: (u) => hooks.usage(u),
        retry: (n) => hooks.retry(n),
        lintRepaired: (problems) =>
          hooks.trouble("error", "replay-lint repaired the request's history", { problems }),
      };
      const run = current;
      agent.state.model = req.model;
      agent.state.thinkingLevel = req.thinkingLevel;
      try {
        await agent.prompt({
          role: "user",
          content: [{ type: "text", text: req.userText }],
          timestamp: Date.now(),
        });
      } catch (err) {
        run.failure = { type: "engine", message: err instanceof Error ? err.message : String(err) };
      } finally {
        current = undefined;
      }
      if (run.aborted) return { kind: "aborted" };
      if (run.halt) return { kind: "failed", error: run.halt };
      const last = agent.state.messages.at(-1);
      if (last?.role === "assistant" && (last.stopReason === "error" || last.stopReason === "aborted")) {
        return {
          kind: "failed",
          error: run.failure ?? { type: "provider", message: last.errorMessage ?? "model request failed" },
        };
      }
      if (
        last?.role === "assistant" &&
        last.stopReason === "stop" &&
        !last.content.some((c) => c.type === "toolCall")
      ) {
        if (isTextCall(textOf(last))) {
          req.hooks.trouble(
            "warn",
            "the model wrote a tool call as text and made none; the server's tool-call parser may be off (vLLM: --enable-auto-tool-choice --tool-call-parser hermes)",
          );
          return { kind: "completed", textCall: true };
        }
      }
      return { kind: "completed" };
    },
    abort() {
      if (current) current.aborted = true;
      agent.clearAllQueues();
      agent.abort();
    },
    messages: () => agent.state.messages,
  };
}

/**
 * An answer pi-ai would leave out of the replay: errored or aborted, or with neither text nor a
 * tool call (empty, reasoning-only). It is replayed as `{"role":"assistant","content":""}` so
 * the history alternates roles (issue 10 §1).
 */
function isDropped(m: AssistantMessage): boolean {
  if (m.stopReason === "error" || m.stopReason === "aborted") return true;
  return !m.content.some((c) => c.type === "toolCall" || (c.type === "text" && c.text.trim().length > 0));
}

/** The stand-in the payload lint turns into `content: ""` (nothing else of it is sent). */
function emptyAnswer(m: AssistantMessage): AssistantMessage {
  return {
    ...m,
    stopReason: "stop",
    errorMessage: undefined,
    content: [{ type: "text", text: EMPTY_ANSWER_MARK }],
  };
}
