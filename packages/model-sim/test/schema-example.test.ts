import { exampleFromSchema } from "@jr2/model-sim";
import { describe, expect, it } from "vitest";
import { z } from "zod";

// Tool parameters as zod writes them (the Menu's parameters are z.toJSONSchema(input), SPEC §3.1).
const inputs = {
  approve: z.object({ summary: z.string() }),
  request_changes: z.object({ comments: z.array(z.string().min(12)).min(3).max(4) }),
  escalate: z.object({
    severity: z.enum(["high", "low"]),
    attempts: z.number().int().min(2).max(9),
    ratio: z.number().gt(0.5).lt(1),
    urgent: z.boolean(),
    note: z.string().optional(),
  }),
  verdict: z.object({ kind: z.literal("final"), tags: z.array(z.object({ id: z.string().uuid() })).min(1) }),
  nested: z.object({
    files: z.array(z.object({ path: z.string().min(5), lines: z.array(z.number().int().min(1)) })),
  }),
  either: z.object({ target: z.union([z.object({ branch: z.string() }), z.object({ tag: z.number() })]) }),
  nullable: z.object({ reviewer: z.string().nullable() }),
  empty: z.object({}),
};

describe("exampleFromSchema", () => {
  for (const [name, input] of Object.entries(inputs)) {
    it(`generates arguments that satisfy the ${name} tool's own schema`, () => {
      const value = exampleFromSchema(z.toJSONSchema(input));
      const result = input.safeParse(value);
      expect(result.success, JSON.stringify(result.error?.issues)).toBe(true);
    });
  }

  it("fills only required properties and follows local $refs", () => {
    expect(
      exampleFromSchema({
        type: "object",
        $defs: { name: { type: "string", minLength: 10 } },
        properties: { who: { $ref: "#/$defs/name" }, why: { type: "string" } },
        required: ["who"],
      }),
    ).toEqual({ who: "example who" });
  });

  it("answers {} for absent parameters", () => {
    expect(exampleFromSchema(undefined)).toEqual({});
  });
});
