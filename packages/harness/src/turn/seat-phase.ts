import type { SubmissionRequest, Tool } from "@jr2/wire";
import { createSeat, type Seat } from "../engine/pi/engine-pi.js";
import { systemPrompt, turnPart, userMessageText } from "../presenters/briefing.js";
import { modelEntry } from "../provider/models.js";
import type { WorkingNetwork } from "../tools/sandbox/sandboxed-tools.js";
import { sandboxRefusal } from "../tools/sandbox/working-sandbox.js";
import { createWorkingDirectory } from "../tools/working-directory.js";
import { createWorkingTools } from "../tools/working-tools.js";
import type { SeatSlot, TurnDeps } from "./turn-deps.js";

/** The seat of a conversation, or why it could not be built. */
export type SeatPhase =
  | { kind: "seated"; seat: Seat }
  | { kind: "failed"; error: { type: "cwd" | "sandbox"; message: string } };

/**
 * Phase 2: the first Submission builds the seat from the FIRST surface; later ones reuse it. A
 * conversation rebuilt after a restart, the TTL or from a pushed history (issue 27) is seated
 * from its stored definition and its messages replayed, so its next request extends the last.
 * A working directory that cannot be created fails the Submission (`{ type: "cwd" }`) and
 * seats nothing, so a later Submission tries again.
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
          },
        );
  slot.seat = createSeat({
    systemPrompt: definition.systemPrompt,
    workingTools: working,
    menu: definition.menu,
    cwd: definition.cwd,
    limiter: deps.limiter,
    temperature: definition.temperature,
  });
  if (slot.restore) slot.seat.restore(slot.restore.messages);
  slot.restore = undefined;
  slot.definition = definition;
  slot.menuOrder = definition.menu.map((t) => t.name);
  slot.hasWorkingTools = working.length > 0;
  slot.cwd = definition.cwd;
  return { kind: "seated", seat: slot.seat };
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
