import type { ThinkingLevel, Tool } from "@jr2/wire";
import { Agent, type AgentEvent, type AgentMessage, type AgentTool } from "@mariozechner/pi-agent-core";
import {
  type AssistantMessage,
  type AssistantMessageEvent,
  createAssistantMessageEventStream,
  type Model,
  type SimpleStreamOptions,
  streamSimple,
  validateToolArguments,
} from "@mariozechner/pi-ai";
import { benchNarrowTools, menuForSubmission } from "./bench-narrow.js";
import { installFetchProbe, withFetchProbe } from "./fetch-probe.js";
import type { EndpointLimiter } from "./limiter.js";
import { isJr2Result, piTools, presentedTools, type ToolCallKind, type ToolOutcome } from "./menu-tools.js";
import { replayPayloadHook } from "./replay-policy.js";
import { insideCwd, pathArgument, withBashTimeout } from "./working-tools.js";

/**
 * The pi engine: one pi-agent-core `Agent` per conversation (a seat). The tools block and the
 * system prompt are fixed when the seat is built; request-shaping options are pinned per seat.
 * Where pi would speak or act on its own (unknown tool, schema failure, `length`-cut calls, a
 * stream without a finish reason, a Turn that ended mid-batch) the seat intercepts (ADR 0151).
 * @see SPEC §7.2, §13
 */

/** Everything a seat is built from; fixed for the conversation. */
export interface SeatConfig {
  systemPrompt: string;
  workingTools: readonly AgentTool[];
  menu: readonly Tool[];
  cwd: string | undefined;
  limiter: EndpointLimiter;
  /** Per model request (ms). */
  requestTimeoutMs: number;
  /** Pinned for the conversation (§7.7). */
  temperature: number | undefined;
}

/** The Turn's side of a run: pick delivery, texts, boundary reads, observers. From turn.ts. */
export interface RunHooks {
  menuCall(call: {
    name: string;
    arguments: unknown;
    toolCallId: string;
  }): Promise<{ text: string; turnOver: boolean }>;
  /** Receipt text for calls that are never run (unknown tool, cut off, not JSON, after the end). */
  notRun(reason: NotRunReason, name: string): string;
  /** After each model answer's tool results: the restatement to steer, if any (§7.5). */
  boundary(modelStopped: boolean): Promise<string | undefined>;
  usage(u: { promptTokens: number; cachedTokens: number; completionTokens: number }): void;
  message(role: "user" | "assistant" | "toolResult", text: string): void;
  /** Text for a Working tool's bad arguments / outside-cwd path / failure. */
  workingText(kind: "arguments" | "outside-cwd" | "failed", name: string, detail: string): string;
}

export type NotRunReason = "unknown-tool" | "truncated" | "not-json" | "turn-over" | "stopped";

/** One Submission's run on the seat. */
export interface RunRequest {
  userText: string;
  model: Model<"openai-completions">;
  apiKey: string;
  thinkingLevel: ThinkingLevel;
  maxSteps: number;
  hooks: RunHooks;
  /** The Submission's Allowed picks; read only by the benchmark-only narrowed mode (bench-narrow.ts). */
  allowed?: readonly string[];
}

/** How the run ended (turn.ts maps it to a settlement). */
export type RunOutcome =
  | { kind: "completed" }
  | { kind: "failed"; error: { type: string; message: string } }
  | { kind: "aborted" };

