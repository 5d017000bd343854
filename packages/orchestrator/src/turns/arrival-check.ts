/**
 * An admission reset in transit, asked about by its client-chosen id (issue 24 item 5,
 * ADR-0288): before falling back to "provably lost" (lost-admission.ts, ADR-0037), the Turn
 * asks the Harness whether the Submission it sent as `clientSubmissionId` arrived. The answer
 * settles the keep-alive race without running the task twice or faulting the Turn:
 * - arrived: the Harness's admission is taken as the answer the reset cut;
 * - did not arrive, said by the same Harness process that answered `/healthz` before the send
 *   (same `bootId`): the admission is sent again with the same id (the Harness answers a
 *   repeated id with its first admission, so even a late arrival is not admitted twice);
 * - anything else (an older Harness without the route, another process, no answer): the
 *   earlier rule decides.
 */
import type { Admission } from "@jr2/wire";
import type { ArrivalResult, HarnessClient, HealthResult } from "./harness-client.js";

/** Re-sends of one admission that its Harness said never arrived (a reset-storm bound). */
export const ARRIVAL_RESENDS = 2;

/** What the Turn does with an admission reset in transit. */
export type ArrivalVerdict =
  | { kind: "arrived"; admission: Admission }
  | { kind: "resend"; why: string }
  | { kind: "cannot-tell"; why: string };

/**
 * Asks the Harness once (its client sends the ask again after a reset, as a read).
 * @param before - `/healthz` as read right before the admission was sent
 * @returns the verdict; never throws
 */
export async function askArrival(
  client: HarnessClient,
  iid: string,
  clientSubmissionId: string,
  before: HealthResult | undefined,
): Promise<ArrivalVerdict> {
  if (!client.arrival) return { kind: "cannot-tell", why: "this client cannot ask what arrived" };
  const answer: ArrivalResult = await client.arrival(iid, clientSubmissionId);
  if (answer.kind === "arrived") return { kind: "arrived", admission: answer.admission };
  if (answer.kind === "cannot-tell")
    return { kind: "cannot-tell", why: `the Harness could not say whether it arrived (${answer.error})` };
  const sentTo = before?.kind === "up" ? before.bootId : undefined;
  if (sentTo !== undefined && answer.bootId === sentTo)
    return {
      kind: "resend",
      why: `the Harness at ${client.endpoint.url} (bootId ${sentTo}) says Submission ${clientSubmissionId} never arrived`,
    };
  return {
    kind: "cannot-tell",
    why: `"not arrived" came from bootId ${answer.bootId ?? "(none)"}, not the process the admission was sent to (${sentTo ?? "unknown"})`,
  };
}
