// `pnpm bench:soak`'s store measurements (bench/soak.mjs): the SQLite store's size, and each
// workflow's share of it, read on read-only connections.
import { statSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { ROOT } from "./lib.mjs";

const Database = createRequire(join(ROOT, "packages/orchestrator/package.json"))("better-sqlite3");

/**
 * The store's size: its pages (`page_count × page_size`, read on a read-only connection, so the
 * WAL's committed frames count and the WAL file's high-water mark does not), and the files on disk.
 */
export function storeSize(dataDir) {
  let disk = 0;
  for (const name of ["jr2.sqlite", "jr2.sqlite-wal"]) {
    try {
      disk += statSync(join(dataDir, name)).size;
    } catch {}
  }
  const db = new Database(join(dataDir, "jr2.sqlite"), { readonly: true, fileMustExist: true });
  try {
    const pages = db.pragma("page_count", { simple: true });
    const pageSize = db.pragma("page_size", { simple: true });
    return { bytes: pages * pageSize, disk };
  } finally {
    db.close();
  }
}

/**
 * Per workflow (issue 22 §4): each table's bytes of its runs (the sum of their rows' lengths,
 * `length()` of every column), per run; `store pages/run` is the workflow's share of the file's
 * pages (its rows' bytes over all rows' bytes) per run. Read on a read-only connection.
 */
export function perWorkflowStore(dataDir, runIdsByWorkflow) {
  const db = new Database(join(dataDir, "jr2.sqlite"), { readonly: true, fileMustExist: true });
  try {
    const pages = db.pragma("page_count", { simple: true });
    const tables = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
      .all()
      .map((t) => ({ name: t.name, columns: db.pragma(`table_info(${t.name})`).map((c) => c.name) }))
      .filter((t) => t.columns.includes("run_id"));
    /** table → runId → bytes */
    const bytes = new Map();
    for (const t of tables) {
      const sum = t.columns.map((c) => `COALESCE(length("${c}"), 0)`).join(" + ");
      const rows = db
        .prepare(`SELECT run_id AS runId, SUM(${sum}) AS n FROM "${t.name}" GROUP BY run_id`)
        .all();
      bytes.set(t.name, new Map(rows.map((r) => [r.runId, r.n])));
    }
    const total = [...bytes.values()].reduce((a, m) => a + [...m.values()].reduce((x, y) => x + y, 0), 0);
    return Object.entries(runIdsByWorkflow).map(([workflow, runIds]) => {
      const of = (table) => runIds.reduce((a, id) => a + (bytes.get(table)?.get(id) ?? 0), 0);
      const all = tables.reduce((a, t) => a + of(t.name), 0);
      const per = (n) => Math.round(n / Math.max(1, runIds.length));
      return {
        workflow,
        runs: runIds.length,
        "store pages/run": ((pages * all) / Math.max(1, total) / Math.max(1, runIds.length)).toFixed(2),
        "row bytes/run": per(all),
        "run_versions B/run": per(of("run_versions")),
        "transcript B/run": per(of("transcript_entries")),
        "run_events B/run": per(of("run_events")),
        "versions/run": (
          runIds.reduce(
            (a, id) => a + db.prepare("SELECT count(*) AS n FROM run_versions WHERE run_id = ?").get(id).n,
            0,
          ) / Math.max(1, runIds.length)
        ).toFixed(1),
      };
    });
  } finally {
    db.close();
  }
}
