/** The owed-aborts suite (owed-aborts-suite.ts) on the shared-store double and a memory store. */
import { owedAbortsSuite } from "./owed-aborts-suite.js";
import { doubleBackend } from "./shared-store.js";

owedAbortsSuite(doubleBackend);
