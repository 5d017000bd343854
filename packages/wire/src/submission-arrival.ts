import { z } from "zod";
import { Admission } from "./harness.js";

/**
 * The Harness's answer to `GET /conversations/:iid/submissions/:clientSubmissionId`
 * (issue 24 item 5, ADR-0288): whether the admission named by that client-chosen id reached
 * this Harness process, and if so the admission it was given (the answer the reset cut).
 * `bootId` names the process that answers: an "it did not arrive" is only true of the process
 * that took the request, so the Orchestrator trusts it only when the bootId is the one it read
 * before sending. An older Harness has no such route (404 without this body): the Orchestrator
 * cannot tell, and keeps its earlier rule (ADR-0037).
 */
export const SubmissionArrival = z.object({
  arrived: z.boolean(),
  admission: Admission.optional(),
  bootId: z.string().optional(),
});
export type SubmissionArrival = z.infer<typeof SubmissionArrival>;