/** Per-run bookkeeping, replaced at every run. */
interface RunState {
  req: RunRequest;
  aborted: boolean;
  turnOver: boolean;
  halt: { type: "runaway"; message: string } | undefined;
  steps: number;
  callKeys: string[];
  rawArgs: Map<string, unknown>;
  neverRun: Map<string, NotRunReason>;
  batch: Array<{ terminate?: boolean }>;
  failure: { type: string; message: string } | undefined;
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
  installFetchProbe();
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
    if (never) return { text: run.req.hooks.notRun(never, call.name) };
    if (target.kind === "menu") {
      const args = run.rawArgs.has(call.toolCallId) ? run.rawArgs.get(call.toolCallId) : call.args;
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

  const agent = new Agent({
    initialState: { systemPrompt: cfg.systemPrompt, tools: piTools(cfg.workingTools, cfg.menu, dispatch) },
    steeringMode: "all",
    toolExecution: "sequential",
    convertToLlm: (messages) =>
      messages.filter((m) => m.role === "user" || m.role === "assistant" || m.role === "toolResult"),
    streamFn: (model, context, options) => streamOnce(model, { ...context, tools: toolsBlock() }, options),
  });

  /** One model request: endpoint slot, pinned options, finish-reason probe, interceptions. */
  const streamOnce = async (
    model: Parameters<typeof streamSimple>[0],
    context: Parameters<typeof streamSimple>[1],
    options: SimpleStreamOptions | undefined,
  ) => {
    const out = createAssistantMessageEventStream();
    const run = current;
    const fail = (message: string, aborted = false) => {
      const msg = emptyAssistant(model, aborted ? "aborted" : "error", message);
      out.push({ type: "error", reason: aborted ? "aborted" : "error", error: msg });
      out.end();
      return out;
    };
    if (!run || options?.signal?.aborted || run.aborted) return fail("aborted", true);
    const release = await cfg.limiter.acquire(model.baseUrl, options?.signal);
    if (!release) return fail("aborted", true);
    const probe = { sawFinishReason: false };
    const pinned: SimpleStreamOptions = {
      ...options,
      apiKey: run.req.apiKey,
      maxTokens: model.maxTokens,
      temperature: cfg.temperature,
      cacheRetention: "short",
      maxRetries: 2,
      timeoutMs: cfg.requestTimeoutMs,
      sessionId: undefined,
      onPayload: replayPayloadHook, // ADR-0310: reasoning dropped or echoed per model entry
    };
    const inner = withFetchProbe(probe, () => streamSimple(model, context, pinned));
    void (async () => {
      const raw = new Map<number, string>();
      try {
        for await (const ev of inner as AsyncIterable<AssistantMessageEvent>) {
          if (ev.type === "toolcall_delta")
            raw.set(ev.contentIndex, (raw.get(ev.contentIndex) ?? "") + ev.delta);
          if (ev.type === "done") {
            const msg = ev.message;
            reportUsage(run, msg);
            if (!probe.sawFinishReason) {
              const failed = {
                ...msg,
                stopReason: "error" as const,
                errorMessage: "the model stream ended without a finish reason",
              };
              run.failure = { type: "stream-incomplete", message: failed.errorMessage };
              out.push({ type: "error", reason: "error", error: failed });
              continue;
            }
            noteCalls(run, msg, raw);
            out.push(ev);
            continue;
          }
          if (ev.type === "error") {
            reportUsage(run, ev.error);
            if (ev.reason === "error")
              run.failure = { type: "provider", message: ev.error.errorMessage ?? "provider error" };
          }
          out.push(ev);
        }
      } finally {
        release();
        out.end();
      }
    })();
    return out;
  };

  const reportUsage = (run: RunState, msg: AssistantMessage) => {
    const u = msg.usage;
    const cached = u.cacheWrite > 0 ? u.cacheRead + u.cacheWrite : u.cacheRead;
    run.req.hooks.usage({
      promptTokens: u.input + u.cacheRead + u.cacheWrite,
      cachedTokens: cached,
      completionTokens: u.output,
    });
  };

  /** Records raw arguments; marks calls of a cut-off answer and non-JSON arguments never-run. */
  const noteCalls = (run: RunState, msg: AssistantMessage, raw: Map<number, string>) => {
    msg.content.forEach((block, index) => {
      if (block.type !== "toolCall") return;
      if (msg.stopReason === "length") {
        run.neverRun.set(block.id, "truncated");
        return;
      }
      const text = (raw.get(index) ?? "").trim();
      if (text === "") return;
      try {
        run.rawArgs.set(block.id, JSON.parse(text));
      } catch {
        run.neverRun.set(block.id, "not-json");
      }
    });
  };

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
      current = {
        req,
        aborted: false,
        turnOver: false,
        halt: undefined,
        steps: 0,
        callKeys: [],
        rawArgs: new Map(),
        neverRun: new Map(),
        batch: [],
        failure: undefined,
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

function emptyAssistant(
  model: Parameters<typeof streamSimple>[0],
  stopReason: "error" | "aborted",
  errorMessage: string,
): AssistantMessage {
  return {
    role: "assistant",
    content: [],
    api: model.api,
    provider: model.provider,
    model: model.id,
    usage: {
      input: 0,
      output: 0,
      cacheRead: 0,
      cacheWrite: 0,
      totalTokens: 0,
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
    },
    stopReason,
    errorMessage,
    timestamp: Date.now(),
  };
}
