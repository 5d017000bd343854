/**
 * zod v4 compiles fast object parsers with `new Function` unless told not to, and probes for
 * it with a `new Function("")` in a try — under the console's CSP that probe is a
 * `securitypolicyviolation`. Jitless: zod interprets, nothing is compiled (ADR-0450).
 * Imported first by main.tsx, before anything parses.
 */
import { z } from "zod";

z.config({ jitless: true });
