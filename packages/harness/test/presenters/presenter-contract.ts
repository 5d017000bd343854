/**
 * The contract a {@link Presenter} must pass (ADR-0160, seed ADR-0029), over the example
 * Agents' real Menus (test/house/fixtures/example-menus.json) and menu.ts's real texts: every
 * Menu item presented, in Menu order, its bytes verbatim and the same whatever is allowed; every
 * text it is handed placed unchanged — it composes none of its own. A second presenter adds one
 * `presenterContract(...)` call.
 */
import { readFileSync } from "node:fs";
import type { Tool } from "@jr2/wire";
import { describe, expect, it } from "vitest";
import * as menu from "../../src/presenters/menu.js";
import type { Presenter } from "../../src/presenters/presenter.js";
import { menuTexts } from "../house/menu-texts.js";
import type { ExampleMenus } from "../house/model-bytes.js";

const menus: ExampleMenus = JSON.parse(
  readFileSync(new URL("../house/fixtures/example-menus.json", import.meta.url), "utf8"),
);

export function presenterContract<T, R, M>(name: string, presenter: Presenter<T, R, M>) {
  describe(`the Presenter contract: ${name}`, () => {
    it("presents every Menu item in Menu order, name, description and parameters verbatim", () => {
      for (const [agent, { menu: items }] of Object.entries(menus)) {
        const tools = presenter.tools(items);
        expect(presenter.menuNames(tools), agent).toEqual(items.map((t) => t.name));
        const block = JSON.stringify(tools);
        for (const item of items) {
          expect(block, `${agent}/${item.name}`).toContain(JSON.stringify(item.description));
          expect(block, `${agent}/${item.name}`).toContain(JSON.stringify(item.parameters));
        }
      }
    });

    it("the tools block names no Allowed picks and is the same for every Allowed-picks list", () => {
      for (const { menu: items } of Object.values(menus)) {
        const once = JSON.stringify(presenter.tools(items));
        expect(JSON.stringify(presenter.tools([...items] as Tool[]))).toBe(once);
        expect(once).not.toContain("Allowed now");
      }
    });

    it("places every receipt and text menu.ts writes unchanged, adding no words of its own", () => {
      const texts = Object.values(menuTexts());
      expect(texts.length).toBeGreaterThan(50);
      for (const text of texts) {
        expect(presenter.readReceipt(presenter.placeReceipt(text))).toBe(text);
        expect(presenter.readText(presenter.placeText(text))).toBe(text);
      }
      const restated = menu.restatement(["finish"], ["finish"]);
      expect(presenter.readText(presenter.placeText(restated))).toBe(restated);
    });
  });
}
