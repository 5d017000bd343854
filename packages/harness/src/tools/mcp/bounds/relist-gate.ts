/** Least time between two re-listings of one server on `list_changed`, ms (ADR-0233). */
export const MCP_RELIST_MIN_INTERVAL_MS = 2_000;

/**
 * A `list_changed` storm made bounded (ADR-0233): the returned trigger runs `relist` at most once
 * per `intervalMs` and never two at once (single-flight). Triggers that arrive while a listing
 * runs or within the interval collapse into ONE trailing listing, so the live names still end up
 * current after the storm. A hostile server sending thousands of notifications a second costs
 * the Harness one listing per interval.
 */
export function relistGate(relist: () => Promise<void>, intervalMs = MCP_RELIST_MIN_INTERVAL_MS): () => void {
  let running = false;
  let pending = false;
  let last = Number.NEGATIVE_INFINITY;
  let timer: NodeJS.Timeout | undefined;
  const run = async () => {
    timer = undefined;
    running = true;
    pending = false;
    last = Date.now();
    try {
      await relist();
    } finally {
      running = false;
      if (pending) schedule();
    }
  };
  const schedule = () => {
    if (running || timer) {
      pending = true;
      return;
    }
    const wait = last + intervalMs - Date.now();
    if (wait <= 0) void run();
    else {
      timer = setTimeout(() => void run(), wait);
      timer.unref();
    }
  };
  return schedule;
}
