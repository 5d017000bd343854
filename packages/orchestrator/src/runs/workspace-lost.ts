/**
 * `workspace.lost` (issue 28 §6, ADR-0215): a Turn that ended `agent.fault { reason: "infra",
 * cause: "workspace-lost" }` also tells its workspace's body, where a workflow may route it
 * (`on: { "workspace.lost": … }`); unrouted, it is dropped like any event the body's state does
 * not take. Sent after the `agent.fault`, so a body that routes the fault first (as every Agent
 * state must) is never left with an unrouted fault.
 */
import type { AnyActorRef, EventObject } from "xstate";
import type { WorkspaceLostEvent } from "../authoring/workspace-lost-event.js";
import { findWorkspace } from "../menu/marks.js";
import { type Sender, stampSender } from "../menu/sender.js";

/** The payload of `workspace.lost` (the event without `type` and `sender`). */
export type WorkspaceLostPayload = Omit<WorkspaceLostEvent, "type" | "sender">;

/**
 * Sends `workspace.lost` to the body of the workspace above `turnActor` (the wrapper's child
 * `body`), stamped with the Agent's sender. A no-op when the Turn is under no workspace or the
 * body is gone (it reached a final state on the fault).
 * @param cwd the Turn's placed working directory
 */
export function sendWorkspaceLost(
  turnActor: AnyActorRef,
  cwd: string | undefined,
  sender: Extract<Sender, { kind: "agent" }>,
): void {
  const found = findWorkspace(turnActor);
  if (!found) return;
  const body = (found.wrapper.getSnapshot() as { children?: Record<string, AnyActorRef | undefined> })
    .children?.body;
  if (!body || (body.getSnapshot() as { status?: string }).status !== "active") return;
  const path = cwd ?? found.handles.cwd;
  const slot = Object.entries(found.handles.repos ?? {}).find(
    ([, h]) => path === h.path || path.startsWith(`${h.path}/`),
  );
  const payload: WorkspaceLostPayload = {
    workspace: found.handles.name,
    ...(slot ? { slot: slot[0] } : {}),
    path: slot ? slot[1].path : path,
    agent: sender.name,
  };
  body.send(stampSender("workspace.lost", { ...payload }, sender) as EventObject);
}
