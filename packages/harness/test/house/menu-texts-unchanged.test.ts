/**
 * Issue 23 ("Bytes unchanged"): every model-facing text menu.ts renders (menu-texts.ts), and
 * the Harness's public surface — the exports of `@jr2/harness` and its bin path — as on main
 * before the first move (25ab8a6). `menu-texts-pin.json` holds the sha256 of each text; the
 * moves of issue 23 must leave all of it as it is. Re-record only in a commit that names its
 * issue and why the bytes changed: `JR2_WRITE_MENU_TEXTS=1 pnpm vitest run --project unit
 * packages/harness/test/house/menu-texts-unchanged.test.ts`.
 */
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import * as harness from "../../src/index.js";
import * as menu from "../../src/presenters/menu.js";
import { MENU_EXPORTS, menuTexts } from "./menu-texts.js";

const pinUrl = new URL("./menu-texts-pin.json", import.meta.url);
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
const packageJson = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));

function surfaceNow() {
  return {
    menuTexts: Object.fromEntries(
      Object.entries(menuTexts())
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([k, v]) => [k, sha256(v)]),
    ),
    // Value exports with their kind; type-only exports are checked by `pnpm build` of dependants.
    exports: Object.fromEntries(
      Object.keys(harness)
        .sort()
        .map((k) => [k, typeof (harness as Record<string, unknown>)[k]]),
    ),
    bin: packageJson.bin,
    main: packageJson.exports,
  };
}

describe("menu.ts's texts and the Harness's public surface before the house (issue 23)", () => {
  const now = surfaceNow();
  if (process.env.JR2_WRITE_MENU_TEXTS === "1") writeFileSync(pinUrl, `${JSON.stringify(now, null, 2)}\n`);
  const pinned = JSON.parse(readFileSync(pinUrl, "utf8"));

  it("menu-texts.ts calls every export of menu.ts", () => {
    expect(Object.keys(menu).sort()).toEqual([...MENU_EXPORTS].sort());
  });

  it("every text menu.ts renders is byte-identical to the pin", () => {
    expect(Object.keys(now.menuTexts).length).toBeGreaterThan(50);
    expect(now.menuTexts).toEqual(pinned.menuTexts);
  });

  it("the package exports the same names and the same bin path", () => {
    expect(now.exports).toEqual(pinned.exports);
    expect(now.bin).toEqual({ "jr2-harness": "./dist/main.js" });
    expect({ bin: now.bin, main: now.main }).toEqual({ bin: pinned.bin, main: pinned.main });
  });

  it("the built bin is where package.json says and the exports match the source's", async () => {
    const dist = await import(new URL("../../dist/index.js", import.meta.url).href).catch(() => undefined);
    if (dist === undefined) return; // not built: `pnpm build` first (CI builds before tests)
    expect(Object.keys(dist).sort()).toEqual(Object.keys(pinned.exports));
    expect(readFileSync(new URL("../../dist/main.js", import.meta.url), "utf8").length).toBeGreaterThan(0);
  });
});
