import { describe, expect, it } from "vitest";
import { arrayElements, JsonScanError, objectMembers } from "../../src/index.js";

describe("the raw-span JSON scanner", () => {
  it("finds top-level members and message spans through escapes that look like delimiters", () => {
    const raw =
      '{ "model" : "m",\n "messages": [ {"role":"user","content":"ends in a backslash \\\\"}, {"role":"tool","content":"\\"]},{\\"x\\":1"} ],"n":-1.5e3,"ok":true,"z":null}';
    const members = objectMembers(raw);
    expect(members.map((m) => m.key)).toEqual(["model", "messages", "n", "ok", "z"]);
    const messages = members[1]!;
    const spans = arrayElements(raw, messages.valueSpan);
    expect(spans.map((s) => JSON.parse(raw.slice(s.start, s.end)).role)).toEqual(["user", "tool"]);
    expect(raw.slice(members[2]!.valueSpan.start, members[2]!.valueSpan.end)).toBe("-1.5e3");
  });

  it("decodes escaped keys and keeps the raw key span", () => {
    const raw = '{"mess\\u0061ges":[]}';
    const [m] = objectMembers(raw);
    expect(m?.key).toBe("messages");
    expect(raw.slice(m!.keySpan.start, m!.keySpan.end)).toBe('"mess\\u0061ges"');
  });

  it("refuses text that is not one JSON object, with a coded error", () => {
    for (const bad of ['{"a":"unterminated}', '{"a":1} trailing', "[1,2]", '{"a" 1}', '{"a":1,}']) {
      expect(() => objectMembers(bad)).toThrow(JsonScanError);
    }
    const thrown = (() => {
      try {
        objectMembers('{"a":"x\ny"}');
      } catch (error) {
        return error;
      }
    })();
    expect((thrown as JsonScanError).code).toBe("JR2_ERR_CONFORMANCE_NOT_JSON");
  });
});
