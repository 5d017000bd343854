/**
 * What only the PostgreSQL store has (ADR-0280): several instances on one database — the claim
 * on a run's first save, the fence, lease expiry and adoption with a bumped epoch, letting go,
 * a write racing an adoption, notices of `(runId, seq)` across instances, migrations applied by
 * two opens at once, and a password that appears in no log line nor error. Needs the test
 * cluster (JR2_TEST_PG_URL; `bash scripts/with-pg.sh …`).
 */
import type { RunFeedEvent } from "@jr2/wire";
import pg from "pg";
import { expect, it } from "vitest";
import { FencedError } from "../src/durability/store/ownership.js";
import { POSTGRES_SCHEMA_VERSION } from "../src/durability/store/postgres-migrations.js";
import type { RunBlob } from "../src/durability/store/run-store.js";
import { describePg, freshPgDatabase } from "./pg.js";
import { pgInstances } from "./pg-instances.js";

const LEASE_MS = 300;

function blob(runId: string, patch: Partial<RunBlob> = {}): RunBlob {
  return {
    runId,
    workflow: "review",
    machineFingerprint: "fp1",
    status: "running",
    snapshot: { value: "implement", context: {} },
    input: {},
    ledger: {},
    epochs: {},
    timers: [],
    usage: { promptTokens: 0, cachedTokens: 0, completionTokens: 0 },
    createdAt: "2026-11-30T00:00:00.000Z",
    updatedAt: "2026-11-30T00:00:00.000Z",
    ...patch,
  };
}

