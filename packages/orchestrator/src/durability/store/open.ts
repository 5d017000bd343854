import type { Logger } from "pino";
import { createMemoryStore, type RunStore } from "./run-store.js";
import { openSqliteStore, STORE_FILE } from "./sqlite.js";
import { versionsKeptOf } from "./versions.js";

/**
 * The store `jr2 serve` uses (§8): SQLite under `JR2_DATA_DIR`, or — with no data dir — the
 * memory store, with a warning that runs do not survive a restart.
 * `newStore` (`jr2 serve --new-store`, `JR2_NEW_STORE=1`): accept an empty or missing store file
 * although the data dir's marker says it held one. `JR2_VERSIONS_KEPT` (default 20): how many
 * versions a settled run keeps (ADR-0270).
 * @throws Error naming the path and the remedy when the SQLite file cannot be used, or naming
 * `JR2_VERSIONS_KEPT` when it is not a positive integer
 */
export function openRunStore(
  dataDir: string | undefined,
  log: Logger,
  options: { newStore?: boolean } = { newStore: process.env.JR2_NEW_STORE === "1" },
): RunStore {
  const versionsKept = versionsKeptOf(process.env);
  if (!dataDir) {
    log.warn("JR2_DATA_DIR is not set: runs are kept in memory and lost on restart");
    return createMemoryStore({ versionsKept });
  }
  const store = openSqliteStore(dataDir, { versionsKept, ...(options.newStore ? { newStore: true } : {}) });
  log.info({ store: `${dataDir}/${STORE_FILE}` }, "run store opened");
  return store;
}
