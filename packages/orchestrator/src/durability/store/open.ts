import type { Logger } from "pino";
import { openPostgresStore } from "./postgres.js";
import { createMemoryStore, type RunStore } from "./run-store.js";
import { openSqliteStore, STORE_FILE } from "./sqlite.js";
import { versionsKeptOf } from "./versions.js";

/**
 * The shared PostgreSQL store `jr2 serve` is pointed at (ADR-0280): `JR2_STORE_URL` (the
 * password never logged), this instance's id and advertised URL (written into lease rows) and
 * the lease length.
 */
export interface PostgresStoreConfig {
  url: string;
  /** `JR2_INSTANCE_ID`, default the advertised URL. */
  instanceId: string;
  /** `JR2_ADVERTISE_URL`, default `http://127.0.0.1:<JR2_PORT>`. */
  advertiseUrl: string;
  /** `JR2_LEASE_MS`, default 15000. */
  leaseMs: number;
}

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

/**
 * The store `jr2 serve` uses, PostgreSQL included (ADR-0280): with `postgres` (`JR2_STORE_URL`)
 * the shared PostgreSQL store — it wins over `JR2_DATA_DIR`, and the log says so — else
 * {@link openRunStore}. The URL is logged redacted (`postgres://user:***@host:port/db`).
 * @throws Error naming JR2_STORE_URL (redacted), or the host, port and database it could not
 *   reach (never the password), or the SQLite path, with the remedy
 */
export async function openServeStore(
  config: { dataDir?: string; postgres?: PostgresStoreConfig },
  log: Logger,
): Promise<RunStore> {
  const { postgres } = config;
  if (!postgres) return openRunStore(config.dataDir, log);
  const versionsKept = versionsKeptOf(process.env);
  // Info, not a warning: `pnpm start` and the compose profile always set a data dir (logs, jr2.env).
  if (config.dataDir)
    log.info(
      { dataDir: config.dataDir },
      "JR2_STORE_URL and JR2_DATA_DIR are both set: the PostgreSQL store (JR2_STORE_URL) is used, the data dir keeps no runs",
    );
  const store = await openPostgresStore(postgres.url, {
    versionsKept,
    instanceId: postgres.instanceId,
    advertiseUrl: postgres.advertiseUrl,
    leaseMs: postgres.leaseMs,
    log,
  });
  log.info(
    {
      store: store.where.redacted,
      instanceId: postgres.instanceId,
      advertiseUrl: postgres.advertiseUrl,
      leaseMs: postgres.leaseMs,
    },
    "run store opened (PostgreSQL, shared)",
  );
  return store;
}