const event = (seq: number, secret = "event data"): RunFeedEvent => ({
  seq,
  at: "2026-11-30T00:00:00.000Z",
  type: "status",
  status: "running",
  value: secret,
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function eventually(check: () => boolean | Promise<boolean>, ms = 5_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error("condition not met in time");
    await sleep(20);
  }
}

describePg("the PostgreSQL store shared by several instances (ADR-0280)", () => {
  const pgs = pgInstances("jr2_shared", LEASE_MS);
  const { lines, runId } = pgs;
  const instance = pgs.instance.bind(pgs);

  it("claims a run on its first save; another instance's save of it is fenced and commits nothing", async () => {
    const a = await instance("A");
    const b = await instance("B");
    const id = runId();
    await a.save(blob(id), [], [], [event(0)]);
    expect(a.ownership.holds(id)).toBe(true);
    expect(b.ownership.holds(id)).toBe(false);
    expect(await b.ownership.holder(id)).toMatchObject({
      runId: id,
      instanceId: "A",
      epoch: 1,
      expired: false,
    });
    const theirs = blob(id, { updatedAt: "2026-12-01T00:00:00.000Z", status: "done" });
    await expect(b.save(theirs, [], [], [event(1)])).rejects.toThrow(FencedError);
    await expect(b.appendEvents(id, [event(2)])).rejects.toThrow(FencedError);
    await expect(
      b.recordUsage(id, [
        { iid: "i", submissionId: "s", position: "0", promptTokens: 1, cachedTokens: 0, completionTokens: 1 },
      ]),
    ).rejects.toThrow(FencedError);
    expect(await a.load(id)).toEqual(blob(id));
    expect(await a.lastEventSeq(id)).toBe(0);
    expect(await a.versions(id)).toHaveLength(1);
    expect(await a.usage(id)).toEqual([]);
    expect((await a.ownership.holder(id))?.instanceId).toBe("A");
  });

  it("after the lease expires another instance adopts the run with a bumped epoch; the old owner lets go", async () => {
    const a = await instance("A");
    const b = await instance("B", { leaseMs: 1_000 });
    const id = runId();
    await a.save(blob(id));
    await sleep(LEASE_MS + 150);
    expect(a.ownership.holds(id)).toBe(false); // by its own clock, before any I/O
    const { adopted } = await b.ownership.adopt(["review"]);
    expect(adopted.map((r) => r.runId)).toContain(id);
    expect(adopted.find((r) => r.runId === id)).toEqual(blob(id));
    expect(await b.ownership.holder(id)).toMatchObject({ instanceId: "B", epoch: 2, expired: false });
    expect(b.ownership.holds(id)).toBe(true);
    expect(await a.ownership.renew()).toEqual({ lost: [id] });
    await expect(a.save(blob(id, { updatedAt: "2026-12-01T00:00:00.000Z" }))).rejects.toThrow(FencedError);
    expect(a.ownership.holds(id)).toBe(false);
    await b.save(blob(id, { updatedAt: "2026-12-02T00:00:00.000Z" }));
    expect((await b.load(id))?.updatedAt).toBe("2026-12-02T00:00:00.000Z");
    // A renewal keeps B's lease alive past its length (1 s).
    await sleep(600);
    expect(await b.ownership.renew()).toEqual({ lost: [] });
    await sleep(600);
    expect(b.ownership.holds(id)).toBe(true);
    expect((await a.ownership.adopt(["review"])).adopted.map((r) => r.runId)).not.toContain(id);
  });

  it("a write fenced after a lost lease is refused before renew() reports it", async () => {
    const a = await instance("A");
    const b = await instance("B");
    const id = runId();
    await a.save(blob(id));
    await sleep(LEASE_MS + 100);
    await b.ownership.adopt(["review"]);
    await expect(a.appendEvents(id, [event(5)])).rejects.toMatchObject({
      name: "FencedError",
      runId: id,
      epoch: 1,
    });
    expect(await a.lastEventSeq(id)).toBeUndefined();
    expect(await a.ownership.renew()).toEqual({ lost: [] }); // already forgotten by the fenced write
  });

  it("a graceful stop expires its leases: a peer adopts at once, not a lease length later", async () => {
    const a = await instance("A", { leaseMs: 60_000 });
    const b = await instance("B", { leaseMs: 60_000 });
    const id = runId();
    await a.save(blob(id, { workflow: "graceful" }));
    expect((await b.ownership.adopt(["graceful"])).adopted).toEqual([]);
    await a.ownership.relinquish();
    expect(a.ownership.holds(id)).toBe(false);
    await sleep(5); // the database's now() moves past the expiry
    expect((await b.ownership.adopt(["graceful"])).adopted.map((r) => r.runId)).toEqual([id]);
    await expect(a.save(blob(id, { workflow: "graceful" }))).rejects.toBeInstanceOf(FencedError);
  });

  it("adopts only runs of the workflows listed, and never a live lease", async () => {
    const a = await instance("A");
    const b = await instance("B");
    const c = await instance("C", { leaseMs: 60_000 });
    const other = runId();
    const live = runId();
    await a.save(blob(other, { workflow: "elsewhere" }));
    await c.save(blob(live)); // a lease that does not expire during the test
    await sleep(LEASE_MS + 100);
    const { adopted } = await b.ownership.adopt(["review"]);
    expect(adopted.map((r) => r.runId)).not.toContain(other);
    expect(adopted.map((r) => r.runId)).not.toContain(live);
    expect(await b.ownership.holder(other)).toMatchObject({ instanceId: "A", expired: true });
    expect(await b.ownership.adopt([])).toEqual({ adopted: [], damaged: [] });
  });

  it("a restarted instance with the same id adopts its own leases at once; a damaged blob is reported", async () => {
    const a = await instance("A", { leaseMs: 60_000 });
    const id = runId();
    const bad = runId();
    await a.save(blob(id));
    await a.save(blob(bad));
    await a.pool.query("UPDATE runs SET blob = 'nope' WHERE run_id = $1", [bad]);
    const again = await instance("A", { leaseMs: 60_000 });
    const adoption = await again.ownership.adopt(["review"]);
    expect(adoption.adopted.map((r) => r.runId)).toContain(id);
    expect(adoption.damaged).toEqual([{ runId: bad, reason: expect.stringContaining(`run \`${bad}\``) }]);
    expect(await again.ownership.holder(id)).toMatchObject({ instanceId: "A", epoch: 2 });
    await expect(a.save(blob(id))).rejects.toThrow(FencedError);
    // The adopter does not adopt what it holds already.
    expect((await again.ownership.adopt(["review"])).adopted.map((r) => r.runId)).not.toContain(id);
  });

  it("two live processes given the same JR2_INSTANCE_ID do not take a run back and forth", async () => {
    // A restart takes over its own leases once (its first adoption); after that, a lease row
    // naming this id that this process does not hold is another live process's (a second
    // instance misconfigured with the same id), never re-taken: the run stays with one of them.
    const first = await instance("same", { leaseMs: 60_000 });
    await first.ownership.adopt(["dup"]); // its start-up restore
    const id = runId();
    await first.save(blob(id, { workflow: "dup" })); // a workflow of its own: no other test's runs
    const second = await instance("same", { leaseMs: 60_000 });
    expect((await second.ownership.adopt(["dup"])).adopted.map((r) => r.runId)).toEqual([id]);
    expect((await first.ownership.renew()).lost).toEqual([id]);
    for (let tick = 0; tick < 3; tick++) {
      expect((await first.ownership.adopt(["dup"])).adopted).toEqual([]);
      expect((await second.ownership.renew()).lost).toEqual([]);
      expect((await second.ownership.adopt(["dup"])).adopted).toEqual([]);
    }
    expect(await second.ownership.holder(id)).toMatchObject({ instanceId: "same", epoch: 2 });
  });

  it("a settling save deletes the lease row; release expires it (kept); a settled run is claimed anew", async () => {
    const a = await instance("A");
    const b = await instance("B");
    const id = runId();
    await a.save(blob(id));
    await a.save(blob(id, { status: "done", outcome: "succeeded" }));
    expect(await a.ownership.holder(id)).toBeUndefined();
    expect(a.ownership.holds(id)).toBe(false);
    await b.save(blob(id, { updatedAt: "2026-12-01T00:00:00.000Z" })); // a resume on B
    expect(await b.ownership.holder(id)).toMatchObject({ instanceId: "B", epoch: 1 });
    await b.ownership.release(id);
    // Kept, expired: the run is moving (not settled) until adopted, and the adopter bumps the epoch.
    expect(await b.ownership.holder(id)).toMatchObject({ instanceId: "B", epoch: 1, expired: true });
    expect(b.ownership.holds(id)).toBe(false);
    expect((await a.ownership.adopt(["review"])).adopted.map((r) => r.runId)).toContain(id);
    expect(await a.ownership.holder(id)).toMatchObject({ instanceId: "A", epoch: 2 });
    await a.ownership.release("never-held");
  });

  it("a write under way when an adoption runs commits first (the adoption waits for its row lock)", async () => {
    const a = await instance("A");
    const b = await instance("B");
    const id = runId();
    await a.save(blob(id));
    await sleep(LEASE_MS + 100);
    // A write transaction of A's, paused after its fence (a raw session: no idle timeout).
    const writer = new pg.Client(pgs.db.url);
    await writer.connect();
    try {
      await writer.query("BEGIN");
      const fence = await writer.query(
        "SELECT 1 FROM run_leases WHERE run_id = $1 AND owner_id = 'A' AND epoch = 1 FOR SHARE",
        [id],
      );
      expect(fence.rowCount).toBe(1);
      let adopted: RunBlob[] | undefined;
      const adoption = b.ownership.adopt(["review"]).then((r) => (adopted = r.adopted));
      await sleep(200);
      expect(adopted).toBeUndefined();
      await writer.query("UPDATE runs SET blob = $2 WHERE run_id = $1", [
        id,
        JSON.stringify(blob(id, { updatedAt: "late" })),
      ]);
      await writer.query("COMMIT");
      await adoption;
      expect(adopted?.find((r) => r.runId === id)?.updatedAt).toBe("late");
    } finally {
      await writer.end();
    }
  });

  it("an adoption waiting on a save that settles the run does not keep a lease on it", async () => {
    const a = await instance("A");
    const b = await instance("B");
    const id = runId();
    await a.save(blob(id));
    await sleep(LEASE_MS + 100);
    const writer = new pg.Client(pgs.db.url);
    await writer.connect();
    try {
      await writer.query("BEGIN");
      await writer.query(
        "SELECT 1 FROM run_leases WHERE run_id = $1 AND owner_id = 'A' AND epoch = 1 FOR SHARE",
        [id],
      );
      const done = blob(id, { status: "done", outcome: "succeeded" });
      await writer.query("UPDATE runs SET status = 'done', blob = $2 WHERE run_id = $1", [
        id,
        JSON.stringify(done),
      ]);
      await writer.query("DELETE FROM run_leases WHERE run_id = $1", [id]);
      const adoption = b.ownership.adopt(["review"]);
      await sleep(150);
      await writer.query("COMMIT");
      expect((await adoption).adopted.map((r) => r.runId)).not.toContain(id);
      expect(await b.ownership.holder(id)).toBeUndefined();
      expect(b.ownership.holds(id)).toBe(false);
    } finally {
      await writer.end();
    }
  });

  it("a save racing an adoption either commits before it or is fenced, never in between", async () => {
    const a = await instance("A");
    const b = await instance("B");
    const ids = [runId(), runId(), runId(), runId(), runId()];
    for (const id of ids) await a.save(blob(id));
    await sleep(LEASE_MS + 100);
    const saves = ids.map((id) =>
      a.save(blob(id, { updatedAt: "racing" }), [], [], [event(1)]).then(
        () => "committed" as const,
        (error: unknown) => (error instanceof FencedError ? ("fenced" as const) : Promise.reject(error)),
      ),
    );
    const { adopted } = await b.ownership.adopt(["review"]);
    const outcomes = await Promise.all(saves);
    for (const [i, id] of ids.entries()) {
      const taken = adopted.find((r) => r.runId === id);
      expect(taken).toBeDefined();
      const stored = await b.load(id);
      if (outcomes[i] === "committed") {
        expect(taken?.updatedAt).toBe("racing"); // read after the claim: the write came first
        expect(await b.lastEventSeq(id)).toBe(1);
      } else {
        expect(stored?.updatedAt).toBe("2026-11-30T00:00:00.000Z");
        expect(await b.lastEventSeq(id)).toBeUndefined();
        expect(await b.versions(id)).toHaveLength(1);
      }
    }
  });

  it("tells (runId, seq) of committed events to subscribers on every instance, never event data", async () => {
    const a = await instance("A");
    const b = await instance("B");
    const id = `${runId()} with space`;
    const raw = new pg.Client(pgs.db.url);
    await raw.connect();
    const payloads: string[] = [];
    raw.on("notification", (m) => payloads.push(m.payload ?? ""));
    await raw.query("LISTEN jr2_events");
    try {
      const seen: number[] = [];
      const stop = b.notices.subscribe(id, (seq) => seen.push(seq));
      await a.save(blob(id), [], [], [event(0, "SECRET-1"), event(1, "SECRET-1")]);
      await a.appendEvents(id, [event(2, "SECRET-2")]);
      await eventually(() => seen.includes(2));
      expect(seen).toEqual([1, 2]);
      await eventually(() => payloads.length >= 2);
      expect(payloads).toEqual([`${id} 1`, `${id} 2`]);
      expect(payloads.join()).not.toContain("SECRET");
      // A failed save notifies nothing (the notice goes at commit).
      await expect(b.appendEvents(id, [event(3)])).rejects.toThrow(FencedError);
      stop();
      await a.appendEvents(id, [event(4)]);
      await eventually(() => payloads.length >= 3);
      expect(payloads[2]).toBe(`${id} 4`);
      expect(seen).toEqual([1, 2]);
    } finally {
      await raw.end();
    }
  });

  it("reopens a dropped LISTEN connection and tells each subscriber the newest seq (no notice lost)", async () => {
    const a = await instance("A");
    const b = await instance("B");
    const id = runId();
    const seen: number[] = [];
    b.notices.subscribe(id, (seq) => seen.push(seq));
    await a.save(blob(id), [], [], [event(0)]);
    await eventually(() => seen.includes(0));
    await a.pool.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'jr2-notices' AND datname = current_database()",
    );
    await a.appendEvents(id, [event(1), event(2)]); // likely while both listeners are down
    await eventually(() => seen.includes(2), 10_000);
    expect(lines.some((l) => l.includes("LISTEN connection dropped"))).toBe(true);
    await a.appendEvents(id, [event(3)]);
    await eventually(() => seen.includes(3));
  });

  it("refuses a part the database cannot store and commits nothing of the save", async () => {
    const a = await instance("A");
    const id = runId();
    await expect(a.save(blob(id), [], [], [event(2 ** 40)])).rejects.toThrow(/out of range/);
    expect(await a.load(id)).toBeUndefined();
    expect(await a.ownership.holder(id)).toBeUndefined();
    expect(a.ownership.holds(id)).toBe(false);
    await a.save(blob(id));
    expect(a.ownership.holds(id)).toBe(true);
  });

  it("sets the sessions' idle-in-transaction and statement timeouts", async () => {
    const a = await instance("A");
    const { rows } = await a.pool.query(
      "SELECT current_setting('idle_in_transaction_session_timeout') AS idle, current_setting('statement_timeout') AS stmt",
    );
    expect(rows[0]).toEqual({ idle: "1s", stmt: "30s" }); // the lease, at least 1 s
    const long = await instance("L", { leaseMs: 20_000 });
    const { rows: longRows } = await long.pool.query(
      "SELECT current_setting('idle_in_transaction_session_timeout') AS idle, current_setting('statement_timeout') AS stmt",
    );
    expect(longRows[0]).toEqual({ idle: "20s", stmt: "40s" });
  });

  it("applies the migrations once when two instances open a new database together; refuses a newer schema", async () => {
    const fresh = await freshPgDatabase("jr2_migrate");
    try {
      const [x, y] = await Promise.all([instance("X", {}, fresh.url), instance("Y", {}, fresh.url)]);
      const { rows } = await x.pool.query<{ version: number }>(
        "SELECT version FROM schema_migrations ORDER BY version",
      );
      expect(rows.map((r) => r.version)).toEqual(
        Array.from({ length: POSTGRES_SCHEMA_VERSION }, (_, i) => i + 1),
      );
      await y.pool.query("INSERT INTO schema_migrations (version) VALUES (999)");
      await expect(instance("Z", {}, fresh.url)).rejects.toThrow(
        /schema version 999, newer than this jr2 knows.*upgrade jr2/,
      );
    } finally {
      await pgs.closeAll();
      await fresh.drop();
    }
  });

  it("names host, port and database but never the password, in errors and log lines", async () => {
    const refusedBy = (p: Promise<unknown>) =>
      p.then(
        () => new Error("accepted"),
        (e: unknown) => e as Error,
      );
    const url = new URL(pgs.db.url);
    const password = decodeURIComponent(url.password);
    expect(password.length).toBeGreaterThan(8);
    const wrong = new URL(pgs.db.url);
    wrong.password = `${password}x`;
    const refused = await refusedBy(instance("A", {}, wrong.toString()));
    expect(refused.message).toContain(`host 127.0.0.1, port ${url.port}, database ${pgs.db.name}`);
    expect(refused.message).toContain("postgres://postgres:***@");
    expect(refused.message).not.toContain(password);
    const closed = new URL(pgs.db.url);
    closed.port = "1";
    const unreachable = await refusedBy(instance("A", {}, closed.toString()));
    expect(unreachable.message).toMatch(/cannot reach the run store .*port 1, .*ECONNREFUSED/);
    expect(unreachable.message).not.toContain(password);
    const bad = await refusedBy(instance("A", {}, `postgres://u:${password}@/`));
    expect(bad.message).toMatch(/JR2_STORE_URL/);
    expect(bad.message).not.toContain(password);
    // A write whose database went away rejects (never hangs), without the password.
    const scratch = await freshPgDatabase("jr2_gone");
    const doomed = await instance("D", {}, scratch.url);
    await doomed.save(blob("r"));
    await scratch.drop();
    const failed = await refusedBy(doomed.save(blob("r")));
    expect(failed.message).not.toBe("accepted");
    expect(failed.message).not.toContain(password);
    expect(lines.join("\n")).not.toContain(password);
  });
});
