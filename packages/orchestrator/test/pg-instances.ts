/**
 * Several PostgreSQL store instances on one fresh database, for the store suites (ADR-0280):
 * call inside a `describePg` block. Each `instance(id)` opens a store as instance `id` (its
 * own pool, leases and notices), closed after each test; the database is dropped after the
 * block. `lines` collects what the stores log, to look for a password in it.
 */
import { afterAll, afterEach, beforeAll } from "vitest";
import {
  openPostgresStore,
  type PostgresRunStore,
  type PostgresStoreOptions,
} from "../src/durability/store/postgres.js";
import { freshPgDatabase } from "./pg.js";

/** The instances of one suite: see the module doc. `db` is set once the block's `beforeAll` ran. */
export function pgInstances(prefix: string, leaseMs: number) {
  let db: Awaited<ReturnType<typeof freshPgDatabase>> | undefined;
  const open: PostgresRunStore[] = [];
  const lines: string[] = [];
  const log = {
    warn: (obj: unknown, msg?: string) => lines.push(JSON.stringify([obj, msg])),
    info: (obj: unknown, msg?: string) => lines.push(JSON.stringify([obj, msg])),
  };
  let n = 0;
  beforeAll(async () => {
    db = await freshPgDatabase(prefix);
  });
  afterEach(async () => {
    for (const s of open.splice(0)) await s.close();
  });

  afterAll(async () => {
    await db?.drop();
  });
  return {
    lines,
    /** Closes every store opened so far (also done after each test). */
    async closeAll() {
      for (const s of open.splice(0)) await s.close();
    },
    get db() {
      if (!db) throw new Error("pgInstances: the database is made in beforeAll");
      return db;
    },
    /** A store as instance `id` on the suite's database (or `url`). */
    async instance(id: string, options: Partial<PostgresStoreOptions> = {}, url?: string) {
      const store = await openPostgresStore(url ?? this.db.url, {
        instanceId: id,
        advertiseUrl: `http://127.0.0.1:1${id.length}`,
        leaseMs,
        poolMax: 4,
        log: log as unknown as PostgresStoreOptions["log"],
        ...options,
      });
      open.push(store);
      return store;
    },
    /** A fresh run id of this suite. */
    runId: () => `run-${++n}`,
  };
}
