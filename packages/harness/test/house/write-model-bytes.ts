// Writes model-bytes-pin.json from this tree (run on main before the house, ef9ea94, with
// fixtures/example-menus.json written there by the Orchestrator's write-example-menus.ts),
// from the repository root: node -e 'require("./packages/orchestrator/node_modules/jiti")
//   .createJiti(process.cwd() + "/").import("./packages/harness/test/house/write-model-bytes.ts")'
import { readFileSync, writeFileSync } from "node:fs";
import { type ExampleMenus, modelBytesNow } from "./model-bytes.js";

const menus: ExampleMenus = JSON.parse(
  readFileSync(new URL("./fixtures/example-menus.json", import.meta.url), "utf8"),
);
const out = process.env.MODEL_BYTES_OUT ?? new URL("./model-bytes-pin.json", import.meta.url);
writeFileSync(out, `${JSON.stringify(await modelBytesNow(menus), null, 2)}\n`);
