/**
 * The ownership and owed-aborts suites on PostgreSQL (issue 15, ADR-0280): two host instances
 * on one fresh database, each its own store and leases, the paused one made pausable like a
 * SIGSTOPped process. Needs the test cluster (`bash scripts/with-pg.sh …`); skipped without it,
 * failing under CI=true.
 */
import { owedAbortsSuite } from "./owed-aborts-suite.js";
import { ownershipSuite } from "./ownership-suite.js";
import { describePg } from "./pg.js";
import { pgBackend } from "./pg-shared-backend.js";

describePg("run ownership on PostgreSQL (ADR-0280)", () => {
  ownershipSuite(pgBackend);
  owedAbortsSuite(pgBackend);
});
