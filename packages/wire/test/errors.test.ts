import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { errorCodeList, errorCodes, FAULT_CAUSE_DOCS, FaultCause, Jr2Error } from "../src/index.js";

const docPath = fileURLToPath(new URL("../../../docs/reference/errors.md", import.meta.url));

describe("the error-code table", () => {
  it("follows JR2_ERR_<AREA>_<WHAT> and maps to a 4xx/5xx status", () => {
    for (const code of errorCodeList) {
      expect(code).toMatch(/^JR2_ERR_[A-Z]+_[A-Z_]+$/);
      expect(errorCodes[code].status).toBeGreaterThanOrEqual(400);
    }
  });

  it("is in step with docs/reference/errors.md, both directions", () => {
    const doc = readFileSync(docPath, "utf8");
    const documented = new Set([...doc.matchAll(/`(JR2_ERR_[A-Z_]+)`/g)].map((m) => m[1]));
    const missingFromDoc = errorCodeList.filter((c) => !documented.has(c));
    const unknownInDoc = [...documented].filter((c) => !(c! in errorCodes));
    expect(missingFromDoc, "codes missing from docs/reference/errors.md").toEqual([]);
    expect(unknownInDoc, "codes in docs/reference/errors.md not in the table").toEqual([]);
    for (const code of errorCodeList) {
      expect(doc, `${code} row states its status`).toMatch(
        new RegExp(`\`${code}\` \\| ${errorCodes[code].status} `),
      );
    }
  });

  it("documents every fault cause with its reason (issue 25)", () => {
    const doc = readFileSync(docPath, "utf8");
    for (const cause of FaultCause.options)
      expect(doc, `${cause} row`).toContain(`| \`${cause}\` | \`${FAULT_CAUSE_DOCS[cause].reason}\` |`);
  });

  it("names the offending value in the message and keeps the fields on the body", () => {
    const err = new Jr2Error("JR2_ERR_WORKFLOW_NOT_FOUND", {
      workflow: "reveiw",
      known: ["review", "triage"],
    });
    expect(err.statusCode).toBe(404);
    expect(err.toBody()).toEqual({
      error: "no workflow `reveiw`; known workflows: review, triage",
      code: "JR2_ERR_WORKFLOW_NOT_FOUND",
      workflow: "reveiw",
      known: ["review", "triage"],
    });
  });
});
