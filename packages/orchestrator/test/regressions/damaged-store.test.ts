/**
 * Issue 16 item 3 — one damaged row must not brick start-up, and a damaged or foreign store
 * file is refused naming its path and what to do.
 * Root cause: restore decoded every row with a bare `JSON.parse` and re-saved a blob without
 * checking it (`{not json` → `Expected property name…`; a blob without `workflow` →
 * `Missing named parameter "workflow"`), ending `jr2 serve`; the store's open ran SQLite as is,
 * so `file is not a database` / `database disk image is malformed` / `no such table: runs`
 * named no file; a 0-byte file was taken for a new store and the history was silently gone.
 * Field case: none (found by the adversarial pass of issue 16).
 */
import {
  closeSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it, vi } from "vitest";
import { storeCommands } from "../../src/cli/store-commands.js";
import { backupStore, checkStore } from "../../src/durability/store/maintenance.js";
import {
  openSqliteStore,
  STORE_FILE,
  STORE_MARKER,
  storeFileError,
} from "../../src/durability/store/sqlite.js";
import { createRunHost } from "../../src/index.js";
import { machine } from "./fixtures/notes/notes.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  vi.restoreAllMocks();
});
function tempDir() {
  const dir = mkdtempSync(join(tmpdir(), "jr2-damaged-"));
  dirs.push(dir);
  return dir;
}
const workflows = new Map([["notes", machine]]);

/** A data dir holding two live runs of `notes`, the store closed. */
async function twoRuns() {
  const dir = tempDir();
  const host = createRunHost({ workflows, store: openSqliteStore(dir) });
  const a = (await host.startRun("notes", {})).runId;
  const b = (await host.startRun("notes", {})).runId;
  await host.close();
  return { dir, a, b };
}
function tamper(dir: string, sql: string, ...params: unknown[]) {
  const db = new Database(join(dir, STORE_FILE));
  db.prepare(sql).run(...params);
  db.close();
}

describe("one damaged row (issue 16 item 3)", () => {
  it.each([
    ["an undecodable blob", "{not json", /not JSON/],
    ["a blob missing its workflow", JSON.stringify({ runId: "X", status: "running" }), /lacks `workflow`/],
  ])("%s: that run is reported faulted by id, the other is restored", async (_name, blob, reason) => {
    const { dir, a, b } = await twoRuns();
    tamper(dir, "UPDATE runs SET blob = ? WHERE run_id = ?", blob.replace("X", a), a);
    const host = createRunHost({ workflows, store: openSqliteStore(dir) });
    const report = await host.restore();
    expect(report.damaged).toEqual([{ runId: a, reason: expect.stringMatching(reason) }]);
    expect(report.restored).toEqual([b]);
    expect(await host.getRun(a)).toMatchObject({
      status: "faulted",
      fault: { reason: expect.stringMatching(reason) },
    });
    expect((await host.getRun(b)).turns).toHaveLength(1);
    await host.close();
    // The damaged row is quarantined as it was, for a backup or a fix to read.
    const db = new Database(join(dir, STORE_FILE), { readonly: true });
    expect(db.prepare("SELECT blob FROM runs WHERE run_id = ?").get(a)).toEqual({
      blob: blob.replace("X", a),
    });
    db.close();
    // `jr2 store check` names it and exits 1.
    const check = checkStore(join(dir, STORE_FILE));
    expect(check).toMatchObject({ ok: false, runs: 2, damaged: [{ runId: a }] });
  });
});

describe("a damaged or foreign store file (issue 16 item 3)", () => {
  const refusal = (dir: string) => {
    try {
      openSqliteStore(dir);
    } catch (error) {
      return (error as Error).message;
    }
    return "opened";
  };
  const remedy = /restore a backup.*move it aside|move the file aside.*restore a backup/s;

  it("not a database: refused naming the path and the remedy", () => {
    const dir = tempDir();
    writeFileSync(join(dir, STORE_FILE), "this is not sqlite at all, just some text bytes ".repeat(100));
    const message = refusal(dir);
    expect(message).toContain(join(dir, STORE_FILE));
    expect(message).toMatch(/not a SQLite database/);
    expect(message).toMatch(remedy);
  });

  it("a malformed database: refused naming the path and the remedy", async () => {
    const { dir } = await twoRuns();
    const db = new Database(join(dir, STORE_FILE));
    db.pragma("wal_checkpoint(TRUNCATE)");
    db.close();
    // Pages 2.. overwritten with garbage (the header stays): a b-tree page SQLite cannot read.
    const fd = openSync(join(dir, STORE_FILE), "r+");
    const size = statSync(join(dir, STORE_FILE)).size;
    writeSync(fd, Buffer.alloc(size - 4096, 0xa5), 0, size - 4096, 4096);
    closeSync(fd);
    const message = refusal(dir);
    expect(message).toContain(join(dir, STORE_FILE));
    expect(message).toMatch(/damaged|malformed/);
    expect(message).toMatch(remedy);
  });

  it("a jr2 store whose runs table is gone: refused as not a jr2 store", async () => {
    const { dir } = await twoRuns();
    tamper(dir, "DROP TABLE runs");
    const message = refusal(dir);
    expect(message).toMatch(/no such table: runs/);
    expect(message).toMatch(/not a jr2 store/);
    expect(message).toMatch(remedy);
  });

  it("another program's SQLite file: refused, never migrated into", () => {
    const dir = tempDir();
    const db = new Database(join(dir, STORE_FILE));
    db.exec("CREATE TABLE invoices (id INTEGER PRIMARY KEY); INSERT INTO invoices VALUES (1)");
    db.close();
    expect(refusal(dir)).toMatch(/not a jr2 store.*holds invoices/s);
    const after = new Database(join(dir, STORE_FILE), { readonly: true });
    expect(after.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all()).toEqual([
      { name: "invoices" },
    ]);
    after.close();
  });

  it("a disk I/O error is named as such, with the path", () => {
    const error = Object.assign(new Error("disk I/O error"), { code: "SQLITE_IOERR_READ" });
    expect(storeFileError("/data/jr2.sqlite", error).message).toMatch(
      /\/data\/jr2\.sqlite: the disk failed while reading it \(disk I\/O error, SQLITE_IOERR_READ\).*restore a backup/s,
    );
  });
});

