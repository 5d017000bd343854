/**
 * Inputs an adversarial reviewer tried on the console (issue 12): a malformed escape in a page
 * URL, a state named `status` holding `running`, a capped transcript field, a token a header
 * cannot carry. Each must read as text or a clear refusal — never a crash, a loop or a guess.
 */
import { TRANSCRIPT_FIELD_CAP_BYTES } from "@jr2/wire";
import { describe, expect, it } from "vitest";
import { isFinalStatus } from "../src/feed-end.js";
import { escapeMarkdown } from "../src/form-text.js";
import { isMissingRoute } from "../src/missing-route.js";
import { unseg } from "../src/route-param.js";
import { tokenProblem } from "../src/token-check.js";
import { cappedText } from "../src/transcript-text.js";

describe("a page URL's parameters", () => {
  it("decode what `seg` (encodeURIComponent) encoded, and a malformed escape is kept as it came, not thrown", () => {
    for (const id of ["run-1", "a/b", "50%", "<script>", "ü ß"])
      expect(unseg(encodeURIComponent(id))).toBe(id);
    // wouter has already run decodeURI: `%25` arrives as `%`, a broken escape as it was.
    expect(() => unseg("100%")).not.toThrow();
    expect(unseg("100%")).toBe("100%");
    expect(unseg("%E0%A4%A")).toBe("%E0%A4%A");
    expect(unseg(undefined)).toBe("");
  });
});

describe("the run feed's last message", () => {
  const status = (status: string, value: unknown) => ({
    event: "status",
    data: JSON.stringify({ seq: 9, at: "2026-01-01T00:00:00Z", type: "status", status, value }),
  });
  it("is a status other than running, read from the event — not from its text", () => {
    expect(isFinalStatus(status("done", "end"))).toBe(true);
    expect(isFinalStatus(status("running", "work"))).toBe(false);
    // A workflow whose state `status` holds a state `running`: its final status is still final.
    expect(isFinalStatus(status("done", { status: "running" }))).toBe(true);
    expect(isFinalStatus(status("cancelled", { status: "running" }))).toBe(true);
  });
  it("is never another event or a message that is not JSON", () => {
    expect(isFinalStatus({ event: "pick", data: '{"status":"done"}' })).toBe(false);
    expect(isFinalStatus({ event: "status", data: "not json" })).toBe(false);
  });
});

describe("a capped transcript field", () => {
  it("says which field was cut and how long it was", () => {
    expect(cappedText(undefined)).toBeNull();
    expect(cappedText({})).toBeNull();
    const note = cappedText({ text: 200_000, reasoning: 70_000 });
    expect(note).toContain(`first ${TRANSCRIPT_FIELD_CAP_BYTES} bytes`);
    expect(note).toContain("text had 200000 bytes");
    expect(note).toContain("reasoning had 70000 bytes");
  });
});

describe("the instance token as entered", () => {
  it("is refused before it is stored when a header cannot carry it", () => {
    expect(tokenProblem("")).toMatch(/Enter the instance token/);
    for (const bad of ["two words", "tab\there", "emoji-🔑-token", "ctl\u0001x", "nul\u0000x"])
      expect(tokenProblem(bad), JSON.stringify(bad)).toMatch(/cannot be sent/);
  });
  it("is sent as it is when a header can carry it (visible Latin-1)", () => {
    for (const good of ["dev", "a1B2-c3_d4.e5~f6!@#$%^&*()", "café-tökén-0123456789"])
      expect(tokenProblem(good), good).toBeNull();
  });
  it("never echoes the token in its words", () => {
    expect(tokenProblem("s3cr3t with-space")).not.toContain("s3cr3t");
  });
});

describe("Markdown escaping of rjsf's messages", () => {
  it("escapes every punctuation character and leaves words alone", () => {
    expect(escapeMarkdown("[a](javascript:x) ![i](y) <b>")).toBe(
      "\\[a\\]\\(javascript\\:x\\) \\!\\[i\\]\\(y\\) \\<b\\>",
    );
    expect(escapeMarkdown("plain words 42")).toBe("plain words 42");
  });
});

describe("a 404 from the transcript routes", () => {
  it("reads as 'no transcripts served' only when the route is missing, not the run or Turn", () => {
    expect(isMissingRoute(404, "JR2_ERR_ROUTE_NOT_FOUND")).toBe(true);
    expect(isMissingRoute(404, "HTTP")).toBe(true);
    expect(isMissingRoute(404, "JR2_ERR_RUN_NOT_FOUND")).toBe(false);
    expect(isMissingRoute(404, "JR2_ERR_TURN_NOT_FOUND")).toBe(false);
    expect(isMissingRoute(400, "JR2_ERR_ROUTE_NOT_FOUND")).toBe(false);
  });
});
