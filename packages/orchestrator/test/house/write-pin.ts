// Writes bytes-pin.json from this tree (run once, on main before the house's first move), from
// the repository root: node -e 'require("./packages/orchestrator/node_modules/jiti")
//   .createJiti(process.cwd() + "/").import("./packages/orchestrator/test/house/write-pin.ts")'
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { loadWorkflows } from "../../src/index.js";
import { pinNow } from "./pin.js";

const examples = fileURLToPath(new URL("../fixtures/plain-review", import.meta.url));
const pin = await pinNow(await loadWorkflows(examples));
writeFileSync(new URL("./bytes-pin.json", import.meta.url), `${JSON.stringify(pin, null, 2)}\n`);
