import type { SubmissionRequest, Tool } from "@jr2/wire";
import type { AgentTool } from "@mariozechner/pi-agent-core";
import { createSeat, type Seat } from "../engine/pi/engine-pi.js";
import { systemPrompt, turnPart, userMessageText } from "../presenters/briefing.js";
import {
  mcpCallFailedReceipt,
  mcpResultCutNote,
  mcpServerDownReceipt,
  mcpToolGoneReceipt,
} from "../presenters/menu.js";
import { modelEntry } from "../provider/models.js";
import { gitTokenValues, headerSecretValues } from "../tools/mcp/header-secrets.js";
import { type McpSession, openMcpSession } from "../tools/mcp/mcp-session.js";
import { type McpTexts, mcpAgentTools } from "../tools/mcp/mcp-tools.js";
import { memorySnapshotStore } from "../tools/mcp/snapshot-store.js";
import type { WorkingNetwork } from "../tools/sandbox/sandboxed-tools.js";
import { sandboxRefusal } from "../tools/sandbox/working-sandbox.js";
import { withSecretValues } from "../tools/secret-redaction.js";
import { createWorkingDirectory } from "../tools/working-directory.js";
import { createWorkingTools } from "../tools/working-tools.js";
import type { SeatSlot, TurnDeps } from "./turn-deps.js";
import { logAt } from "./turn-deps.js";

/** The seat of a conversation, or why it could not be built. */
export type SeatPhase =
  | { kind: "seated"; seat: Seat; mcp?: McpSession; mcpNew?: boolean }
  | {
      kind: "failed";
      error: {
        type: "cwd" | "sandbox" | "mcp" | "workspace-lost";
        message: string;
        cause?: string;
        path?: string;
      };
    };

/**
 * Phase 2: the first Submission builds the seat from the FIRST surface; later ones reuse it. A
 * conversation rebuilt after a restart, the TTL or from a pushed history (issue 27) is seated
 * from its stored definition and its messages replayed, so its next request extends the last.
 * A working directory that cannot be created fails the Submission (`{ type: "cwd" }`) and
 * seats nothing, so a later Submission tries again; so does a cwd through a symlink below the
 * work root (`JR2_ERR_WORKSPACE_SYMLINK`, ADR-0227). A Repo Slot's Worktree that is gone fails
 * it `workspace-lost` (issue 28 §6).
 */
export async function seatPhase(
  slot: SeatSlot,
  req: SubmissionRequest,
  menuItems: Tool[],
  deps: TurnDeps,
): Promise<SeatPhase> {
  const cwd = req.definition.workspace === "none" ? undefined : req.cwd;
  // Without a working sandbox a Turn with Working tools is refused, seated or not (ADR-0173).
  const refused = cwd !== undefined && deps.sandbox ? sandboxRefusal(deps.sandbox) : undefined;
  if (refused) return { kind: "failed", error: { type: "sandbox", message: refused } };
  // A folder on the way to the cwd swapped for a link (to another run's Worktree, a host
  // directory) would be bound read-write by bwrap, which follows it: refused (ADR-0227).
  const linked = cwd !== undefined ? await deps.workspaces?.linkedAt(cwd) : undefined;
  if (linked) return { kind: "failed", error: { type: "cwd", message: linked, path: cwd } };
  // A Repo Slot's Worktree is never made here (issue 28 §6, unlike ADR-0153's plain workspaces).
  const lost = cwd !== undefined ? await deps.workspaces?.lostAt(cwd) : undefined;
  if (lost)
    return {
      kind: "failed",
      error: {
        type: "workspace-lost",
        cause: "workspace-lost",
        path: lost,
        message: `the Worktree \`${lost}\` is gone; fork or retry the run to recreate it from the run's repository`,
      },
    };
  if (slot.seat) return { kind: "seated", seat: slot.seat };
  // A rebuilt conversation (ADR-0175) is seated as it was first: its stored definition, else
  // (a pushed history) this admission's; then its messages are replayed before this Submission's.
  const definition = slot.restore?.seat ?? {
    systemPrompt: systemPrompt(req.definition.instructions),
    menu: menuItems,
    workspace: req.definition.workspace,
    cwd,
    network: req.network,
    temperature: modelEntry(deps.models, req.model ?? req.definition.model)?.temperature,
  };
  // The Harness creates a Turn's working directory on first admission (§5.2).
  if (definition.cwd !== undefined) {
    const created = await createWorkingDirectory(definition.cwd);
    if (created.kind === "failed")
      return { kind: "failed", error: { type: "cwd", message: created.message } };
  }
  const working =
    definition.cwd === undefined
      ? []
      : await createWorkingTools(
          definition.workspace,
          definition.cwd,
          deps.secrets,
          deps.sandbox && {
            sandbox: deps.sandbox,
            // Unsandboxed (JR2_SANDBOX=off) tools have the host's network: no proxy to start.
            network:
              deps.sandbox.mode === "on" ? await runNetwork(slot.iid, definition.network, deps) : "none",
            // A Repo Slot's run repository and mirror objects, read-only, for the tool's own git.
            ...(deps.sandbox.mode === "on" ? await repoSlotBinds(definition.cwd, deps) : {}),
          },
        );
  // A rebuilt conversation's MCP tools come from its stored snapshot (issue 29, keyed by iid).
  const mcp = await mcpPhase(slot, req, definition.cwd, deps);
  if (mcp.kind === "failed") return mcp;
  slot.seat = createSeat({
    systemPrompt: definition.systemPrompt,
    // Working tools + MCP snapshot + Menu (issue 29; SPEC §7.2 step 2 for Agents with MCP).
    workingTools: [...working, ...mcp.tools],
    menu: definition.menu,
    cwd: definition.cwd,
    limiter: deps.limiter,
    temperature: definition.temperature,
  });
  if (slot.restore) slot.seat.restore(slot.restore.messages, slot.restore.tags);
  slot.restore = undefined;
  slot.definition = definition;
  slot.menuOrder = definition.menu.map((t) => t.name);
  slot.hasWorkingTools = working.length > 0;
  slot.cwd = definition.cwd;
  return { kind: "seated", seat: slot.seat, ...(slot.mcp ? { mcp: slot.mcp, mcpNew: true } : {}) };
}

