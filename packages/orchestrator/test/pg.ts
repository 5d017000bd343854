/**
 * The PostgreSQL suites' database (issue 15): `JR2_TEST_PG_URL` names an admin URL of a
 * throwaway cluster (`scripts/pg-test-cluster.sh`, started by `.ci/run` and
 * `scripts/with-pg.sh`). Each suite gets a fresh database of its own, dropped after it.
 * Without the URL the suites skip — except under `CI=true`, where a missing PostgreSQL fails
 * the run (a skip is not a pass).
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { describe } from "vitest";

/** The admin URL, or undefined when the PostgreSQL suites do not run here. @throws under CI=true without one */
export function pgAdminUrl(): string | undefined {
  const url = process.env.JR2_TEST_PG_URL;
  if (url) return url;
  if (process.env.CI === "true")
    throw new Error(
      "JR2_TEST_PG_URL is not set under CI=true: the PostgreSQL suites cannot run. " +
        "Run them with a throwaway cluster: `bash scripts/with-pg.sh pnpm test` (needs Debian's postgresql).",
    );
  return undefined;
}

/** `describe` when PostgreSQL is available, else `describe.skip` (never under CI=true: it throws). */
export const describePg: typeof describe = pgAdminUrl() ? describe : (describe.skip as typeof describe);

/** A fresh, empty database on the test cluster: its URL, and `drop()` (terminates its sessions). */
export async function freshPgDatabase(
  prefix = "jr2_test",
): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const admin = pgAdminUrl();
  if (!admin) throw new Error("freshPgDatabase: JR2_TEST_PG_URL is not set");
  const name = `${prefix}_${randomBytes(6).toString("hex")}`;
  const client = new pg.Client(admin);
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    async drop() {
      const c = new pg.Client(admin);
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}
