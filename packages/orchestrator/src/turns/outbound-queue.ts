/**
 * Per-iid FIFO of the Orchestrator's outbound calls to a Harness (SPEC §5.3): the abort of
 * the ending Turn is sent before the next Turn's admission on the same conversation, across
 * actor instances. A failed call never blocks the calls queued behind it.
 */
export interface OutboundQueues {
  /** Runs `call` after every call queued earlier for `iid` has settled. */
  run<T>(iid: string, call: () => Promise<T>): Promise<T>;
  /** Number of addresses with calls in flight (for tests and health). */
  readonly pending: number;
}

export function createOutboundQueues(): OutboundQueues {
  const tails = new Map<string, Promise<unknown>>();
  return {
    run<T>(iid: string, call: () => Promise<T>): Promise<T> {
      const previous = tails.get(iid) ?? Promise.resolve();
      const next = previous.then(call, call);
      const tail = next.catch(() => undefined);
      tails.set(iid, tail);
      void tail.then(() => {
        if (tails.get(iid) === tail) tails.delete(iid);
      });
      return next;
    },
    get pending() {
      return tails.size;
    },
  };
}
