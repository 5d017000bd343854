/**
 * The ownership and owed-aborts suites on PostgreSQL (issue 15, ADR-0280): two host instances
 * on one fresh database, each its own store and leases, the paused one made pausable like a
 * SIGSTOPped process. Needs the test cluster (`bash scripts/with-pg.sh …`); skipped without it,
 * failing under CI=true.
 */
import { openPostgresStore } from "../src/durability/store/postgres.js";
import { owedAbortsSuite } from "./owed-aborts-suite.js";
import { ownershipSuite } from "./ownership-suite.js";
import { describePg, freshPgDatabase } from "./pg.js";
import { pausable, type SharedBackend } from "./shared-store.js";

const pgBackend: SharedBackend = {
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

describePg("run ownership on PostgreSQL (ADR-0280)", () => {
  ownershipSuite(pgBackend);
  owedAbortsSuite(pgBackend);
});
