/**
 * The PostgreSQL store's schema (ADR-0280): migrations with their own numbering, recorded in
 * `schema_migrations`, applied at open in one transaction under `pg_advisory_xact_lock`, so
 * two instances opening one database together apply each migration once. A database at a
 * newer version than this jr2 knows is refused, naming the remedy. Text columns that are
 * compared or ordered (`run_id`, `updated_at`) use the `C` collation: byte order, as SQLite's.
 * @see SPEC §8
 */
import type pg from "pg";

/**
 * Schema migrations. Append only: a released migration never changes. Row order columns
 * (`ord`, an identity) stand in for SQLite's rowid: recording order, the newest answer.
 */
const migrations: readonly string[] = [
  `CREATE TABLE runs (
     run_id TEXT COLLATE "C" PRIMARY KEY,
     workflow TEXT COLLATE "C" NOT NULL,
     status TEXT NOT NULL,
     updated_at TEXT COLLATE "C" NOT NULL,
     outcome TEXT,
     final_state TEXT,
     blob TEXT NOT NULL
   );
   CREATE INDEX runs_status ON runs(status);
   CREATE INDEX runs_listed ON runs(updated_at DESC, run_id DESC);
   CREATE INDEX runs_status_listed ON runs(status, updated_at DESC, run_id DESC);
   CREATE INDEX runs_workflow_listed ON runs(workflow, updated_at DESC, run_id DESC);
   CREATE INDEX runs_outcome_listed ON runs(outcome, updated_at DESC, run_id DESC);
   CREATE TABLE pick_answers (
     ord BIGINT GENERATED ALWAYS AS IDENTITY,
     run_id TEXT COLLATE "C" NOT NULL,
     iid TEXT NOT NULL,
     turn_id TEXT NOT NULL,
     tool_call_id TEXT NOT NULL,
     scope TEXT NOT NULL,
     answer TEXT NOT NULL,
     PRIMARY KEY (run_id, iid, turn_id, tool_call_id)
   );
   CREATE INDEX pick_answers_any_turn ON pick_answers(run_id, iid, tool_call_id, ord DESC);
   CREATE TABLE usage_events (
     ord BIGINT GENERATED ALWAYS AS IDENTITY,
     run_id TEXT COLLATE "C" NOT NULL,
     iid TEXT NOT NULL,
     submission_id TEXT NOT NULL,
     position TEXT NOT NULL,
     prompt_tokens BIGINT,
     cached_tokens BIGINT,
     completion_tokens BIGINT,
     finish_reason TEXT,
     turn_id TEXT,
     PRIMARY KEY (run_id, iid, submission_id, position)
   );
   CREATE INDEX usage_events_run ON usage_events(run_id, ord);
   CREATE TABLE run_events (
     run_id TEXT COLLATE "C" NOT NULL,
     seq INTEGER NOT NULL,
     at TEXT NOT NULL,
     type TEXT NOT NULL,
     event TEXT NOT NULL,
     PRIMARY KEY (run_id, seq)
   );
   CREATE TABLE transcript_entries (
     ord BIGINT GENERATED ALWAYS AS IDENTITY,
     run_id TEXT COLLATE "C" NOT NULL,
     iid TEXT NOT NULL,
     submission_id TEXT NOT NULL,
     position TEXT NOT NULL,
     turn_id TEXT NOT NULL,
     at TEXT NOT NULL,
     kind TEXT NOT NULL,
     entry TEXT NOT NULL,
     capped TEXT,
     PRIMARY KEY (run_id, iid, submission_id, position)
   );
   CREATE INDEX transcript_entries_turn ON transcript_entries(run_id, turn_id, ord);
   CREATE INDEX transcript_entries_iid ON transcript_entries(run_id, iid, ord);
   CREATE TABLE turns (
     ord BIGINT GENERATED ALWAYS AS IDENTITY,
     run_id TEXT COLLATE "C" NOT NULL,
     turn_id TEXT NOT NULL,
     started_at TEXT COLLATE "C" NOT NULL,
     record TEXT NOT NULL,
     PRIMARY KEY (run_id, turn_id)
   );
   CREATE TABLE run_versions (
     run_id TEXT COLLATE "C" NOT NULL,
     version INTEGER NOT NULL,
     at TEXT NOT NULL,
     status TEXT NOT NULL,
     value TEXT NOT NULL,
     cause TEXT NOT NULL,
     blob TEXT NOT NULL,
     PRIMARY KEY (run_id, version)
   );
   CREATE TABLE run_leases (
     run_id TEXT COLLATE "C" PRIMARY KEY,
     owner_id TEXT NOT NULL,
     owner_url TEXT NOT NULL,
     epoch BIGINT NOT NULL,
     expires_at TIMESTAMPTZ NOT NULL
   );
   CREATE INDEX run_leases_owner ON run_leases(owner_id);`,
  // Versions stored compactly (issue 22, ADR-0277), as SQLite's migration 9: older rows have
  // codec NULL and are read as they are.
  `ALTER TABLE run_versions ADD COLUMN codec TEXT, ADD COLUMN base INTEGER, ADD COLUMN packed BYTEA,
     ADD COLUMN workspace TEXT;`,
  // Run starts' idempotency keys (issue 24 item 6, ADR-0282), as SQLite's migration 10.
  `CREATE TABLE run_start_keys (
     key TEXT COLLATE "C" PRIMARY KEY,
     run_id TEXT NOT NULL,
     workflow TEXT NOT NULL,
     created_ms BIGINT NOT NULL
   );`,
  // The byte-exact history of a live run's conversations (issue 27, ADR-0176), as SQLite's
  // migration 11; \`ord\` is the arrival order.
  `CREATE TABLE conversation_history (
     ord BIGINT GENERATED ALWAYS AS IDENTITY,
     run_id TEXT COLLATE "C" NOT NULL,
     iid TEXT NOT NULL,
     sha256 TEXT NOT NULL,
     submission_id TEXT NOT NULL,
     messages TEXT NOT NULL,
     PRIMARY KEY (run_id, iid, sha256)
   );`,
];

