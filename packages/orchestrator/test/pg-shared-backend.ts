/**
 * PostgreSQL as a {@link SharedBackend} (ADR-0280): two instances `A` and `B` on one fresh
 * database, each its own store and leases, made pausable like a SIGSTOPped process, and a
 * third store that reads without a lease. Needs `JR2_TEST_PG_URL` (test/pg.ts).
 */
import { openPostgresStore } from "../src/durability/store/postgres.js";
import { freshPgDatabase } from "./pg.js";
import { pausable, type SharedBackend } from "./shared-store.js";

export const pgBackend: SharedBackend = {
  name: "PostgreSQL",
  async open(leaseMs) {
    const db = await freshPgDatabase("jr2_owner");
    const open = (id: string) =>
      openPostgresStore(db.url, {
        instanceId: id,
        advertiseUrl: `http://${id}.invalid`,
        leaseMs,
        poolMax: 4,
      });
    const [a, b, reader] = await Promise.all([open("A"), open("B"), open("reader")]);
    return {
      storeA: pausable(a),
      storeB: pausable(b),
      reader,
      async done() {
        // The hosts closed A's and B's stores; a second close is harmless.
        for (const s of [a, b, reader]) await s.close().catch(() => {});
        await db.drop();
      },
    };
  },
};
