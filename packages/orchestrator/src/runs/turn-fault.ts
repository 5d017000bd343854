import type { FaultCause } from "@jr2/wire";
import type { EventObject } from "xstate";
import { type Sender, stampSender } from "../menu/sender.js";
import type { TurnStart } from "../xstate/run-binding.js";
import type { TurnSeat } from "./turn-telemetry.js";
import { sendWorkspaceLost } from "./workspace-lost.js";

/**
 * Sends the Turn `agent.fault { reason, detail?, cause? }` from its Agent at `iid` (§5.6); a
 * `workspace-lost` fault then also sends `workspace.lost` to the workspace's body (issue 28 §6).
 * @param cwd the Turn's placed working directory (names the lost Worktree's slot)
 */
export function sendFault(
  turn: TurnStart,
  seat: TurnSeat,
  iid: string,
  reason: string,
  detail?: string,
  cause?: FaultCause,
  cwd?: string,
): void {
  const sender = { kind: "agent", name: seat.agent, iid } satisfies Sender;
  const payload = {
    reason,
    ...(detail === undefined ? {} : { detail }),
    ...(cause === undefined ? {} : { cause }),
  };
  turn.sendBack(stampSender("agent.fault", payload, sender) as EventObject);
  if (cause === "workspace-lost") sendWorkspaceLost(turn.self, cwd, sender);
}
