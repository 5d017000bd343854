/**
 * The seed's fallback for an engine without `steer` (engine/steer-fallback.ts): the Turn's
 * boundary restatement is not placed between steps but rides the next receipt, once, after the
 * receipt's text; a turn-over receipt carries none. For an engine with `steer` the hooks are the
 * Turn's own, untouched (pi's bytes are pinned by test/integration/house).
 */
import { describe, expect, it } from "vitest";
import type { EngineHooks } from "../../src/engine/engine.js";
import { hooksFor } from "../../src/engine/steer-fallback.js";

const answers = [
  { text: "RECEIPT-ONE", turnOver: false },
  { text: "RECEIPT-TWO", turnOver: false },
];
const turnHooks = (): EngineHooks => {
  const queue = [...answers, { text: "OVER", turnOver: true }];
  return {
    menuCall: async () => queue.shift()!,
    notRun: (_reason, name) => `NOT-RUN ${name}`,
    boundary: async () => "RESTATED",
    outputCut: () => "GO ON",
    usage: () => {},
    retry: () => {},
    trouble: () => {},
    message: () => {},
    workingText: () => "",
    transcript: () => {},
  };
};
const call = { name: "finish", arguments: {}, toolCallId: "c" };

describe("the restatement without steer (seed: it rides the next receipt)", () => {
  it("an engine with steer gets the Turn's hooks as they are", () => {
    const hooks = turnHooks();
    expect(hooksFor({ steer: () => {} }, hooks)).toBe(hooks);
  });

  it("holds the restatement and appends it to the next receipt, once", async () => {
    const hooks = hooksFor({}, turnHooks());
    expect(await hooks.boundary(false)).toBeUndefined();
    expect(await hooks.menuCall(call)).toEqual({ text: "RECEIPT-ONE\nRESTATED", turnOver: false });
    expect(await hooks.menuCall(call)).toEqual({ text: "RECEIPT-TWO", turnOver: false });
    expect(hooks.outputCut()).toBeUndefined();
  });

  it("a not-run receipt carries it too; a turn-over receipt never does", async () => {
    const hooks = hooksFor({}, turnHooks());
    await hooks.boundary(false);
    expect(hooks.notRun("unknown-tool", "ghost")).toBe("NOT-RUN ghost\nRESTATED");
    await hooks.boundary(false);
    await hooks.menuCall(call);
    await hooks.menuCall(call);
    await hooks.boundary(false);
    expect(await hooks.menuCall(call)).toEqual({ text: "OVER", turnOver: true });
  });
});
