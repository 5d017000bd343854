// Writes packages/harness/test/house/fixtures/example-menus.json: each example Agent's Menu and
// definition, which the Harness's model-bytes pin presents (the Harness cannot import the
// Orchestrator). Written from ef9ea94 (main before the house's first move), from the root:
// node -e 'require("./packages/orchestrator/node_modules/jiti")
//   .createJiti(process.cwd() + "/").import("./packages/orchestrator/test/house/write-example-menus.ts")'
// then `npx biome check --write packages/harness/test/house` (biome puts short arrays on one line).
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { getMenu, loadWorkflows, machineInfoOf } from "../../src/index.js";

const examples = fileURLToPath(new URL("../fixtures/plain-review", import.meta.url));
const out = new URL("../../../harness/test/house/fixtures/example-menus.json", import.meta.url);
const menus: Record<string, { definition: unknown; menu: unknown }> = {};
for (const [name, machine] of await loadWorkflows(examples)) {
  for (const { path, machine: nested } of machineInfoOf(machine).machines) {
    const agents = machineInfoOf(nested).agents;
    for (const agentName of Object.keys(agents).sort())
      menus[`${name}${path ? `/${path}` : ""}/${agentName}`] = {
        definition: agents[agentName]!.definition,
        menu: getMenu(nested, agentName),
      };
  }
}
writeFileSync(out, `${JSON.stringify(menus, null, 2)}\n`);
