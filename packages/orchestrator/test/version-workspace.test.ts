/**
 * The versions' reserved `workspace` field (issue 22, filled by issue 28 §3, ADR-0219), in every
 * store: a version saved with Repo-Slot commits in its blob (`repoCommits`) lists them by
 * `<workspace>/<slot>`, listed and read whole; a version saved before any commit has none. Before
 * ADR-0219 no store wrote the column, so `GET /runs/:id/history` never showed a commit.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgresStore } from "../src/durability/store/postgres.js";
import { createMemoryStore, type RunBlob, type RunStore } from "../src/durability/store/run-store.js";
import { openSqliteStore } from "../src/durability/store/sqlite.js";
import { describePg, freshPgDatabase } from "./pg.js";
import { reviewBlob } from "./store/review-blob.js";

const commit = "c".repeat(40);

const blob = (patch: Partial<RunBlob> = {}): RunBlob => reviewBlob("r1", patch);

function contract(open: () => Promise<RunStore>) {
  it("a version lists the Repo-Slot commits recorded at or before it; one before any lists none", async () => {
    const store = await open();
    await store.save(blob(), [], [], []);
    await store.save(
      blob({ repoCommits: { "code/app": commit }, updatedAt: "2026-11-30T00:00:01.000Z" }),
      [],
      [],
      [],
    );
    const [first, second] = await store.versions("r1");
    expect(first?.workspace).toBeUndefined();
    expect(second?.workspace).toEqual({ "code/app": commit });
    expect((await store.version("r1", 2))?.workspace).toEqual({ "code/app": commit });
  });
}

describe("the memory store fills a version's workspace", () => {
  contract(async () => createMemoryStore());
});

describe("the SQLite store fills a version's workspace", () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  contract(async () => {
    const dir = mkdtempSync(join(tmpdir(), "jr2-version-workspace-"));
    dirs.push(dir);
    return openSqliteStore(dir);
  });
});

describePg("the PostgreSQL store fills a version's workspace", () => {
  let db: Awaited<ReturnType<typeof freshPgDatabase>>;
  beforeAll(async () => {
    db = await freshPgDatabase("jr2_version_ws");
  });
  afterAll(async () => {
    await db?.drop();
  });
  contract(() =>
    openPostgresStore(db.url, { instanceId: "ws", advertiseUrl: "http://127.0.0.1:1", poolMax: 2 }),
  );
});
