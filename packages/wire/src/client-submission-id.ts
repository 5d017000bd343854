import { z } from "zod";

/**
 * A Submission's client-chosen id (issue 24 item 5, ADR-0288): the Orchestrator names each
 * admission it sends with a fresh id, so that when the request is reset in transit it can ask
 * the Harness whether that Submission arrived (`GET /conversations/:iid/submissions/:id`,
 * {@link SUBMISSION_ARRIVAL_PATH}) instead of guessing. Optional on `SubmissionRequest`: an
 * older Harness drops the key (zod objects drop keys they do not know), an older Orchestrator
 * sends none. 1–128 characters of `[A-Za-z0-9._-]` (it rides in a URL path segment).
 */
export const ClientSubmissionId = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9._-]+$/, "letters, digits, `.`, `_` and `-` only");
export type ClientSubmissionId = z.infer<typeof ClientSubmissionId>;

/** The Harness route that answers whether a Submission arrived, as a Fastify path. */
export const SUBMISSION_ARRIVAL_PATH = "/conversations/:iid/submissions/:clientSubmissionId";
