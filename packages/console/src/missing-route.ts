/**
 * A 404 that means "this Orchestrator has no such route" (an Orchestrator from before issue
 * 11's transcript routes), told apart from a 404 about the data — no such run, no such Turn —
 * which is an answer the page shows, not a missing feature.
 */
export function isMissingRoute(status: number, code: string): boolean {
  return status === 404 && (code === "JR2_ERR_ROUTE_NOT_FOUND" || code === "HTTP");
}
