import type { Logger } from "pino";
import { createMemoryStore, type RunStore } from "./run-store.js";
import { openSqliteStore, STORE_FILE } from "./sqlite.js";

/**
 * The store `jr2 serve` uses (§8): SQLite under `JR2_DATA_DIR`, or — with no data dir — the
 * memory store, with a warning that runs do not survive a restart.
 * @throws Error naming the path when the SQLite file cannot be opened
 */
export function openRunStore(dataDir: string | undefined, log: Logger): RunStore {
  if (!dataDir) {
    log.warn("JR2_DATA_DIR is not set: runs are kept in memory and lost on restart");
    return createMemoryStore();
  }
  const store = openSqliteStore(dataDir);
  log.info({ store: `${dataDir}/${STORE_FILE}` }, "run store opened");
  return store;
}
