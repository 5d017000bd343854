/** The ownership suite (ownership-suite.ts) on the shared-store double; PostgreSQL: run-ownership-pg.test.ts. */
import { ownershipSuite } from "./ownership-suite.js";
import { doubleBackend } from "./shared-store.js";

ownershipSuite(doubleBackend);
