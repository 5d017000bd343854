import type { Agent, AgentEvent, AgentMessage } from "@mariozechner/pi-agent-core";
import { piPresenter } from "../../presenters/pi/pi-presenter.js";
import type { RestoredTags } from "../../transcript/restored-tags.js";
import type { UserTag } from "../../transcript/transcript-diff.js";
import { createConversationTranscript } from "../../transcript/transcript-log.js";
import type { Engine } from "../engine.js";
import { finishAnswer, type RunRequest, type RunState, startRun, textOf } from "./run-state.js";
import { buildSeatAgent, type SeatConfig } from "./seat-agent.js";
import { type RunOutcome, settleRun } from "./settle-run.js";
import { atStepBoundary, countAnswer } from "./step-boundary.js";
import { createToolDispatch, interceptToolResult } from "./tool-execution.js";

/**
 * The pi engine: one pi-agent-core `Agent` per conversation (a seat). The tools block and the
 * system prompt are fixed when the seat is built; request-shaping options are pinned per seat.
 * Where pi would speak or act on its own (unknown tool, schema failure, `length`-cut calls, a
 * stream without a finish reason, a Turn that ended mid-batch) the seat intercepts (ADR 0151).
 * The model request itself — retries, the replay-lint, ingestion — is model-request.ts's.
 *
 * A Submission's run, top-down: {@link startRun} (run-state.ts) → {@link runLoop} (pi's loop;
 * each event routed by {@link onSeatEvent} to tool-execution.ts and step-boundary.ts) →
 * {@link settleRun} (settle-run.ts). The seat Agent is seat-agent.ts's.
 * @see SPEC §7.2, §13; docs/adr/0402-replayed-history.md
 */

export type { NotRunReason, RunHooks, RunRequest } from "./run-state.js";
export type { SeatConfig } from "./seat-agent.js";
export type { RunOutcome } from "./settle-run.js";
export { IDENTICAL_CALLS_LIMIT, OUTPUT_CUTS_LIMIT } from "./step-boundary.js";

/** A conversation's pi seat: the pi {@link Engine}, with `steer` (pi's between-steps input). */
export interface Seat extends Engine<RunRequest> {
  run(req: RunRequest): Promise<RunOutcome>;
  /** Aborts the model request and clears queued steering (§7.2 step 4). */
  abort(): void;
  messages(): AgentMessage[];
  /** Queues a user message for pi to send before its next model request (a run in flight only). */
  steer(text: string, part: "restatement" | "continue"): void;
  /**
   * Replays a stored conversation's messages (issue 27, ADR-0175), before the seat's first run:
   * pi then sends them as they were, and their tool-call ids stay taken; `tags` label them in
   * the transcript as before the restart (absent: `other`, e.g. a history the Orchestrator pushed).
   */
  restore(messages: readonly unknown[], tags?: RestoredTags): void;
}

/**
 * Builds a seat from `cfg` (the conversation's system prompt, tools and pinned options). Its
 * `run` takes one Submission at a time and never throws for what the model or provider does:
 * that comes back as a {@link RunOutcome}.
 */
export function createSeat(cfg: SeatConfig): Seat {
  /** The run in progress; `undefined` between runs (pi's callbacks outlive each run). */
  let current: RunState | undefined;
  const read = () => current;
  /** The conversation's transcript state (issue 11, ADR-0159): lives as long as the seat. */
  const transcript = createConversationTranscript();
  /** Every tool-call id the conversation holds: ingestion keeps them unique (issue 25 §2). */
  const callIds = new Set<string>();
  const { agent, toolNames } = buildSeatAgent(cfg, read, createToolDispatch(cfg.cwd, read));
  agent.subscribe(async (event: AgentEvent) => {
    const run = current;
    if (run) await onSeatEvent(agent, run, event, toolNames);
  });
  return {
    async run(req) {
      current = startRun(req, transcript, callIds);
      const run = current;
      try {
        await runLoop(agent, run);
      } finally {
        // An answer whose step never ended (an abort mid-batch) is streamed with its calls' fates.
        finishAnswer(run);
        current = undefined;
      }
      return settleRun(run, agent.state.messages.at(-1));
    },
    abort() {
      if (current) current.aborted = true;
      agent.clearAllQueues();
      agent.abort();
    },
    messages: () => agent.state.messages,
    steer(text, part) {
      if (current) agent.steer(userMessage(current, text, { part }));
    },
    restore(messages, tags) {
      agent.state.messages = messages as AgentMessage[];
      if (tags) transcript.restored(agent.state.messages, tags);
      for (const m of agent.state.messages)
        if (m.role === "assistant") for (const c of m.content) if (c.type === "toolCall") callIds.add(c.id);
    },
  };
}

/**
 * Phase 2 of a run: the Submission's dials on the Agent, then pi's loop from the user message
 * until it ends; a throw of pi's is kept as the run's `engine` failure (settleRun reads it).
 */
async function runLoop(agent: Agent, run: RunState): Promise<void> {
  const req = run.req;
  agent.state.model = req.model;
  agent.state.thinkingLevel = req.thinkingLevel;
  try {
    await agent.prompt(userMessage(run, req.userText, req.userPart));
  } catch (err) {
    run.failure = { type: "engine", message: err instanceof Error ? err.message : String(err) };
  }
}

/** Places the texts the Turn hands the seat (pi's user messages). */
const PI_PRESENTER = piPresenter();

/** A user message for pi, tagged with what the Harness sends it as (the transcript's `part`). */
function userMessage(run: RunState, text: string, tag: UserTag) {
  const message = PI_PRESENTER.placeText(text);
  run.transcript.tagUser(message, tag);
  return message;
}

/**
 * pi's events during a run: messages to observers and each answer counted; tool results
 * intercepted; at each answer's end the batch is cleared and the step boundary steers.
 */
async function onSeatEvent(
  agent: Agent,
  run: RunState,
  event: AgentEvent,
  toolNames: ReadonlySet<string>,
): Promise<void> {
  switch (event.type) {
    case "message_end": {
      const m = event.message;
      if (m.role === "user" || m.role === "toolResult") run.req.hooks.message(m.role, textOf(m));
      if (m.role === "assistant") countAnswer(run, m);
      return;
    }
    case "tool_execution_end":
      return interceptToolResult(run, event, toolNames);
    case "turn_end":
      run.batch = [];
      // The answer's calls are decided now: its transcript entry goes out before the next request.
      finishAnswer(run);
      return atStepBoundary(run, event, (text, part) => agent.steer(userMessage(run, text, { part })));
    default:
      return;
  }
}