describe("an empty store where one was (issue 16 item 3)", () => {
  it("a 0-byte or missing file in a data dir with jr2's marker is refused unless --new-store", async () => {
    const { dir } = await twoRuns();
    expect(readFileSync(join(dir, STORE_MARKER), "utf8")).toContain(STORE_FILE);
    for (const f of [STORE_FILE, `${STORE_FILE}-wal`, `${STORE_FILE}-shm`])
      rmSync(join(dir, f), { force: true });
    expect(() => openSqliteStore(dir)).toThrow(/is missing, but .*marker.*--new-store/s);
    writeFileSync(join(dir, STORE_FILE), "");
    expect(() => openSqliteStore(dir)).toThrow(/is empty \(0 bytes\).*restore a backup.*--new-store/is);
    const fresh = openSqliteStore(dir, { newStore: true });
    expect(await fresh.list()).toEqual([]);
    await fresh.close();
  });

  it("a new data dir starts a new store (and writes the marker)", async () => {
    const dir = tempDir();
    const store = openSqliteStore(dir);
    expect(await store.list()).toEqual([]);
    await store.close();
    expect(statSync(join(dir, STORE_MARKER)).isFile()).toBe(true);
  });
});

describe("jr2 store check and jr2 store backup (issue 16 item 3)", () => {
  it("backs up online to a 0600 file that restores every run; check exits 0 on it and 1 on a damaged store", async () => {
    const dir = tempDir();
    const host = createRunHost({ workflows, store: openSqliteStore(dir) });
    const { runId } = await host.startRun("notes", {});
    const out: string[] = [];
    vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
      out.push(String(chunk));
      return true;
    });
    const backup = join(tempDir(), "jr2-backup.sqlite");
    // While the service holds the store open (WAL, uncheckpointed).
    expect(await storeCommands.store!.run(["backup", backup, "--data-dir", dir])).toBe(0);
    expect(statSync(backup).mode & 0o777).toBe(0o600);
    await expect(backupStore(join(dir, STORE_FILE), backup)).rejects.toThrow(/exists/);
    expect(await storeCommands.store!.run(["check", "--file", backup])).toBe(0);
    expect(out.join("")).toMatch(/integrity ok\n1 runs \(1 live\), 0 damaged/);
    await host.close();

    // The restore path of the README: the backup copied in as jr2.sqlite of a data dir.
    const restored = tempDir();
    writeFileSync(join(restored, STORE_FILE), readFileSync(backup));
    const again = createRunHost({ workflows, store: openSqliteStore(restored) });
    expect((await again.restore()).restored).toEqual([runId]);
    await again.close();

    tamper(dir, "UPDATE runs SET blob = '{not json' WHERE run_id = ?", runId);
    expect(await storeCommands.store!.run(["check", "--data-dir", dir])).toBe(1);
    expect(out.join("")).toContain(`damaged run \`${runId}\`: its blob is not JSON`);
  });

  // Found by the newcomer pass: the other commands default to ./.data (where `pnpm start` writes);
  // `store check` asked for --data-dir instead.
  it("reads ./.data by default, like every other command, and names the default when it holds no store", async () => {
    const home = tempDir();
    const cwd = process.cwd();
    const dataDir = process.env.JR2_DATA_DIR;
    delete process.env.JR2_DATA_DIR;
    vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    try {
      process.chdir(home);
      await expect(storeCommands.store!.run(["check"])).rejects.toThrow(/no store at \.data\/jr2\.sqlite/);
      const host = createRunHost({ workflows, store: openSqliteStore(join(home, ".data")) });
      await host.startRun("notes", {});
      await host.close();
      expect(await storeCommands.store!.run(["check"])).toBe(0);
    } finally {
      process.chdir(cwd);
      if (dataDir !== undefined) process.env.JR2_DATA_DIR = dataDir;
    }
  });
});
