/**
 * Issue 14 ("Bytes unchanged"), the Harness side: the house must not change a byte the model
 * reads — a changed tools block or Briefing would break every provider's prefix cache and change
 * what the model is told. `model-bytes-pin.json` was written at ef9ea94 (main before the
 * house's first move) by `write-model-bytes.ts`; the Menus it presents
 * (`fixtures/example-menus.json`, by the Orchestrator's `test/house/write-example-menus.ts`)
 * are the ones whose sha256 the Orchestrator's `bytes-pin.json` pins. Regenerate (at ef9ea94
 * only), from the repository root:
 *   node -e 'require("./packages/orchestrator/node_modules/jiti").createJiti(process.cwd() + "/")
 *     .import("./packages/orchestrator/test/house/write-example-menus.ts")'
 *   node -e 'require("./packages/orchestrator/node_modules/jiti").createJiti(process.cwd() + "/")
 *     .import("./packages/harness/test/house/write-model-bytes.ts")'
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { type ExampleMenus, modelBytesNow } from "./model-bytes.js";

const read = (url: URL) => JSON.parse(readFileSync(url, "utf8"));
const menus: ExampleMenus = read(new URL("./fixtures/example-menus.json", import.meta.url));
const pinned: Record<string, string> = read(new URL("./model-bytes-pin.json", import.meta.url));
const orchestratorPin = read(new URL("../../../orchestrator/test/house/bytes-pin.json", import.meta.url));

describe("the bytes the Harness sent the model before the house (issue 14)", () => {
  it("presents the Menus the Orchestrator's pin holds", () => {
    const hashes = Object.fromEntries(
      Object.entries(menus).map(([k, { menu }]) => [
        k,
        createHash("sha256").update(JSON.stringify(menu)).digest("hex"),
      ]),
    );
    expect(hashes).toEqual(orchestratorPin.menus);
  });

  it("every tools block, system prompt, Turn part, Allowed line, restatement, nudge and receipt is unchanged", async () => {
    expect(await modelBytesNow(menus)).toEqual(pinned);
  });
});
