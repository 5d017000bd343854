/**
 * A per-endpoint cap on concurrent model requests (§7.1): a home-lab GPU serves a few at a
 * time, the rest wait here in FIFO order. The waiting count is the health answer's queue depth.
 */
export interface EndpointLimiter {
  /** Waits for a slot; resolves to a release function, or `undefined` if `signal` aborted first. */
  acquire(endpoint: string, signal?: AbortSignal): Promise<(() => void) | undefined>;
  /** Requests waiting for a slot, per endpoint. */
  depth(): Record<string, { running: number; queued: number }>;
}

/** @param cap concurrent requests per endpoint (≥ 1). */
export function createEndpointLimiter(cap: number): EndpointLimiter {
  const lanes = new Map<string, { running: number; waiting: Array<() => void> }>();
  const lane = (endpoint: string) => {
    let l = lanes.get(endpoint);
    if (!l) {
      l = { running: 0, waiting: [] };
      lanes.set(endpoint, l);
    }
    return l;
  };
  return {
    acquire(endpoint, signal) {
      const l = lane(endpoint);
      const release = () => {
        l.running--;
        l.waiting.shift()?.();
      };
      if (l.running < cap) {
        l.running++;
        return Promise.resolve(release);
      }
      return new Promise((resolve) => {
        const grant = () => {
          signal?.removeEventListener("abort", onAbort);
          l.running++;
          resolve(release);
        };
        const onAbort = () => {
          l.waiting = l.waiting.filter((w) => w !== grant);
          resolve(undefined);
        };
        signal?.addEventListener("abort", onAbort, { once: true });
        l.waiting.push(grant);
      });
    },
    depth() {
      const out: Record<string, { running: number; queued: number }> = {};
      for (const [endpoint, l] of lanes) out[endpoint] = { running: l.running, queued: l.waiting.length };
      return out;
    },
  };
}
