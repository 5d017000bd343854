import type { Tool } from "@jr2/wire";
import { Agent, type AgentTool } from "@mariozechner/pi-agent-core";
import type { AssistantMessage } from "@mariozechner/pi-ai";
import { benchNarrowTools, menuForSubmission } from "../../presenters/bench-narrow.js";
import { piTools, type ToolDispatch } from "../../presenters/pi/menu-tools.js";
import { piPresenter } from "../../presenters/pi/pi-presenter.js";
import type { EndpointLimiter } from "../../provider/limiter.js";
import { createStreamFn } from "../../provider/model-request.js";
import { EMPTY_ANSWER_MARK, type LintMode } from "../../provider/replay/replay-lint.js";
import type { RunState } from "./run-state.js";

/**
 * The seat's pi-agent-core `Agent`, built once per conversation: the system prompt and the
 * tools block are fixed here, the request options pinned by the streamFn (model-request.ts), and
 * the wrapper around it presents the real tools block on every request. pi's tools carry
 * permissive schemas and answer through the seat's dispatch (menu-tools.ts, tool-execution.ts).
 * @see SPEC §7.2, §7.7; docs/adr/0151-pi-interception.md, docs/adr/0402-replayed-history.md
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

/** A built seat Agent and the names its tools block presents (to tell pi's own results apart). */
export interface SeatAgent {
  agent: Agent;
  toolNames: ReadonlySet<string>;
}

/**
 * Builds the seat's Agent: steering delivered all at once, tools run one at a time, history
 * replayed with dropped answers as empty ones, every request through the pinned streamFn with
 * the presented tools block. `current` reads the run in progress (`undefined` between runs).
 */
export function buildSeatAgent(
  cfg: SeatConfig,
  current: () => RunState | undefined,
  dispatch: ToolDispatch,
): SeatAgent {
  const presenter = piPresenter(cfg.workingTools);
  const tools = presenter.tools(cfg.menu);
  // BENCHMARK-ONLY (bench-narrow.ts): off by default; when on, the tools block changes per Turn.
  const narrow = benchNarrowTools(process.env);
  const toolsBlock = () => {
    const run = current();
    return narrow && run ? presenter.tools(menuForSubmission(cfg.menu, run.req.allowed ?? [], true)) : tools;
  };
  const streamFn = createStreamFn({
    limiter: cfg.limiter,
    temperature: cfg.temperature,
    current,
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
  return { agent, toolNames: new Set(tools.map((t) => t.name)) };
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
