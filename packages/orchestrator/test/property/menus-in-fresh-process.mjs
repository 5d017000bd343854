// Rebuilds each Machine spec read from stdin in this fresh process and prints each Menu's
// serialized bytes (for the property test's fresh-process check, SPEC §3.3 / case C3).
import { readFileSync } from "node:fs";
import { createJiti } from "jiti";

const jiti = createJiti(import.meta.url);
const { buildMachine } = await jiti.import("./random-machine.ts");
const { getMenu } = await jiti.import("../../src/index.ts");
const specs = JSON.parse(readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(specs.map((s) => JSON.stringify(getMenu(buildMachine(s), "coder")))));
