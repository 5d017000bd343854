import { removeStaleSlotFiles } from "./stale-files.js";

/** Runs `fn` after every earlier operation on the slot `key` ended (whether it failed or not). */
export type SlotQueue = <T>(key: string, fn: () => Promise<T>) => Promise<T>;

/**
 * The Harness's order of operations per Repo Slot (issue 28 §2): one chain per slot key
 * (`<runId>/<workspace>/<slot>`), so two requests never share a slot's index or branch; a chain
 * is dropped once it is idle. Before this process's first operation on a slot, what a killed
 * Harness left beside its repository — git lock files, the rescue's index, the record's
 * temporary copies — is removed and said in one warn line (stale-files.ts, ADR-0223): nothing of
 * this process can hold them yet, and the run's next git would otherwise fail on them.
 * @param repos `<workRoot>/.repos`
 */
export function createSlotQueue(
  repos: string,
  warn?: (msg: string, fields?: Record<string, unknown>) => void,
): SlotQueue {
  const chains = new Map<string, Promise<unknown>>();
  const swept = new Set<string>();
  const sweep = async (key: string) => {
    if (swept.has(key)) return;
    swept.add(key);
    const removed = await removeStaleSlotFiles(repos, key);
    if (removed.length)
      warn?.("removed what a killed Harness left beside a Repo Slot's repository (ADR-0223)", {
        slot: key,
        removed,
      });
  };
  return <T>(key: string, fn: () => Promise<T>): Promise<T> => {
    const prev = chains.get(key) ?? Promise.resolve();
    const next = prev
      .catch(() => undefined)
      .then(() => sweep(key))
      .then(fn);
    chains.set(key, next);
    void next.finally(() => chains.get(key) === next && chains.delete(key)).catch(() => undefined);
    return next;
  };
}