/** The sandbox's extra binds for a Repo Slot at `cwd` (ADR-0214), or nothing for a plain workspace. */
async function repoSlotBinds(cwd: string, deps: TurnDeps) {
  const view = await deps.workspaces?.sandboxView(cwd);
  return view ? { extra: view } : {};
}

/** The MCP receipts, all from menu.ts. */
const MCP_TEXTS: McpTexts = {
  gone: mcpToolGoneReceipt,
  down: mcpServerDownReceipt,
  failed: mcpCallFailedReceipt,
  cut: mcpResultCutNote,
};

/** A fallback store when the Harness was built without one (a library user, unit tests). */
const fallbackStore = memorySnapshotStore();

/**
 * The conversation's MCP servers (issue 29): opened once, as the conversation is seated. A
 * server that is down is one warn line and a receipt on each of its tools' calls — unless the
 * Agent marks it `required`: then the Submission fails `mcp-unavailable` naming it, and nothing
 * is seated (the next Submission lists again).
 */
async function mcpPhase(
  slot: SeatSlot,
  req: SubmissionRequest,
  cwd: string | undefined,
  deps: TurnDeps,
): Promise<{ kind: "ok"; tools: AgentTool[] } | Extract<SeatPhase, { kind: "failed" }>> {
  const servers = req.definition.mcp;
  if (!servers || Object.keys(servers).length === 0) return { kind: "ok", tools: [] };
  const environment = deps.mcp?.environment ?? {};
  // Header secrets are redacted from every MCP result and reason whatever their names say; so
  // is the git token, which a server's stderr must never carry into a warn line (ADR-0235).
  const secrets = withSecretValues(deps.secrets, [
    ...headerSecretValues(servers, environment),
    ...gitTokenValues(environment),
  ]);
  const session = await openMcpSession({
    iid: slot.iid,
    servers,
    cwd,
    access: req.definition.workspace,
    context: {
      ...(deps.sandbox ? { sandbox: deps.sandbox } : {}),
      environment,
      secrets,
      onTrouble: (message) => deps.log("MCP server said", { iid: slot.iid, message: message.slice(0, 500) }),
    },
    store: deps.mcp?.store ?? fallbackStore,
    onListChanged: (server) =>
      deps.log("MCP server announced tools/list_changed; the conversation keeps its snapshot", {
        iid: slot.iid,
        server,
      }),
    ...(deps.mcp?.timeouts ? { timeouts: deps.mcp.timeouts } : {}),
  });
  const required = session.down.filter((d) => d.required);
  if (required.length > 0) {
    await session.close();
    return {
      kind: "failed",
      error: {
        type: "mcp",
        cause: "mcp-unavailable",
        message: `required MCP server ${required.map((d) => `\`${d.server}\` (${secrets.redact(d.reason)})`).join(", ")} is down as the conversation starts`,
      },
    };
  }
  for (const d of session.down)
    logAt(deps, "warn", "MCP server unavailable", {
      iid: slot.iid,
      server: d.server,
      reason: secrets.redact(d.reason),
    });
  if (session.drifted)
    logAt(
      deps,
      "warn",
      "MCP servers list other tools than the conversation's stored snapshot; it keeps the snapshot",
      {
        iid: slot.iid,
        stored: session.snapshot.hash,
        listed: session.drifted,
      },
    );
  for (const c of session.collisions)
    logAt(deps, "warn", "MCP tools collide after canonicalization; both left out", { iid: slot.iid, ...c });
  slot.mcp = session;
  const warn = (msg: string, fields: Record<string, unknown>) =>
    logAt(deps, "warn", msg, { iid: slot.iid, ...fields });
  return { kind: "ok", tools: mcpAgentTools(session, secrets, warn, MCP_TEXTS) };
}

/** The run's network: its egress proxy for a host list, `host` as asked, else none. */
async function runNetwork(
  iid: string,
  network: SubmissionRequest["network"],
  deps: TurnDeps,
): Promise<WorkingNetwork> {
  if (network === "host") return "host";
  if (!network || network.length === 0 || !deps.egress) return "none";
  return deps.egress.open(iid, network);
}

/** Phase 3: the user message — prompt (or nudge), then the Turn part. */
export function buildRequestPhase(slot: SeatSlot, req: SubmissionRequest, allowed: string[]): string {
  const part = turnPart({
    cwd: slot.hasWorkingTools ? req.cwd : undefined,
    notices: req.notices ?? [],
    allowed,
    menuOrder: slot.menuOrder,
  });
  return userMessageText(req.kind, req.prompt, part);
}
