/**
 * The console's form validator (ADR-0450): @cfworker/json-schema behind rjsf's validator
 * interface — it refuses what the schema refuses, naming the field, and compiles no code.
 */
import type { RJSFSchema } from "@rjsf/utils";
import { describe, expect, it } from "vitest";
import { cfworkerValidator, validationErrors } from "../src/validator.js";

/** A zod-made Gate payload schema, as `GET /runs/:runId` carries it. */
const reject: RJSFSchema = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  properties: { reason: { type: "string", minLength: 3 }, count: { type: "integer", minimum: 1 } },
  required: ["count"],
  additionalProperties: false,
};

describe("cfworkerValidator", () => {
  it("accepts a valid payload and refuses a wrong one naming the field", () => {
    expect(validationErrors(reject, { count: 2, reason: "too big" })).toEqual([]);
    const wrong = validationErrors(reject, { count: 0, reason: "x" });
    expect(wrong.map((e) => e.property).sort()).toEqual([".count", ".reason"]);
    expect(validationErrors(reject, {}).map((e) => e.name)).toContain("required");
  });

  it("gives rjsf an error schema keyed by field, and a yes/no for isValid", () => {
    const { errors, errorSchema } = cfworkerValidator.validateFormData({ count: "two" }, reject);
    expect(errors.length).toBeGreaterThan(0);
    expect(errorSchema.count?.__errors?.length).toBeGreaterThan(0);
    expect(cfworkerValidator.isValid(reject, { count: 1 }, reject)).toBe(true);
    expect(cfworkerValidator.isValid(reject, { count: 1, extra: true }, reject)).toBe(false);
  });

  it("never builds a function from text (the CSP forbids 'unsafe-eval')", () => {
    const original = globalThis.Function;
    const refuse = new Proxy(original, {
      construct() {
        throw new Error("new Function called");
      },
      apply() {
        throw new Error("Function called");
      },
    });
    globalThis.Function = refuse;
    try {
      expect(
        validationErrors(
          { ...reject, properties: { ...reject.properties, x: { type: "string" as const } } },
          { count: 1 },
        ),
      ).toEqual([]);
    } finally {
      globalThis.Function = original;
    }
  });
});