/** The advisory lock key migrations hold (any fixed 64-bit number; "jr2" in ASCII). */
const MIGRATION_LOCK = 0x6a7232;

/** How many migrations this jr2 knows: the schema version it writes. */
export const POSTGRES_SCHEMA_VERSION = migrations.length;

/**
 * Applies the migrations the database lacks, in order, in one transaction holding
 * `pg_advisory_xact_lock`: a second instance opening at once waits, then finds them applied.
 * @param where the redacted URL, named in errors
 * @throws Error naming `where` when the schema is newer than this jr2 knows (upgrade jr2), or
 *   when the database holds a `runs` table that is not a jr2 store's
 */
export async function migratePostgres(client: pg.ClientBase, where: string): Promise<number[]> {
  await client.query("BEGIN");
  try {
    await client.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK]);
    await refuseForeign(client, where);
    await client.query(
      "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())",
    );
    const { rows } = await client.query<{ v: number | null }>(
      "SELECT MAX(version) AS v FROM schema_migrations",
    );
    const current = rows[0]?.v ?? 0;
    if (current > migrations.length)
      throw new Error(
        `the run store at ${where} is at schema version ${current}, newer than this jr2 knows (${migrations.length}): ` +
          "upgrade jr2 on every instance sharing it (never downgrade one that shares a migrated database)",
      );
    const applied: number[] = [];
    for (let v = current + 1; v <= migrations.length; v++) {
      await client.query(migrations[v - 1]!);
      await client.query("INSERT INTO schema_migrations (version) VALUES ($1)", [v]);
      applied.push(v);
    }
    await client.query("COMMIT");
    return applied;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  }
}

/** A `runs` table without `schema_migrations` is another program's: never migrated into. */
async function refuseForeign(client: pg.ClientBase, where: string): Promise<void> {
  const { rows } = await client.query<{ name: string }>(
    `SELECT table_name AS name FROM information_schema.tables
     WHERE table_schema = current_schema() AND table_name IN ('runs', 'schema_migrations')`,
  );
  const names = rows.map((r) => r.name);
  if (names.includes("runs") && !names.includes("schema_migrations"))
    throw new Error(
      `the database at ${where} holds a \`runs\` table but no \`schema_migrations\`: it is not a jr2 store. ` +
        "Point JR2_STORE_URL at an empty database of its own (CREATE DATABASE jr2)",
    );
}
