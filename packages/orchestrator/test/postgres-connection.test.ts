/**
 * The PostgreSQL store's connection (issue 15, ADR-0280): its URL and the password — named in no
 * error nor log line, whatever the password holds or however the connection fails — the
 * sessions' timeouts (also under a URL's own `options`), and the migrations: applied once by two
 * opens at once, a newer schema refused, an open killed mid-migration leaving the database to the
 * next. Needs the test cluster (JR2_TEST_PG_URL).
 */
import pg from "pg";
import { expect, it } from "vitest";
import { parseStoreUrl } from "../src/durability/store/postgres-connection.js";
import { POSTGRES_SCHEMA_VERSION } from "../src/durability/store/postgres-migrations.js";
import { describePg, freshPgDatabase } from "./pg.js";
import { pgInstances } from "./pg-instances.js";
import { blob, eventually, LEASE_MS, refusal } from "./pg-store-fixture.js";

describePg("the PostgreSQL store's URL, sessions and migrations (ADR-0280)", () => {
  const pgs = pgInstances("jr2_connection", LEASE_MS);
  const { lines, runId } = pgs;
  const instance = pgs.instance.bind(pgs);

  it("names host, port and database but never the password, in errors and log lines", async () => {
    const url = new URL(pgs.db.url);
    const password = decodeURIComponent(url.password);
    expect(password.length).toBeGreaterThan(8);
    const wrong = new URL(pgs.db.url);
    wrong.password = `${password}x`;
    const refused = await refusal(instance("A", {}, wrong.toString()));
    expect(refused.message).toContain(`host 127.0.0.1, port ${url.port}, database ${pgs.db.name}`);
    expect(refused.message).toContain("postgres://postgres:***@");
    expect(refused.message).not.toContain(password);
    const closed = new URL(pgs.db.url);
    closed.port = "1";
    const unreachable = await refusal(instance("A", {}, closed.toString()));
    expect(unreachable.message).toMatch(/cannot reach the run store .*port 1, .*ECONNREFUSED/);
    expect(unreachable.message).not.toContain(password);
    const bad = await refusal(instance("A", {}, `postgres://u:${password}@/`));
    expect(bad.message).toMatch(/JR2_STORE_URL/);
    expect(bad.message).not.toContain(password);
    // A write whose database went away rejects (never hangs), without the password.
    const scratch = await freshPgDatabase("jr2_gone");
    const doomed = await instance("D", {}, scratch.url);
    await doomed.save(blob("r"));
    await scratch.drop();
    const failed = await refusal(doomed.save(blob("r")));
    expect(failed.message).not.toBe("accepted");
    expect(failed.message).not.toContain(password);
    expect(lines.join("\n")).not.toContain(password);
  });

  it("never names the password: a password with `/`, a raw `%`, `%`-encoded chars, DNS and SSL failures", async () => {
    const url = new URL(pgs.db.url);
    const password = decodeURIComponent(url.password);
    const hostPort = `${url.hostname}:${url.port}`;
    const slash = `postgres://postgres:se/cr3tpw@${hostPort}/${pgs.db.name}`;
    const bad = await refusal(instance("A", {}, slash));
    expect(bad.message).toMatch(/JR2_STORE_URL/);
    expect(bad.message).not.toContain("cr3tpw");
    expect(() => parseStoreUrl(`postgres://u:pa/ss?x#y@h/db?password=${password}`)).toThrow(/JR2_STORE_URL/);
    try {
      parseStoreUrl(`postgres://u:pa/ss?x#y@h/d b?password=${password}`);
    } catch (error) {
      expect((error as Error).message).not.toContain(password);
      expect((error as Error).message).not.toContain("pa/ss");
    }
    const rawPercent = await refusal(
      instance("A", {}, `postgres://postgres:pw%zzsecret@${hostPort}/${pgs.db.name}`),
    );
    expect(rawPercent.message).toMatch(/cannot reach the run store .*28P01/);
    expect(rawPercent.message).not.toContain("zzsecret");
    const encoded = await refusal(
      instance("A", {}, `postgres://postgres:p%40ss%2Fw0rd%25x@${hostPort}/${pgs.db.name}`),
    );
    expect(encoded.message).toMatch(/password authentication failed/);
    expect(encoded.message).not.toMatch(/p@ss\/w0rd%x|p%40ss%2Fw0rd/);
    const dns = await refusal(
      instance("A", {}, `postgres://postgres:${url.password}@no-such-host.invalid:5999/${pgs.db.name}`),
    );
    expect(dns.message).toMatch(/cannot reach the run store .*ENOTFOUND/);
    expect(dns.message).not.toContain(password);
    const ssl = await refusal(instance("A", {}, `${pgs.db.url}?sslmode=require`));
    expect(ssl.message).toMatch(/cannot reach the run store .*SSL/);
    expect(ssl.message).not.toContain(password);
    expect(lines.join("\n")).not.toContain(password);
    const a = await instance("A");
    expect(JSON.stringify({ store: a.where })).not.toContain(password);
    expect(a.where.url).toBe(pgs.db.url);
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

  it("keeps its session timeouts when JR2_STORE_URL carries its own `options` (e.g. a search_path)", async () => {
    const a = await instance("A", {}, `${pgs.db.url}?options=${encodeURIComponent("-c search_path=public")}`);
    const { rows } = await a.pool.query(
      "SELECT current_setting('idle_in_transaction_session_timeout') AS idle, current_setting('search_path') AS path",
    );
    expect(rows[0]).toEqual({ idle: "1s", path: "public" });
    await a.save(blob(runId()));
  });

  it("an open killed during its migration leaves the database to the next open", async () => {
    const fresh = await freshPgDatabase("jr2_half");
    const admin = new pg.Client(fresh.url);
    await admin.connect();
    try {
      await admin.query("SELECT pg_advisory_lock($1)", [0x6a7232]); // the next open waits in its migration
      const opening = refusal(instance("H", {}, fresh.url));
      await eventually(async () => {
        const { rows } = await admin.query(
          "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()",
        );
        if (rows.length === 0) return false;
        await admin.query("SELECT pg_terminate_backend($1)", [rows[0].pid]);
        return true;
      });
      expect((await opening).message).not.toBe("accepted");
      await admin.query("SELECT pg_advisory_unlock($1)", [0x6a7232]);
      const again = await instance("H", {}, fresh.url);
      await again.save(blob("h-1"));
      expect(await again.load("h-1")).toEqual(blob("h-1"));
    } finally {
      await admin.end();
      await pgs.closeAll();
      await fresh.drop();
    }
  });
});
