/**
 * A route parameter back to its text: `decodeURIComponent`, or the segment as it came when it
 * holds a malformed escape (`/ui/runs/100%`) — a bad URL is a "not found", never a crash.
 */
export function unseg(s: string | undefined): string {
  try {
    return decodeURIComponent(s ?? "");
  } catch {
    return s ?? "";
  }
}
