import type { StreamEvent, SubmissionRequest, Tool } from "@jr2/wire";
import type { Seat } from "../engine/pi/engine-pi.js";
import type { OrchestratorClient } from "../orchestrator/orchestrator-client.js";
import type { EndpointLimiter } from "../provider/limiter.js";
import type { ModelTable } from "../provider/models.js";
import type { KvScheduling } from "../provider/scheduling/kv-scheduling.js";
import type { McpSession, McpTimeouts } from "../tools/mcp/mcp-session.js";
import type { McpSnapshotStore } from "../tools/mcp/snapshot-store.js";
import type { EgressProxies } from "../tools/sandbox/egress-proxies.js";
import type { WorkingSandbox } from "../tools/sandbox/working-sandbox.js";
import type { Redactor } from "../tools/secret-redaction.js";
import type { RestoredTags } from "../transcript/restored-tags.js";
import type { TurnWorkspace } from "../workspace/turn-workspace.js";

/**
 * What a Submission's run needs from the Harness and the conversation-level state it reads and
 * (once) writes — shared by turn.ts and its phases.
 * @see SPEC §7.2
 */

/** What a Submission's run needs from the Harness. */
export interface TurnDeps {
  orchestrator: OrchestratorClient;
  models: ModelTable;
  limiter: EndpointLimiter;
  /** KV scheduling per model endpoint (issue 30); absent: off for every entry. */
  kv?: KvScheduling;
  /** Surface read budget before the model (ms, §7.2 step 1: 90 000). */
  surfaceBudgetMs: number;
  /** The bounded boundary read (ms, §7.5). */
  boundaryReadMs: number;
  maxSteps: number;
  /** Time to first token (ms), unless the model entry's `retry.firstTokenTimeoutMs` (or older `requestTimeoutMs`) says otherwise. */
  requestTimeoutMs: number;
  /** The Harness's secret values: kept out of Working tools' environment and results (ADR-0158). */
  secrets: Redactor;
  /**
   * The Working tools' sandbox, decided at start (ADR-0173). Absent: unsandboxed, as before
   * issue 26 (a library user that never probed; main.ts always passes one).
   */
  sandbox?: WorkingSandbox;
  /** The Harness's git for Repo Slots (issue 28): commits per pick, lost Worktrees, `{{diff …}}`. */
  workspaces?: TurnWorkspace;
  /** The runs' egress proxies (workspace `network: [hosts]`), one per conversation. */
  egress?: EgressProxies;
  /**
   * The MCP client's state (issue 29): where snapshots are kept, the environment `{ secret }`
   * headers are resolved from (the Harness's own; main.ts passes process.env) and the bounds.
   * Absent: an in-memory store and an empty environment.
   */
  mcp?: {
    store: McpSnapshotStore;
    environment: Readonly<Record<string, string | undefined>>;
    timeouts?: Partial<McpTimeouts>;
  };
  log: (msg: string, fields?: Record<string, unknown>) => void;
  /**
   * Model-side trouble (provider errors, retries, invented tools, not-run calls, text calls) at
   * warn, the replay-lint's repairs at error; each line names iid, turnId and model, never prompt
   * or argument text. Absent: `log` with a `level` field.
   */
  warn?: (msg: string, fields?: Record<string, unknown>) => void;
  error?: (msg: string, fields?: Record<string, unknown>) => void;
}

/** The conversation-level state a Submission reads and (once) writes. */
export interface SeatSlot {
  iid: string;
  seat: Seat | undefined;
  menuOrder: string[];
  hasWorkingTools: boolean;
  /** The seat's working directory (Working tools only). */
  cwd: string | undefined;
  lastDials: { model: string; thinkingLevel: string } | undefined;
  /** The conversation's MCP session (servers, frozen snapshot); closed with the conversation. */
  mcp?: McpSession;
  /** What the seat was built from (set when seated; the store keeps it, ADR-0175). */
  definition?: SeatDefinition;
  /**
   * A conversation rebuilt from the store or a pushed history (issue 27): the next Submission
   * builds the seat from `seat` (or, without one, from its own admission and surface) and
   * replays `messages` before its own, labelled in the transcript by `tags` (a store rebuild
   * reads them from the stored stream). Cleared once seated.
   */
  restore?: { seat: SeatDefinition | undefined; messages: unknown[]; tags?: RestoredTags };
}

/**
 * Everything a seat is built from that is not on every admission: kept by the store so a
 * restarted Harness builds the same system prompt and tools block, byte for byte (ADR-0175).
 */
export interface SeatDefinition {
  systemPrompt: string;
  /** The Menu of the conversation's first surface, as its tools block presents it. */
  menu: Tool[];
  workspace: SubmissionRequest["definition"]["workspace"];
  cwd: string | undefined;
  network: SubmissionRequest["network"];
  temperature: number | undefined;
}

/** How a Submission ended. */
export type Settlement = Extract<StreamEvent, { type: "submission-settled" }>;

/** Logs at `level` through the Harness's logger (or `log` with the level as a field). */
export function logAt(
  deps: TurnDeps,
  level: "warn" | "error",
  msg: string,
  fields: Record<string, unknown>,
): void {
  const sink = level === "warn" ? deps.warn : deps.error;
  if (sink) sink(msg, fields);
  else deps.log(msg, { level, ...fields });
}
