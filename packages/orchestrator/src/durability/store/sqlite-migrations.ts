/**
 * The SQLite store's schema, as migrations versioned from day one (SPEC §8): `schema_migrations`
 * records each applied version; opening applies the missing ones in order, in one transaction,
 * and refuses a store from a newer jr2.
 * @see SPEC §8
 */
import type Database from "better-sqlite3";

/**
 * Schema migrations, versioned from day one. Append only: a released migration never changes.
 * @see SPEC §8
 */
const migrations: readonly string[] = [
  `CREATE TABLE runs (
     run_id TEXT PRIMARY KEY,
     workflow TEXT NOT NULL,
     status TEXT NOT NULL,
     updated_at TEXT NOT NULL,
     blob TEXT NOT NULL
   );
   CREATE INDEX runs_status ON runs(status);
   CREATE TABLE pick_answers (
     run_id TEXT NOT NULL,
     iid TEXT NOT NULL,
     tool_call_id TEXT NOT NULL,
     answer TEXT NOT NULL,
     PRIMARY KEY (run_id, iid, tool_call_id)
   );`,
  // 2: the scope a pick was answered in, so a repeat after a restart is served only in it (§4.4).
  "ALTER TABLE pick_answers ADD COLUMN scope TEXT NOT NULL DEFAULT 'instance';",
  // 3: the Turn is part of the key (ADR-0252): a continued conversation's next Turn may reuse a
  // toolCallId. Rows from before carry no Turn (''), found only by a pick sent without turnId.
  `CREATE TABLE pick_answers_v3 (
     run_id TEXT NOT NULL,
     iid TEXT NOT NULL,
     turn_id TEXT NOT NULL,
     tool_call_id TEXT NOT NULL,
     scope TEXT NOT NULL,
     answer TEXT NOT NULL,
     PRIMARY KEY (run_id, iid, turn_id, tool_call_id)
   );
   INSERT INTO pick_answers_v3 (run_id, iid, turn_id, tool_call_id, scope, answer)
     SELECT run_id, iid, '', tool_call_id, scope, answer FROM pick_answers;
   DROP TABLE pick_answers;
   ALTER TABLE pick_answers_v3 RENAME TO pick_answers;`,
  // 4: model requests' usage, one row per stream event (ADR-0255): a stream read again after a
  // restart inserts nothing twice; a run's totals are the sum of its rows, never the blob's.
  `CREATE TABLE usage_events (
     run_id TEXT NOT NULL,
     iid TEXT NOT NULL,
     submission_id TEXT NOT NULL,
     position TEXT NOT NULL,
     prompt_tokens INTEGER,
     cached_tokens INTEGER,
     completion_tokens INTEGER,
     finish_reason TEXT,
     PRIMARY KEY (run_id, iid, submission_id, position)
   );`,
  // 5: run outcomes and the paged, filtered `GET /runs` (ADR-0062): the outcome and the settled
  // state value as columns, listed newest first by index. Older faulted and cancelled runs get
  // their outcome; an older `done` run's is unknown (its blob predates `meta.outcome`): null.
  `ALTER TABLE runs ADD COLUMN outcome TEXT;
   ALTER TABLE runs ADD COLUMN final_state TEXT;
   UPDATE runs SET outcome = status WHERE status IN ('faulted', 'cancelled');
   CREATE INDEX runs_listed ON runs(updated_at DESC, run_id DESC);
   CREATE INDEX runs_status_listed ON runs(status, updated_at DESC, run_id DESC);
   CREATE INDEX runs_workflow_listed ON runs(workflow, updated_at DESC, run_id DESC);
   CREATE INDEX runs_outcome_listed ON runs(outcome, updated_at DESC, run_id DESC);`,
  // 6: the durable event log (ADR-0256): every feed event with its original seq and at, once by
  // (run, seq); the RunBlob never carries it.
  `CREATE TABLE run_events (
     run_id TEXT NOT NULL,
     seq INTEGER NOT NULL,
     at TEXT NOT NULL,
     type TEXT NOT NULL,
     event TEXT NOT NULL,
     PRIMARY KEY (run_id, seq)
   );`,
  // 7: Turn transcripts (ADR-0257): one row per transcript stream event, once by (run, iid,
  // submission, stream position); one record per Turn; each usage row names its Turn.
  `CREATE TABLE transcript_entries (
     run_id TEXT NOT NULL,
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
   CREATE INDEX transcript_entries_turn ON transcript_entries(run_id, turn_id);
   CREATE TABLE turns (
     run_id TEXT NOT NULL,
     turn_id TEXT NOT NULL,
     started_at TEXT NOT NULL,
     record TEXT NOT NULL,
     PRIMARY KEY (run_id, turn_id)
   );
   ALTER TABLE usage_events ADD COLUMN turn_id TEXT;`,
  // 8: a run's saved history (ADR-0270): each save's blob again as a numbered version, with its
  // state value, status and cause, written in the save's transaction.
  `CREATE TABLE run_versions (
     run_id TEXT NOT NULL,
     version INTEGER NOT NULL,
     at TEXT NOT NULL,
     status TEXT NOT NULL,
     value TEXT NOT NULL,
     cause TEXT NOT NULL,
     blob TEXT NOT NULL,
     PRIMARY KEY (run_id, version)
   );`,
  // 9: versions stored compactly (issue 22, ADR-0277): a codec, the key version a delta reads,
  // the packed bytes ('' in blob then), and the reserved per-Repo-Slot commit ids. Older rows:
  // codec NULL, read as they are.
  `ALTER TABLE run_versions ADD COLUMN codec TEXT;
   ALTER TABLE run_versions ADD COLUMN base INTEGER;
   ALTER TABLE run_versions ADD COLUMN packed BLOB;
   ALTER TABLE run_versions ADD COLUMN workspace TEXT;`,
  // 10: run starts' idempotency keys (issue 24 item 6, ADR-0282): a key names its run for 24 h.
  `CREATE TABLE run_start_keys (
     key TEXT PRIMARY KEY,
     run_id TEXT NOT NULL,
     workflow TEXT NOT NULL,
     created_ms INTEGER NOT NULL
   );`,
  // 11: the byte-exact history of a live run's conversations (issue 27, ADR-0176): the parts
  // the Harness streamed, once by (run, iid, sha256), deleted when the run settles.
  `CREATE TABLE conversation_history (
     run_id TEXT NOT NULL,
     iid TEXT NOT NULL,
     sha256 TEXT NOT NULL,
     submission_id TEXT NOT NULL,
     messages TEXT NOT NULL,
     PRIMARY KEY (run_id, iid, sha256)
   );`,
];

/**
 * Applies the migrations `db` lacks, in order, in one transaction.
 * @throws Error naming `path` when the store's schema is newer than this jr2 knows
 */
export function migrate(db: Database.Database, path: string): void {
  db.exec(
    "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)",
  );
  const row = db.prepare<[], { v: number | null }>("SELECT MAX(version) AS v FROM schema_migrations").get();
  const current = row?.v ?? 0;
  if (current > migrations.length) {
    throw new Error(
      `the run store at ${path} is at schema version ${current}, newer than this jr2 knows (${migrations.length}); upgrade jr2`,
    );
  }
  const apply = db.transaction(() => {
    for (let v = current + 1; v <= migrations.length; v++) {
      db.exec(migrations[v - 1]!);
      db.prepare("INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)").run(
        v,
        new Date().toISOString(),
      );
    }
  });
  apply();
}
